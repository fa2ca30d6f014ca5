# REPL transcript turned into a script (In [15]-[17]); `import torch` added
import torch
x = torch.eye(512).div(500000)
print(x.slogdet())
print(x.logdet())
