# REPL transcript (>>> lines) turned into a script; the echoed expression printed
import torch
a = torch.randn(5, 12, 64, 64)
print(a.transpose(1, 0))
