"""A hand-written label-smoothed cross entropy checked against F.cross_entropy.

Source: shivamsaboo17/Overcoming-Catastrophic-forgetting-in-Neural-Networks#5 ("by indexing
output[:, target] we will create a 100x100 matrix, instead of gathering the log-likelihoods
100x1 that we desire"). Bug: `log_probs[:, targets]` picks every sample's log-probability of
every target, not each sample's own; the mean hides the shape.
Keep: log_softmax, [index], cross_entropy
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def smoothed_nll(logits, targets, smoothing):
    log_probs = F.log_softmax(logits, dim=-1)
    nll = -log_probs[:, targets]  # BUG: (batch, batch); should be log_probs[range(batch), targets]
    uniform = -log_probs.mean(dim=-1)
    return ((1 - smoothing) * nll + smoothing * uniform.unsqueeze(1)).mean()


class Classifier(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, x):
        return self.body(x)


def check_loss(model, x, targets, smoothing):
    logits = model(x)
    ours = smoothed_nll(logits, targets, smoothing)
    reference = F.cross_entropy(logits, targets, label_smoothing=smoothing)
    print(f"smoothing={smoothing}: ours {ours.item():.5f} reference {reference.item():.5f}")
    assert torch.allclose(ours, reference, atol=1e-6)
    return ours


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--classes", type=int, default=5)
    args = parser.parse_args([])
    torch.manual_seed(0)
    model = Classifier(12, args.classes)
    x = torch.randn(args.batch, 12)
    targets = torch.randint(0, args.classes, (args.batch,))
    for smoothing in (0.0, 0.1):
        loss = check_loss(model, x, targets, smoothing)
        loss.backward()
    print("losses match")


if __name__ == "__main__":
    main()
