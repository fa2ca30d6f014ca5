import torch as th
x = th.tensor([0.5449, 0.4241, 0.4691, 0.6471, 0.5243])
print(x.argsort())
print(th.__version__)
