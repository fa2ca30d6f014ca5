import torch
x = torch.randn(4)
assert torch.allclose((x - x.mean()) / x.var().sqrt(), torch.nn.functional.layer_norm(x, [4]))
