# the body's script, with the two results printed (the '#### Output' block shows them)
import torch

x = torch.arange(-10, 10, step=0.5)

y_1 = torch.nn.RReLU(x)

y_2 = torch.rrelu(x)
print(y_1)
print(y_2)
