"""Check a hand-written fused LayerNorm + GELU against the reference modules.

Reported: the parity test fails; the custom kernel is numerically off.
Keep: var, layer_norm
"""
import argparse
import itertools
import logging
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(stream=sys.stdout, level=logging.INFO)
logger = logging.getLogger("parity")


def fused_layer_norm_gelu(x, weight, bias, eps=1e-5):
    """LayerNorm over the last dim followed by tanh-approximated GELU, in one pass."""
    mean = x.mean(dim=-1, keepdim=True)
    # BUG: unbiased variance; LayerNorm uses the biased estimator
    var = x.var(dim=-1, keepdim=True, unbiased=True)
    normed = (x - mean) / torch.sqrt(var + eps)
    y = normed * weight + bias
    return 0.5 * y * (1.0 + torch.tanh(0.7978845608 * (y + 0.044715 * y.pow(3))))


class Reference(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return F.gelu(self.norm(x), approximate="tanh")


class Fused(nn.Module):
    def __init__(self, reference):
        super().__init__()
        self.weight = reference.norm.weight
        self.bias = reference.norm.bias
        self.eps = reference.norm.eps

    def forward(self, x):
        return fused_layer_norm_gelu(x, self.weight, self.bias, self.eps)


def randomize_(module, seed):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 0.1 + 1.0)


def max_error(a, b):
    return (a - b).abs().max().item()


def check(dim, batch, seq, dtype, seed, atol, rtol):
    reference = Reference(dim).to(dtype)
    randomize_(reference, seed)
    fused = Fused(reference)
    x = torch.randn(batch, seq, dim, dtype=dtype, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        expected = reference(x)
        actual = fused(x)
    error = max_error(expected, actual)
    logger.info("dim=%d batch=%d seq=%d dtype=%s max error %.3e", dim, batch, seq, dtype, error)
    assert torch.allclose(actual, expected, atol=atol, rtol=rtol)
    return error


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args([])
    torch.manual_seed(args.seed)
    dims = [64, 256, 768]
    shapes = [(2, 16), (4, 128)]
    dtypes = [torch.float32, torch.float64]
    results = {}
    for dim, (batch, seq), dtype in itertools.product(dims, shapes, dtypes):
        results[dim, batch, seq, dtype] = check(dim, batch, seq, dtype, args.seed, args.atol, args.rtol)
    worst = max(results.values())
    logger.info("all %d configurations pass, worst error %.3e", len(results), worst)
    for key, value in sorted(results.items(), key=lambda kv: -kv[1])[:3]:
        print(key, value)


if __name__ == "__main__":
    main()
