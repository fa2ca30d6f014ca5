import torch

self = torch.full((10, 10, 10,), 9.0072e+15, dtype=torch.double)
dim = [4194304]
normalization = 4
onesided = False
torch._fft_r2c(self, dim, normalization, onesided)
