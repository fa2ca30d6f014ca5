import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        h = self.norm(self.proj(x))
        if h.mean().item() > 0:  # data-dependent branch: a graph break
            h = h * 2
        return torch.sigmoid(h)


def run(dim=64, batch=4):
    model = Gate(dim).eval()
    compiled = torch.compile(model, fullgraph=True)
    x = torch.randn(batch, dim)
    with torch.no_grad():
        out = compiled(x)
    print(out.shape)


if __name__ == "__main__":
    run()
