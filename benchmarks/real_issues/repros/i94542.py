import torch
x = torch.tensor(5, device="cuda")
torch.lgamma(x)
