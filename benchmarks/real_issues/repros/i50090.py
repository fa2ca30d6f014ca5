import torch
from torch import tensor
torch.native_layer_norm(tensor([1.0,2,3,4,5]), tensor([1.0]), tensor([1.,2,3,4,5]), 213, 1, 5.280893892284248)
