"""Fit a small MLP regressor on tabular features loaded with NumPy.

Reported: RuntimeError about dtypes in the first linear layer.
"""
import argparse
import logging
import os
import time

import numpy as np
import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger("tabular")
os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
torch.backends.cudnn.benchmark = False


def make_features(n_rows, n_features, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_rows, n_features))  # float64
    weights = rng.normal(size=(n_features,))
    y = x @ weights + 0.1 * rng.normal(size=n_rows)
    return x, y


def standardize(x):
    mean = x.mean(axis=0, keepdims=True)
    std = x.std(axis=0, keepdims=True) + 1e-6
    return (x - mean) / std


class MLP(nn.Module):
    def __init__(self, in_features, hidden=(256, 128, 64), dropout=0.1):
        super().__init__()
        layers = []
        prev = in_features
        for width in hidden:
            layers += [nn.Linear(prev, width), nn.LayerNorm(width), nn.GELU(), nn.Dropout(dropout)]
            prev = width
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(prev, 1)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(-1)


class EarlyStopping:
    def __init__(self, patience=3):
        self.patience = patience
        self.best = float("inf")
        self.bad_epochs = 0

    def step(self, value):
        if value < self.best:
            self.best = value
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def iterate(x, y, batch_size):
    for start in range(0, len(x), batch_size):
        yield x[start:start + batch_size], y[start:start + batch_size]


def run(args):
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, y = make_features(args.rows, args.features, args.seed)
    x = standardize(x)
    split = int(0.8 * len(x))
    # BUG: torch.from_numpy keeps float64; the model is float32
    x_train = torch.from_numpy(x[:split]).to(device)
    y_train = torch.from_numpy(y[:split]).float().to(device)
    x_val = torch.from_numpy(x[split:]).to(device)
    y_val = torch.from_numpy(y[split:]).float().to(device)
    model = MLP(args.features, dropout=args.dropout).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    stopper = EarlyStopping(patience=args.patience)
    loss_fn = nn.MSELoss()
    for epoch in range(args.epochs):
        started = time.perf_counter()
        model.train()
        for xb, yb in iterate(x_train, y_train, args.batch_size):
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val_loss = loss_fn(model(x_val), y_val).item()
        logger.info("epoch %d val %.4f (%.2fs)", epoch, val_loss, time.perf_counter() - started)
        if stopper.step(val_loss):
            logger.info("early stop at epoch %d", epoch)
            break
    torch.save(model.state_dict(), "/tmp/mlp.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    run(parser.parse_args([]))
