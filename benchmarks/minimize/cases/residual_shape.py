"""Train a small ResNet-style classifier on synthetic images.

Reported: training crashes at the first forward pass of stage 2.
"""
import argparse
import logging
import math
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
logger = logging.getLogger("resnet")
os.environ.setdefault("OMP_NUM_THREADS", "1")


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.dropout = nn.Dropout2d(0.1)
        # BUG: no projection when the channel count changes
        self.shortcut = nn.Identity()

    def forward(self, x):
        identity = self.shortcut(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.dropout(out)
        out = self.bn2(self.conv2(out))
        out = out + identity
        return F.relu(out)


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10, width=32):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
        )
        self.stage1 = nn.Sequential(ResidualBlock(width, width), ResidualBlock(width, width))
        self.stage2 = nn.Sequential(ResidualBlock(width, width * 2), ResidualBlock(width * 2, width * 2))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(width * 2, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.stage1(x)
        x = self.stage2(x)
        x = self.pool(x).flatten(1)
        return self.head(x)


def make_data(n, image_size):
    images = torch.randn(n, 3, image_size, image_size)
    labels = torch.randint(0, 10, (n,))
    return TensorDataset(images, labels)


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            preds = model(images).argmax(dim=1)
            correct += (preds == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def train(args):
    seed_everything(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SmallResNet(width=args.width).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loader = DataLoader(make_data(args.samples, args.image_size), batch_size=args.batch_size, shuffle=True)
    for epoch in range(args.epochs):
        model.train()
        started = time.time()
        running = 0.0
        for step, (images, labels) in enumerate(loader):
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            running += loss.item()
            if step % 10 == 0:
                logger.info("epoch %d step %d loss %.3f", epoch, step, loss.item())
        scheduler.step()
        accuracy = evaluate(model, loader)
        logger.info("epoch %d done in %.1fs, acc %.3f, avg loss %.3f", epoch, time.time() - started,
                    accuracy, running / max(len(loader), 1))
        if math.isnan(running):
            raise RuntimeError("training diverged")
    return model


def parse_args():
    parser = argparse.ArgumentParser(description="small resnet")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args([])


if __name__ == "__main__":
    train(parse_args())
