"""Attention pooling over padded sequences: the value projection gets NaN gradients.

Source: pytorch/pytorch#41508 ("nn.MultiheadAttention causes gradients to become NaN under
some use cases") and #24816: a fully padded row is masked with -inf, its softmax is 0/0 = NaN,
and although that row is left out of the loss, backward multiplies its NaN weights into the
shared value projection's gradient.
Keep: masked_fill, softmax, [index]
"""
import math

import torch
import torch.nn as nn


class AttentionPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query = nn.Parameter(torch.randn(dim) / math.sqrt(dim))
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)

    def forward(self, tokens, padding):
        scores = self.key(tokens) @ self.query  # (batch, seq)
        scores = scores.masked_fill(padding, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return (weights.unsqueeze(-1) * self.value(tokens)).sum(dim=1)


def make_batch(lengths, seq, dim):
    tokens = torch.randn(len(lengths), seq, dim)
    positions = torch.arange(seq).expand(len(lengths), seq)
    padding = positions >= torch.tensor(lengths).unsqueeze(1)
    return tokens, padding


def train_step(model, optimizer, tokens, padding, targets):
    optimizer.zero_grad()
    pooled = model(tokens, padding)
    valid = ~padding.all(dim=1)  # sequences with at least one token
    loss = nn.functional.mse_loss(pooled[valid], targets[valid])
    assert torch.isfinite(loss), f"loss is {loss.item()}"
    loss.backward()
    for name, param in model.named_parameters():
        assert torch.isfinite(param.grad).all(), f"non-finite gradient in {name}"
    optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    dim, seq = 16, 6
    model = AttentionPool(dim)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, lengths in enumerate([[6, 4, 2], [5, 3, 1], [6, 2, 0]]):
        tokens, padding = make_batch(lengths, seq, dim)
        targets = torch.randn(len(lengths), dim)
        loss = train_step(model, optimizer, tokens, padding, targets)
        print(f"step {step} lengths {lengths} loss {loss:.4f}")


if __name__ == "__main__":
    main()
