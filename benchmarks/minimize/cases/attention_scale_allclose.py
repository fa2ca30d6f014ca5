"""Parity test of a hand-written multi-head attention against F.scaled_dot_product_attention.

Source: the shape of bytedance/Protenix#159 ("F.scaled_dot_product_attention will scale the
logits, while the second implementation will not") and NVIDIA/TransformerEngine#267 (a manual
attention checked against SDPA). Bug: the manual path forgets the 1/sqrt(head_dim) scale.
Keep: softmax, scaled_dot_product_attention
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class ManualAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def split(self, x):
        batch, seq, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        shape = (batch, seq, self.heads, self.head_dim)
        return [t.reshape(shape).transpose(1, 2) for t in (q, k, v)]

    def merge(self, out):
        batch, _, seq, _ = out.shape
        return self.proj(out.transpose(1, 2).reshape(batch, seq, -1))

    def manual(self, x):
        q, k, v = self.split(x)
        scores = q @ k.transpose(-2, -1)  # BUG: missing / math.sqrt(self.head_dim)
        weights = torch.softmax(scores, dim=-1)
        return self.merge(weights @ v)

    def fused(self, x):
        q, k, v = self.split(x)
        return self.merge(F.scaled_dot_product_attention(q, k, v))


def compare(model, x, atol):
    with torch.no_grad():
        out = model.manual(x)
        ref = model.fused(x)
    bad = (~torch.isclose(out, ref, atol=atol)).sum().item()
    print(f"max abs diff {(out - ref).abs().max().item():.3e}")
    assert torch.allclose(out, ref, atol=atol), f"{bad}/{out.numel()} outputs differ"


def main():
    torch.manual_seed(0)
    started = time.perf_counter()
    for dim, heads in [(64, 4), (128, 8)]:
        model = ManualAttention(dim, heads).eval()
        for seq in (16, 33):
            x = torch.randn(2, seq, dim)
            compare(model, x, atol=1e-5)
            print(f"dim={dim} heads={heads} seq={seq} ok, scale {1 / math.sqrt(dim // heads):.3f}")
    print(f"all configurations match in {time.perf_counter() - started:.2f}s")


if __name__ == "__main__":
    main()
