# imports added (torch, Variable)
import torch
from torch.autograd import Variable
x = Variable(torch.ones((5,5)))
print(torch.diag(x)) # prints diag
print(torch.diag(x,2)) # still prints middle diag
print(torch.diag(x.data, 2)) # prints correct diag
