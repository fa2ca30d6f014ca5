import torch
import torch.nn as nn

net = nn.Sequential(
  nn.InstanceNorm2d(1),
  nn.ReLU(True)
)

x = torch.randn(1, 1, 1, 1, requires_grad=True)

g, = torch.autograd.grad(net(x).pow(2), [x], create_graph=True)
torch.autograd.grad(g.sum(), [x])
