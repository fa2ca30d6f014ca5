"""Held-out benchmark: Scrubbot's minimizer on real PyTorch issue repros nobody here shaped.

    python benchmarks/minimize/real/run.py [--files a.py,b.py] [--budget 36] [--jobs 1]
                                           [--max-candidates N] [--json-out rows.json]

For every file of `heldout.json` (its draw, then its failing TorchFuzz programs), or of
`--files`, minimizes as `benchmarks/minimize/run.py` does for Scrubbot (the sandbox's cold
runner and fork server from `sandbox_runners`, the zygote from `zygote_for`, a 60 s run
timeout; `--budget` seconds for the whole `minimize_repro`), then runs the result cold once
more and compares its failure with the original's signature. Prints per file:

- `lines`/`tokens`: non-import lines and tokens (`code_lines`, `count_tokens`), original -> result;
- `ratio`: result tokens / original tokens; `cands`: candidates; `wall s`: the whole
  `minimize_repro` (cold run of the original, shrinking, cold re-check);
- `repro`: the outcome's `reproduces` (the result, run cold, matches the signature);
- `failure`: the original's exception class (or `signal N`, `timeout`, `exit N`);
- `class`/`op`: the second cold run of the result fails with the same exception class
  (signal, exit code; a segfault and a heap-check abort are one class, `oracle.crash_family`) / at the same failing operation (`FailureSignature.fails_at_the_same_operation`;
  `-` for a failure that is not an exception); `match`: `FailureSignature.matches` on that run;
- `back`: steps back to a steady program (`result.steadied`) / `stepped_back` if the result has it.

The minimized programs are written to a temporary folder (printed at the end). Run one
benchmark at a time: the figures are wall times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(HERE.parent)]

from run import PassProfile, measure  # benchmarks/minimize/run.py

from app.engine.minimize.crashes import MEMORY
from app.engine.minimize.oracle import FailureSignature, signature_of
from app.engine.minimize.probe import probed
from app.engine.minimize.problem import CouldNotMinimize
from app.engine.minimize.runners import sandbox_runners, zygote_for
from app.engine.minimize.session import NothingToKeep, minimize_repro

TIMEOUT_S = 60  # per run, as benchmarks/minimize/run.py


def heldout_files() -> list[Path]:
    heldout = json.loads((HERE / "heldout.json").read_text())
    return [ROOT / f for f in heldout["files"] + heldout["torchfuzz"]]


def failure_word(signature: FailureSignature | None) -> str:
    if signature is None:
        return "passes"
    if signature.kind == "exception":
        return signature.exc_type
    return signature.kind if signature.code is None else f"{signature.kind} {signature.code}"


def run_file(path: Path, args: argparse.Namespace, workdir: Path) -> dict:
    source = path.read_text()
    lines, tokens = measure(source)
    row: dict = {"file": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path),
                 "lines": lines, "tokens": tokens}
    cold, warm, close = sandbox_runners(sys.executable, args.jobs, zygote=zygote_for(source))
    profile = PassProfile(warm)
    try:
        started = time.monotonic()  # the whole `scrub minimize`: cold original, shrinking, cold re-check
        try:
            outcome = minimize_repro(source, run=profile.run, cold_run=cold, jobs=args.jobs, timeout_s=TIMEOUT_S,
                                     budget_s=args.budget, max_candidates=args.max_candidates,
                                     progress=profile.progress)
        except (NothingToKeep, CouldNotMinimize) as error:
            row.update(error=f"{type(error).__name__}: {error}", wall_s=round(time.monotonic() - started, 1))
            return row
        row["wall_s"] = round(time.monotonic() - started, 1)
        result, signature = outcome.result, outcome.signature
        again = signature_of(cold(probed(result.source), TIMEOUT_S), result.source)
    finally:
        close()
    result_lines, result_tokens = measure(result.source)
    same_class = again is not None and again.kind == signature.kind and (
        again.exc_type == signature.exc_type if signature.kind == "exception"
        else again.code == signature.code or again.message == signature.message == MEMORY)
    same_op = (signature.fails_at_the_same_operation(again) if same_class and signature.kind == "exception"
               else None if signature.kind != "exception" else False)
    row.update(result_lines=result_lines, result_tokens=result_tokens,
               ratio=round(result_tokens / max(tokens, 1), 3), candidates=result.stats.candidates,
               reproduces=outcome.reproduces, failure=failure_word(signature), result_failure=failure_word(again),
               same_class=same_class, same_op=same_op, matches=signature.matches(again),
               steadied=getattr(result, "steadied", 0), stepped_back=getattr(result, "stepped_back", 0),
               timed_out=result.timed_out,
               passes={p: [result.gains[p], result.costs[p], round(result.seconds[p], 2), profile.accepted.get(p, 0)]
                       for p in result.gains if result.costs[p]})
    out = workdir / f"{path.stem}.min.py"
    out.write_text(result.source)
    row["result_path"] = str(out)
    return row


def _yes(value) -> str:
    return "-" if value is None else "yes" if value else "NO"


def print_table(rows: list[dict]) -> None:
    header = (f"{'file':12} {'lines':>9} {'tokens':>11} {'ratio':>6} {'cands':>6} {'wall s':>7} {'repro':>5} "
              f"{'failure':22} {'class':>5} {'op':>4} {'match':>5} {'back':>5}")
    print(header)
    print("-" * len(header))
    for r in rows:
        name = Path(r["file"]).stem
        if "error" in r:
            print(f"{name:12} {r['lines']:>4} -> ? {r['tokens']:>5} -> ? {'':>6} {'':>6} {r['wall_s']:>7}  {r['error']}")
            continue
        print(f"{name:12} {r['lines']:>4}->{r['result_lines']:<4} {r['tokens']:>5}->{r['result_tokens']:<5} "
              f"{r['ratio']:>6.2f} {r['candidates']:>6} {r['wall_s']:>7} {_yes(r['reproduces']):>5} "
              f"{r['failure'][:22]:22} {_yes(r['same_class']):>5} {_yes(r['same_op']):>4} {_yes(r['matches']):>5} "
              f"{r['steadied']}/{r['stepped_back']:<3}")
    done = [r for r in rows if "error" not in r]
    if done:
        print(f"\n{len(done)} minimized ({len(rows) - len(done)} errors): reproduces cold {sum(r['reproduces'] for r in done)}, "
              f"same class {sum(r['same_class'] for r in done)}, same operation "
              f"{sum(bool(r['same_op']) for r in done)}/{sum(r['same_op'] is not None for r in done)}; "
              f"median ratio {statistics.median(r['ratio'] for r in done):.2f}, "
              f"median wall {statistics.median(r['wall_s'] for r in done):.1f} s, max {max(r['wall_s'] for r in done):.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="", help="comma-separated paths (default: heldout.json)")
    parser.add_argument("--budget", type=float, default=36.0, help="seconds for the whole minimize_repro")
    parser.add_argument("--max-candidates", type=int, default=None, help="candidate cap (load-independent)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json-out", type=Path, default=None)
    args = parser.parse_args()
    files = [Path(f).resolve() for f in args.files.split(",") if f] if args.files else heldout_files()
    workdir = Path(tempfile.mkdtemp(prefix="scrub-minimize-real-"))
    rows: list[dict] = []
    for path in files:
        rows.append(run_file(path, args, workdir))
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "passes"}), file=sys.stderr, flush=True)
    print_table(rows)
    print(f"\nresults in {workdir}")
    if args.json_out:
        args.json_out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
