# t.py from the shell transcript
import torch

x: torch.Tensor = torch.randn(2,3,4)
y: torch.Tensor = x.narrow(0, 2, dim=1)
