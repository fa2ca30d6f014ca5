"""Compile a small transformer block with fullgraph=True for inference serving.

Reported: torch.compile(fullgraph=True) fails; eager works.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.WARNING)
logger = logging.getLogger("serve")
torch.set_float32_matmul_precision("high")


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.norm1 = RMSNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = RMSNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        h = self.mlp(self.norm2(x))
        # BUG: data-dependent Python branch on a tensor value breaks the graph
        if h.abs().max().item() > 100.0:
            logger.warning("large activations")
            h = h.clamp(-100.0, 100.0)
        return x + h


class TinyLM(nn.Module):
    def __init__(self, vocab, dim, depth, heads, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.norm(x))


@torch.no_grad()
def generate(model, idx, steps, temperature=1.0):
    for _ in range(steps):
        logits = model(idx)[:, -1, :] / temperature
        probs = F.softmax(logits, dim=-1)
        idx = torch.cat([idx, torch.multinomial(probs, 1)], dim=1)
    return idx


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args([])
    torch.manual_seed(0)
    model = TinyLM(args.vocab, args.dim, args.depth, args.heads).eval()
    compiled = torch.compile(model, fullgraph=True, dynamic=False)
    prompt = torch.randint(0, args.vocab, (2, 16))
    started = time.time()
    out = generate(compiled, prompt, args.steps)
    logger.warning("generated %s tokens in %.2fs", out.numel(), time.time() - started)
    print(out[:, -args.steps:])


if __name__ == "__main__":
    main()
