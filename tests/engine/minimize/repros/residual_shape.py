import argparse
import logging

import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO)


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)) + x)  # no projection when cin != cout


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(16, 16), Block(16, 32))
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.blocks(x).mean((2, 3)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args([])
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        loss = model(torch.randn(args.batch, 16, 32, 32)).sum()
        loss.backward()
        opt.step()
        logging.info("step %d", step)


if __name__ == "__main__":
    main()
