"""A fuzzer command that replays a stored TorchFuzz program as TorchFuzz would run it (benchmark only).

    python tools/experimental/torchfuzz/replay.py --seed 164875

`pytorch_real_jobs.py --replay DIR` copies this file into the generated tree next to TorchFuzz
and the programs of DIR (`<issue>.py`, each a program from a pytorch/pytorch issue) into
`tools/experimental/torchfuzz/replay_programs/`, and points `.github/scrub.yml`'s `fuzz: command:`
here, so the seed is the issue number. It prints `Using seed: N` as TorchFuzz does, drops the
program's leading `#` header (where the program came from: not TorchFuzz's output), writes the
program to `/tmp/torchfuzz/fuzz_<hash>.py` and runs it with TorchFuzz's own `ProgramRunner`
(`tools/experimental/torchfuzz/runner.py`), so the job reads TorchFuzz's real output layout:
`=== Program Output (Failure) ===`, `=== Program Source ===`, exit 1 on a failing program.
"""

import argparse
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from runner import ProgramRunner  # noqa: E402  (TorchFuzz's own runner, in the tree)


def program_of(seed: int) -> str:
    path = os.path.join(HERE, "replay_programs", f"{seed}.py")
    if not os.path.exists(path):
        sys.exit(f"no stored program for seed {seed} ({path})")
    lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="replay a stored TorchFuzz program")
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    print(f"Using seed: {args.seed}, max_depth: replayed")
    source = program_of(args.seed)
    os.makedirs("/tmp/torchfuzz", exist_ok=True)
    path = f"/tmp/torchfuzz/fuzz_{hashlib.md5(source.encode()).hexdigest()[:16]}.py"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    ProgramRunner().run_program(path)  # exits 1 with the program's output and source when it fails


if __name__ == "__main__":
    main()
