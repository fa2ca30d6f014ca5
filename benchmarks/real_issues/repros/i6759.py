import torch
a = torch.Tensor(range(10))
a.chunk(0)
