"""A transformer encoder with its own LayerNorm module, checked against F.layer_norm.

Shape of the held-out report in issue #26 (a layer norm written by hand whose `allclose`
against `F.layer_norm` fails; the earlier minimizer dropped the variance and kept a different
mismatch) and of the "E[x^2] is not the variance" mistake in hand-rolled norms (the
RMSNorm-style second moment used where LayerNorm needs the centred one). Bug: the variance is
`x.pow(2).mean()`, not `(x - mean).pow(2).mean()`; it only agrees when the mean is zero.
Keep: mean, pow, rsqrt, layer_norm
"""
import argparse
import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("encoder")


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (PyTorch's has no `bias=False` before 2.1)."""

    def __init__(self, dim, bias=True, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None
        self.eps = eps

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.pow(2).mean(dim=-1, keepdim=True)  # BUG: the second moment, not the variance
        y = (x - mean) * torch.rsqrt(var + self.eps)
        y = y * self.weight
        return y + self.bias if self.bias is not None else y


class SelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout=0.0):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.dropout = dropout

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=-1)
        q, k, v = (t.view(batch, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0)
        return self.out(y.transpose(1, 2).reshape(batch, seq, dim))


class Block(nn.Module):
    def __init__(self, dim, heads, bias):
        super().__init__()
        self.ln1 = LayerNorm(dim, bias=bias)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = LayerNorm(dim, bias=bias)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self, vocab, dim, heads, depth, bias=True):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, bias) for _ in range(depth)])
        self.norm = LayerNorm(dim, bias=bias)

    def forward(self, tokens):
        x = self.embed(tokens) * math.sqrt(self.embed.embedding_dim)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


def check_norms(model, tokens, atol):
    """Each LayerNorm of the model against the library's, on the activations it really sees."""
    checked = 0
    with torch.no_grad():
        x = model.embed(tokens) * math.sqrt(model.embed.embedding_dim)
        for block in model.blocks:
            for norm in (block.ln1, block.ln2):
                out = norm(x)
                reference = F.layer_norm(x, x.shape[-1:], norm.weight, norm.bias, norm.eps)
                assert torch.allclose(out, reference, atol=atol)
                checked += 1
            x = block(x)
    return checked


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--atol", type=float, default=1e-4)
    args = parser.parse_args([])
    torch.manual_seed(0)
    for bias in (True, False):
        model = Encoder(100, args.dim, args.heads, args.depth, bias=bias).eval()
        tokens = torch.randint(0, 100, (2, 16))
        checked = check_norms(model, tokens, args.atol)
        log.info("bias=%s: %d LayerNorms match F.layer_norm", bias, checked)
    log.info("all norms match")


if __name__ == "__main__":
    main()
