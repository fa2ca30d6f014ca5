import torch

self = torch.full((1, 1, 1,), 0, dtype=torch.cdouble)
dim = [36028797018963968]
normalization = 1250999896764
forward = False
torch._fft_c2c(self, dim, normalization, forward)
