import torch
from torch.func import grad

def f(x):
    return (0.5 * x**2).sum()


x = torch.randn(10)

f(x) # This works
print(torch.allclose(grad(f)(x), x)) # This works

fjit = torch.compile(grad(f))
fjit(x) # Error, see below
print("ok")
