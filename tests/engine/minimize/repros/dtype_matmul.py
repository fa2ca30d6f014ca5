import numpy as np
import torch
import torch.nn as nn


def load_features(n=128, d=20):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, d))  # float64


class Regressor(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


features = torch.from_numpy(load_features())
targets = features.sum(1).float()
model = Regressor(features.shape[1])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(features), targets)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
