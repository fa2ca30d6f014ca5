import torch

torch.set_default_device(device='cuda:0')
torch.get_default_device() # Error
