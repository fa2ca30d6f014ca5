# hand probe for #31110 (the script needs matplotlib and shows a plot): print the values around the threshold
import math
import torch

beta, threshold = 10, 0.4
softplus = torch.nn.Softplus(beta=beta, threshold=threshold)
for v in (0.03, 0.04, 0.05, 0.3, 0.4):
    x = torch.tensor(v)
    print(v, softplus(x).item(), math.log1p(math.exp(beta * v)) / beta)
