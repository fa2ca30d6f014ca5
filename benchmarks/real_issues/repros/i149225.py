import torch
a = torch.tensor([1.0, 2.0, 3.0])
b = torch.tensor([1.0, 2.0, 3.0 + 1e-9])
assert not torch.allclose(a, b, rtol=0, atol=0)
