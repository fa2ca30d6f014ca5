# probe (not the script): the same call on the CPU
import torch
x = torch.tensor([2**-10], dtype=torch.float16)
exp = torch.tensor([20], dtype=torch.float16)
print(torch.ldexp(x, exp))
