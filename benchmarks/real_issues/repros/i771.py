import torch
import torch.nn as nn
from torch.autograd import Variable

pool = nn.MaxPool1d(kernel_size=3, stride=2, return_indices=True)
unpool = nn.MaxUnpool1d(kernel_size=3, stride=2)
input = Variable(torch.rand(32,128,263))
output, inx = pool(input)
input_ = unpool(output,inx)
