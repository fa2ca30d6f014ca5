import torch
@torch.compile(fullgraph=True, backend='eager')
def f(x):
    if x.item() > 1.0:
        pass
f(torch.ones(1))
