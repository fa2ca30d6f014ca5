# probe (not the script): print what the call returns
import torch
x = torch.tensor([10., 20., 30.])
idx = torch.tensor([9])
print(torch.take_along_dim(x, idx, dim=0))
