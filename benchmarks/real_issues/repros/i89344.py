import torch
m = torch.nn.AdaptiveAvgPool1d(5)
input = [torch.randn(1, 64),]
print(m(*input))
