import torch
import torch.nn.functional as F
x = torch.randn(4)
assert torch.allclose((x - x.mean()) * torch.rsqrt(x.pow(2).mean()), F.layer_norm(x, [4]))
