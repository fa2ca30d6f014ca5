import torch
torch.ones(2) + torch.ones(4)
