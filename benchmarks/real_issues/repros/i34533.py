import torch
torch.exp(torch.tensor([1.0, 2.0]))
