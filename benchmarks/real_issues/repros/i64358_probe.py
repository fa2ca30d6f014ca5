# probe (not the script): the evident intent, torch.randn(a, b, 1, 1)
import torch

a = 32
b = 256
A = torch.randn(a, b, 1, 1)
A_p = torch.linalg.matrix_power(A, 0)

assert torch.all(A_p == torch.ones(a, b, 1, 1))
print("all ones")
