import torch
print(torch.fft.rfftn(torch.arange(0,7,1)).shape)
