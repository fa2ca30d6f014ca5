import torch as th
import torch.nn as nn

layer = nn.InstanceNorm2d(3)
layer.eval()

layer(th.rand(1, 3, 2, 2)) # works fine - expected 
layer(th.rand(2, 3, 1, 1)) # works fine - expected for silent behavior
layer(th.rand(1, 3, 1, 1)) # error - not expected for silent behavior
