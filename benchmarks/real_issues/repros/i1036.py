# IPython transcript (In [3]-[7]) turned into a script; `import torch` added; the index the
# report calls wrong printed next to the one from the clone
import torch
x = torch.rand(10,10)
y = x[:, 2]                ## this is a selected tensor
print(torch.max(y, 0))
y2 = x[:, 2].clone()     ## same data with previous y
print(torch.max(y2, 0))
print(y)
