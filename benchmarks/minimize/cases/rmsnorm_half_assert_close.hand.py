import torch
import torch.nn.functional as F
x = torch.full((1, 2), 400.0)
h = x.half()
torch.testing.assert_close((h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True))).float(), F.rms_norm(x, (2,)))
