"""Benchmark: Scrubbot's minimizer against shrinkray and pysource-minimize on the same cases.

    python benchmarks/minimize/run.py [--cases a,b] [--peer-cap 180] [--budget S] [--peers shrinkray,pysource-minimize]

For every case in `cases/` (a 90-200-line training script around one bug, with its hand-written
minimum beside it as `<name>.hand.py`), runs Scrubbot (candidates in the sandbox's fork server,
budget = a tenth of the peers' cap unless given), then each peer capped at `--peer-cap` seconds,
and re-checks every result COLD in the sandbox against the original's failure signature.
Prints a table (non-import lines, tokens, candidates, wall time (Scrubbot's: the whole
`scrub minimize`, cold runs of the original and of the result included), still reproduces, and
which of the case's `Keep:` operations survived, and "back": accepted programs dropped as failing as
expected only sometimes, after rounds + at the end, `steadiness`) and the ratios against the best peer and the
hand-written minimum; `--json-out` saves the raw rows.

A case's docstring may name, on a `Keep:` line, the operations that carry its bug
(`masked_fill, softmax, [index], cast:half`): each is looked up in the bug fingerprint of the
result's failing check (its operations and data-path steps, `app.engine.minimize.dataflow`),
or for an exception among what its failing line calls (`app.engine.minimize.sites`). After
the table: tokens removed, candidates, candidates accepted and seconds per pass, summed over the
cases, with how its warm runs ended (`ok`: the candidate passed; else the exception class; count
and seconds): a pass whose runs mostly end in one error class wastes them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from peers import needles_for, run_pysource_minimize, run_shrinkray

from app.engine.minimize import code_lines, count_tokens
from app.engine.minimize.dataflow import operation_key
from app.engine.minimize.oracle import signature_of
from app.engine.minimize.probe import probed
from app.engine.minimize.runners import sandbox_runners, zygote_for
from app.engine.minimize.session import minimize_repro

CASES = Path(__file__).resolve().parent / "cases"
PEERS = {"shrinkray": run_shrinkray, "pysource-minimize": run_pysource_minimize}


def measure(text: str) -> tuple[int, int]:
    return code_lines(text), count_tokens(text)


def run_case(name: str, args: argparse.Namespace, workdir: Path) -> list[dict]:
    case = CASES / f"{name}.py"
    source = case.read_text()
    hand = (CASES / f"{name}.hand.py").read_text()
    cold, warm, close = sandbox_runners(sys.executable, args.jobs, zygote=zygote_for(source))
    profile = PassProfile(warm)
    rows: list[dict] = []
    try:
        started = time.monotonic()  # the whole `scrub minimize`: cold original, shrinking, cold re-check
        outcome = minimize_repro(source, run=profile.run, cold_run=cold, jobs=args.jobs, timeout_s=60,
                                 budget_s=args.budget or args.peer_cap / 10, max_candidates=args.max_candidates,
                                 progress=profile.progress)
        wall_s = time.monotonic() - started
        signature = outcome.signature
        result = outcome.result
        keep = _keep(source)
        rows.append(_row(name, "scrubbot", result.source, result.stats.candidates, wall_s,
                         outcome.reproduces, not result.timed_out, _kept(keep, result.source, cold)))
        rows[-1]["back"] = f"{result.stepped_back}+{result.steadied}"  # dropped after rounds + at the end
        rows[-1]["passes"] = {p: [result.gains[p], result.costs[p], round(result.seconds[p], 2),
                                  profile.accepted.get(p, 0), dict(profile.outcomes.get(p, {}))]
                              for p in result.gains if result.costs[p]}
        exception_line = f"{signature.exc_type}: {_first_line(cold(source, 60))}"
        needles = needles_for(exception_line) if signature.kind == "exception" else []
        for peer in args.peers:
            runner = PEERS[peer]
            peer_dir = workdir / name / peer
            kwargs = {"jobs": args.jobs} if peer == "shrinkray" else {}
            run = runner(case, needles, peer_dir, args.peer_cap, **kwargs)
            reproduces = signature.matches(signature_of(cold(probed(run.final), 60), run.final))
            rows.append(_row(name, peer, run.final, run.candidates, run.wall_s, reproduces, run.finished))
        rows.append(_row(name, "hand-written", hand, 0, 0.0, signature.matches(signature_of(cold(probed(hand), 60), hand)), True,
                         _kept(keep, hand, cold)))
        (workdir / name).mkdir(parents=True, exist_ok=True)
        (workdir / name / "scrubbot.py").write_text(result.source)
    finally:
        close()
    return rows


class PassProfile:
    """Per pass: candidates accepted, and how the warm runs ended (`ok`, `timeout`, the exception
    class; a confirmed candidate runs twice) with their count and seconds. With one job runs are
    attributed exactly."""

    def __init__(self, warm) -> None:
        self.warm = warm
        self.pending: list[tuple[str, float]] = []  # outcomes (and seconds) of the runs since the last verdict
        self.accepted: dict[str, int] = {}
        self.outcomes: dict[str, dict[str, int]] = {}
        self._last_accepted = 0

    def progress(self, p) -> None:
        if p.accepted > self._last_accepted:
            self.accepted[p.pass_name] = self.accepted.get(p.pass_name, 0) + p.accepted - self._last_accepted
            self._last_accepted = p.accepted
        counts = self.outcomes.setdefault(p.pass_name, {})
        for word, seconds in self.pending:  # the runs behind the verdict just recorded, in this pass
            runs, total = counts.get(word, (0, 0.0))
            counts[word] = (runs + 1, round(total + seconds, 3))
        self.pending.clear()

    def run(self, source: str, timeout_s: float):
        started = time.monotonic()
        result = self.warm(source, timeout_s)
        seconds = time.monotonic() - started
        if result.timed_out:
            word = "timeout"
        elif not result.exit_code and not result.signal:
            word = "ok"
        else:
            text = (result.output.head + result.output.tail).decode("utf-8", "replace")
            word = _exception_class(text) or f"exit {result.exit_code or result.signal}"
        self.pending.append((word, seconds))
        return result


def _exception_class(text: str) -> str:
    tail = text[text.rfind("Traceback (most recent call last):"):].splitlines()
    for line in tail[1:]:
        if line and not line.startswith((" ", "\t")):
            return line.partition(":")[0].strip().rsplit(".", 1)[-1]
    return ""


def _keep(source: str) -> list[str]:
    """The `Keep:` line of a case's docstring: the operations its bug lives in."""
    found = re.search(r"^Keep: (.+)$", source, re.MULTILINE)
    return [item.strip() for item in found.group(1).split(",")] if found else []


def _kept(keep: list[str], text: str, cold) -> str:
    """`"3/3"`, or what is missing: the `Keep:` operations in the fingerprint of `text`'s failure."""
    if not keep:
        return "-"
    signature = signature_of(cold(probed(text), 60), text)
    found = set(signature.path | signature.site_ops) if signature else set()
    for side in (signature.operations or ()) if signature else ():
        found |= side
    missing = [item for item in keep if (item if item.startswith(("[", "cast:")) else operation_key(item)) not in found]
    return f"{len(keep) - len(missing)}/{len(keep)}" + (f" (lost {', '.join(missing)})" if missing else "")


def _first_line(result) -> str:
    """The original's exception message (first line), as the peers' grep needle."""
    text = (result.output.head + result.output.tail).decode("utf-8", "replace")
    tail = text[text.rfind("Traceback (most recent call last):"):].splitlines()
    for line in tail[1:]:
        if line and not line.startswith((" ", "\t")):
            return line.partition(":")[2].strip()
    return ""


def _row(case: str, tool: str, text: str, candidates: int, wall_s: float, reproduces: bool, finished: bool,
         kept: str = "-") -> dict:
    try:
        lines, tokens = measure(text)
    except SyntaxError:
        lines, tokens = -1, -1
    return {"case": case, "tool": tool, "lines": lines, "tokens": tokens, "candidates": candidates,
            "wall_s": round(wall_s, 1), "reproduces": reproduces, "finished": finished, "kept": kept}


def print_table(rows: list[dict], cap_s: float) -> None:
    header = (f"{'case':26} {'tool':18} {'lines':>5} {'tokens':>6} {'cands':>6} {'wall s':>7} {'repro':>5} "
              f"{'done':>5}  kept  back")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['case']:26} {r['tool']:18} {r['lines']:>5} {r['tokens']:>6} {r['candidates']:>6} "
              f"{r['wall_s']:>7} {'yes' if r['reproduces'] else 'NO':>5} {'yes' if r['finished'] else 'cap':>5}"
              f"  {r.get('kept', '-'):4}  {r.get('back', '-')}")
    print()
    for case in dict.fromkeys(r["case"] for r in rows):
        ours = next(r for r in rows if r["case"] == case and r["tool"] == "scrubbot")
        hand = next(r for r in rows if r["case"] == case and r["tool"] == "hand-written")
        peers = [r for r in rows if r["case"] == case and r["tool"] not in ("scrubbot", "hand-written")
                 and r["reproduces"] and r["lines"] >= 0]
        parts = [f"{case}: tokens/hand {ours['tokens'] / max(hand['tokens'], 1):.2f}",
                 f"wall/cap {ours['wall_s'] / cap_s:.2f}"]
        if peers:
            best = min(peers, key=lambda r: (r["tokens"], r["lines"]))
            parts += [f"lines/best peer {ours['lines'] / max(best['lines'], 1):.2f}",
                      f"tokens/best peer {ours['tokens'] / max(best['tokens'], 1):.2f} ({best['tool']})"]
        print("  ".join(parts))
    gains: dict[str, list] = {}
    for row in rows:
        for name, (gain, calls, seconds, accepted, outcomes) in row.get("passes", {}).items():
            total = gains.setdefault(name, [0, 0, 0.0, 0, {}])
            total[0], total[1], total[2], total[3] = total[0] + gain, total[1] + calls, total[2] + seconds, total[3] + accepted
            for word, (n, secs) in outcomes.items():
                runs, spent = total[4].get(word, (0, 0.0))
                total[4][word] = (runs + n, spent + secs)
    if gains:
        print("\npass                         tokens removed  candidates  accepted  seconds  warm runs by outcome (all cases)")
        for name, (gain, calls, seconds, accepted, outcomes) in sorted(gains.items(), key=lambda kv: -kv[1][0]):
            top = ", ".join(f"{w} {n} ({secs:.1f}s)" for w, (n, secs) in sorted(outcomes.items(), key=lambda kv: -kv[1][0])[:4])
            print(f"{name:28} {gain:>14} {calls:>11} {accepted:>9} {seconds:>8.1f}  {top}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(sorted(p.stem for p in CASES.glob("*.py") if ".hand" not in p.name)))
    parser.add_argument("--peers", default="shrinkray,pysource-minimize")
    parser.add_argument("--peer-cap", type=float, default=180.0, help="seconds per peer and case")
    parser.add_argument("--budget", type=float, default=None, help="Scrubbot's budget (default: cap/10)")
    parser.add_argument("--max-candidates", type=int, default=None, help="Scrubbot's candidate cap (load-independent)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json-out", type=Path, default=None)
    args = parser.parse_args()
    args.peers = [p for p in args.peers.split(",") if p]
    workdir = Path(tempfile.mkdtemp(prefix="scrub-minimize-bench-"))
    rows: list[dict] = []
    for name in args.cases.split(","):
        rows += run_case(name, args, workdir)
        print(json.dumps(rows[-len(args.peers) - 2:]), file=sys.stderr, flush=True)
    print_table(rows, args.peer_cap)
    print(f"\nresults in {workdir}")
    if args.json_out:
        args.json_out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
