import torch

def g(x):
    y = torch.zeros_like(x)
    y[:, 0] += x[:, 2].abs()
    y[:, 0] += x[:, 2].abs()
    return y.sum()


def f(x):
    return torch.func.grad(g)(x)


@torch.compile(backend='inductor', fullgraph=True)
def h(x):
    return f(x)

x = torch.randn(2, 3)
print(f(x))
# tensor([[ 0.,  0., -2.],
#         [ 0.,  0.,  2.]])
print(h(x))
# tensor([[ 0.,  0., -1.],
#         [ 0.,  0.,  1.]])
