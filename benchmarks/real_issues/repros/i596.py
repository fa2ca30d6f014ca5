import torch
import torch.nn.functional as F
from torch.autograd import Variable

a=F.sigmoid(torch.randn(10,1))

#This is OK
a.bernoulli()

#This is OK also
b=a.cuda()
b.bernoulli()

#This is OK
va=Variable(a)
va.bernoulli()

#This is a bug !
vb=Variable(a).cuda()
vb.bernoulli()

