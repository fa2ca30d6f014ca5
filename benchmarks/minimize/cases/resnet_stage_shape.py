"""Train a ResNet-18-style classifier built from a stage table: the crash is in one block of eight.

Shape of the held-out report in issue #26 (a residual-block shape mismatch that the earlier
minimizer kept at 14 lines) and of torchvision's BasicBlock contract (a block that strides or
changes width needs a `downsample` projection, pytorch/vision#2018): here the shortcut is made
only when the width changes, so the first block of a stage that strides at the same width adds
an un-strided identity to a strided output.
Reported: `RuntimeError: The size of tensor a (8) must match the size of tensor b (16) at
non-singleton dimension 3` in the first training step.
"""
import argparse
import logging
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
log = logging.getLogger("resnet")

# (width, blocks, stride) per stage, as in ResNet-18 but narrower
STAGES = [(16, 2, 1), (32, 2, 2), (32, 2, 2), (64, 2, 2)]


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = conv3x3(cin, cout, stride)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = conv3x3(cout, cout)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Identity()
        if cin != cout:  # BUG: also needed when stride != 1
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, stages, classes=10):
        super().__init__()
        self.stem = nn.Sequential(conv3x3(3, stages[0][0]), nn.BatchNorm2d(stages[0][0]), nn.ReLU())
        layers, cin = [], stages[0][0]
        for width, blocks, stride in stages:
            for index in range(blocks):
                layers.append(BasicBlock(cin, width, stride if index == 0 else 1))
                cin = width
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def synthetic_cifar(n, size=32):
    images = torch.randn(n, 3, size, size)
    labels = torch.randint(0, 10, (n,))
    return TensorDataset(images, labels)


def train_epoch(model, loader, optimizer):
    model.train()
    total, started = 0.0, time.time()
    for images, labels in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(labels)
    log.info("epoch took %.1fs", time.time() - started)
    return total / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args([])
    seed_everything(0)
    model = ResNet(STAGES)
    log.info("%d parameters", sum(p.numel() for p in model.parameters()))
    loader = DataLoader(synthetic_cifar(64), batch_size=args.batch_size, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    for epoch in range(args.epochs):
        loss = train_epoch(model, loader, optimizer)
        log.info("epoch %d loss %.4f", epoch, loss)
    torch.save(model.state_dict(), "/tmp/resnet.pt")


if __name__ == "__main__":
    main()
