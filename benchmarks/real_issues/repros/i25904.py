import math, torch
print(torch.exp(torch.Tensor([0, math.log(2)])))
