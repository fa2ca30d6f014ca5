"""The held-out draw: 14 of the failing real-issue repros, seeded, from `catalog.json`.

    python benchmarks/minimize/real/draw.py   # writes heldout.json

The pool: `catalog.json`'s files under benchmarks/real_issues/repros/ with outcome `failing`
and not a probe written here, their paths sorted; drawn with
`random.Random(2026_11_28).sample(pool, 14)`. The failing TorchFuzz programs are listed
separately (`torchfuzz`), outside the draw.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED, SIZE = 2026_11_28, 14


def draw(catalog: dict) -> dict:
    failing = [e for e in catalog["files"] if e["outcome"] == "failing" and not e["probe"]]
    pool = sorted(e["file"] for e in failing if e["file"].startswith("benchmarks/real_issues/"))
    return {"seed": SEED, "size": SIZE, "pool": len(pool),
            "files": random.Random(SEED).sample(pool, SIZE),
            "torchfuzz": sorted(e["file"] for e in failing if e["file"].startswith("benchmarks/torchfuzz_real/"))}


if __name__ == "__main__":
    heldout = draw(json.loads((HERE / "catalog.json").read_text()))
    (HERE / "heldout.json").write_text(json.dumps(heldout, indent=1) + "\n")
    print(json.dumps(heldout, indent=1))
