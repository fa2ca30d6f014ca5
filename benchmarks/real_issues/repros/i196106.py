import torch
x = torch.tensor([10., 20., 30.])          # size 3 along dim 0 (valid: 0..2 or -3..-1)
idx = torch.tensor([9])                     # out of bounds

torch.take_along_dim(x, idx, dim=0)         # -> tensor([10.])   (silently returns x[9 % 3])
