import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_grad_enabled(False)
from torch._inductor import config

config.fallback_random = True


class Model(torch.nn.Module):

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        a, b = torch.frexp(x)
        return b


model = Model().cuda()

x = torch.Tensor([float("inf")]).cuda()

inputs = [x]

output = model(*inputs)

c_model = torch.compile(model)
c_output = c_model(*inputs)
print(output)
print(c_output)
