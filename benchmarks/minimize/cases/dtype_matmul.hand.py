import torch
torch.nn.Linear(1, 1)(torch.ones(1, dtype=torch.double))
