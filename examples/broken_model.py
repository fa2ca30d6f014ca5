"""A small training script with a bug: the classifier head expects 64 features, the encoder
gives 48. Try: scrub repro examples/broken_model.py; scrub minimize examples/broken_model.py"""

import torch
from torch import nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, width: int = 48) -> None:
        super().__init__()
        self.conv = nn.Conv1d(4, width, kernel_size=3, padding=1)
        self.pool = nn.AdaptiveAvgPool1d(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(self.conv(x))).flatten(1)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(64, 10)  # bug: the encoder's width is 48

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs, labels = torch.randn(8, 4, 32), torch.randint(0, 10, (8,))
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.3f}")
