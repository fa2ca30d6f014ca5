import numpy as np
import torch
import torch.nn.functional as F

x = 1
y = 0
theta = 0
G = F.affine_grid(
    torch.FloatTensor([
        [[np.cos(theta), -np.sin(theta), x],
         [np.sin(theta), np.cos(theta), y]]
    ]),
    torch.Size((1, 1, 100, 200))
)[0]
print(G.size())
print(G[:, :, 0])
print(G[:, :, 1])
