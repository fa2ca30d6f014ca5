import torch
a = torch.rand(3)
torch.log1p(a)
