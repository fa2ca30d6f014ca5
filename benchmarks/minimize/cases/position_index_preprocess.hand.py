import torch
torch.nn.Embedding(1, 1)(torch.tensor([1]))
