import torch

self = torch.full((2,), 1, dtype=torch.int64, requires_grad=False)
n = 1250999896764
sobolstate = torch.full((2, 30,), 1, dtype=torch.int64, requires_grad=False)
dimension = 1250999896764
num_generated = 0
torch._sobol_engine_ff_(self, n, sobolstate, dimension, num_generated)
