# inline backtick spans joined into a script; `import torch` added; the print lines use names
# (eig_val, eig_vec) that the assignment does not define (eig_value, eig_vector): kept as written
import torch
a = torch.tensor([[-1,0,0],
                 [0,2,0],
                 [0,0,-11]], dtype=torch.double)
eig_value, eig_vector = torch.linalg.eigh(a)
print("eig_val",eig_val)
print("eig_vec",eig_vec)
