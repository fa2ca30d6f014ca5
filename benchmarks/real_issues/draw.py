"""The stated random procedure that draws the cases added in round 3 (issue #22).

    python benchmarks/real_issues/draw.py            # prints the 62 draws, in order, with their split

1. The vocabulary: every public callable of `torch`, `torch.nn.functional`, `torch.linalg`,
   `torch.fft` and `torch.special` in torch 2.13.0 (names without a leading `_`, sorted), plus
   fixed topics so that what is not an operator can be drawn too (`TOPICS`).
2. `random.Random(SEED).sample(vocabulary, QUERIES)`: the queries, in order.
3. Each term is searched as `"<term> pytorch bug"` in the `issues` corpus of the search tool
   (the bare term, tried first for draws 0-7, found a pytorch/pytorch issue for only 3 of 8
   terms; the corpus holds many other repositories); the case is the first result that is a
   pytorch/pytorch issue (not a pull request) not already in the set, kept whatever it is
   (feature request, question, CUDA-only, a screenshot, ...). Its title, body and comments are
   copied verbatim from the excerpt (often cut: `body_complete` is false).
4. The held-out third was fixed before any case was read: `holdout_indices()` (a second seed)
   picks a third of the draw positions; those cases carry `"split": "holdout"`.
5. Round 3, second batch (draws 62-161, fixed before any of them was searched): the first 62
   draws stay exactly as they were; 100 more terms are `random.Random(SEED + 1).sample(...)` of
   the vocabulary not drawn yet, and their held-out third is `random.Random(HOLDOUT_SEED + 1)`
   over positions 62-161.
"""

from __future__ import annotations

import random

SEED, HOLDOUT_SEED, QUERIES = 2222, 2223, 62
EXTRA_QUERIES = 100  # the second batch (step 5)
TOPICS = ["torch.compile", "DataLoader", "distributed", "CUDA", "MPS", "ONNX export", "torch.jit", "autograd",
          "feature request", "documentation", "build from source", "install", "performance", "memory leak",
          "quantization", "sparse tensor", "complex numbers", "torch.export", "FSDP", "DistributedDataParallel"]


def vocabulary() -> list[str]:
    import torch
    import torch.nn.functional as F  # noqa: N812

    names = set()
    for prefix, module in (("torch", torch), ("torch.nn.functional", F), ("torch.linalg", torch.linalg),
                           ("torch.fft", torch.fft), ("torch.special", torch.special)):
        for name in dir(module):
            if not name.startswith("_") and callable(getattr(module, name, None)):
                names.add(f"{prefix}.{name}")
    return sorted(names) + TOPICS


def queries() -> list[str]:
    words = vocabulary()
    first = random.Random(SEED).sample(words, QUERIES)
    rest = sorted(set(words) - set(first))
    return first + random.Random(SEED + 1).sample(rest, EXTRA_QUERIES)


def holdout_indices() -> set[int]:
    first = set(random.Random(HOLDOUT_SEED).sample(range(QUERIES), QUERIES // 3))
    second = range(QUERIES, QUERIES + EXTRA_QUERIES)
    return first | set(random.Random(HOLDOUT_SEED + 1).sample(second, EXTRA_QUERIES // 3))


if __name__ == "__main__":
    held = holdout_indices()
    for index, query in enumerate(queries()):
        print(f"{index:2d} {'holdout' if index in held else 'dev    '} {query}")
