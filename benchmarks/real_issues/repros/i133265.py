import torch
x = torch.tensor([2**-10], dtype=torch.float16, device='cuda')
exp = torch.tensor([20], dtype=torch.float16, device='cuda')

torch.ldexp(x, exp)
