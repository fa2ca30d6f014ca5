"""Benchmark: `scrub issue` on real pytorch/pytorch issues (`cases/`), scored against hand-established verdicts.

    python benchmarks/real_issues/run.py [--case SLUG ...] [--jobs N] [--timeout S] [--repro-timeout S] [--as-open]

For every case in `cases/` (or each `--case`), writes the issue and its comments to a temporary
file, runs `python -m app.cli.main issue FILE --json` from this checkout (with the caller's
environment; `--repro-timeout` sets SCRUB_REPRO_TIMEOUT), and scores the verdict against
`expected.verdict`. Most of the issues are closed on GitHub and Scrubbot never touches a closed
issue (verdict `closed`, right only for `not_actionable`); `--as-open` presents them as open, to
judge the reproduction itself (the expected verdicts are about the bug, not the issue's state).

    right                 the verdict is one of those the expected verdict allows (ACCEPTED below)
    honest-inconclusive   a notice that closes nothing (inconclusive, missing-dependency,
                          needs-reproduction, ...): acceptable, not right
    wrong                 a wrong claim (reproduces, a triage dismissal, "no longer reproduces"
                          for a bug that still reproduces), or the pipeline failed or timed out
    WRONGLY CLOSED        "fixed" (the issue would be closed) when the expected verdict is not fixed

When a minimized repro comes back, checks it still calls `expected.kept_operation` (its last
dotted component). Writes RESULTS.md beside this file, prints the same summary, and keeps each
case's raw JSON in benchmarks/out/real_issues/ (git-ignored).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CASES = HERE / "cases"
RAW = ROOT / "benchmarks" / "out" / "real_issues"

# expected verdict (cases/*.json) -> the Scrubbot verdicts that count as right
ACCEPTED = {
    "reproduces": {"reproduces"},
    "fixed": {"fixed"},
    "inconclusive": {"inconclusive"},
    "needs_reproduction": {"needs-reproduction", "screenshot-only"},
    "not_actionable": {"feature", "better-engineering", "documentation", "tracker", "closed", "duplicate"},
    "needs_gpu": {"unavailable-hardware"},
}
# verdicts that only say "cannot tell (yet)": they close nothing and claim nothing about the bug
NOTICES = {"inconclusive", "missing-dependency", "needs-reproduction", "screenshot-only", "unavailable-hardware",
           "passes-now"}
AFTER_VERDICT = ("bisect", "minimize", "report", "publish")  # stages that run once the verdict is known
SCORES = ("right", "honest-inconclusive", "wrong", "WRONGLY CLOSED")


def score(expected: str, verdict: str | None, failed: bool) -> str:
    if failed or not verdict:
        return "wrong"
    if verdict in ACCEPTED.get(expected, ()):
        return "right"
    if verdict == "fixed":
        return "WRONGLY CLOSED"
    if verdict == "passes-now" and expected == "reproduces":
        return "wrong"  # "the error is gone" on a live bug (it closes nothing, but it says the bug is not there)
    if verdict in NOTICES:
        return "honest-inconclusive"
    if verdict == "different-error" and expected != "reproduces":
        return "honest-inconclusive"  # "no longer reproduces, now raises X": true, not the expected verdict
    return "wrong"


def kept_operation_check(expected: dict, output: dict) -> str:
    """'yes'/'NO' when a minimized repro came back and the case names a kept operation, else '-'."""
    source = (output.get("minimized") or {}).get("source")
    found = re.search(r"[A-Za-z_][\w.]*", expected.get("kept_operation") or "")
    if not source or not found:
        return "-"
    name = found.group(0).rstrip(".").rsplit(".", 1)[-1]
    return "yes" if re.search(rf"\b{re.escape(name)}\b", source) else f"NO ({name})"


def reason_of(output: dict) -> str:
    """Scrubbot's one-line reason: the reproduce stage's summary if it ran, else triage's."""
    summaries = {s.get("stage"): s.get("summary") or "" for s in output.get("stages") or []}
    reproduce = summaries.get("reproduce", "")
    if reproduce and not reproduce.startswith("not needed"):
        return reproduce
    return summaries.get("triage") or (output.get("triage") or {}).get("reason") or ""


def run_case(path: Path, args: argparse.Namespace) -> dict:
    case = json.loads(path.read_text())
    expected = case["expected"]
    row = {"slug": path.stem, "issue": case["issue"].get("number"), "url": case["issue"].get("html_url", ""),
           "category": expected.get("category", ""), "expected": expected["verdict"]}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    if args.repro_timeout:
        env["SCRUB_REPRO_TIMEOUT"] = str(args.repro_timeout)
    with tempfile.TemporaryDirectory(prefix="real-issue-") as tmp:
        saved = Path(tmp) / f"{path.stem}.json"
        issue = case["issue"]
        if args.as_open and issue.get("state") == "closed":  # judge the bug, not the issue's state
            issue = {k: v for k, v in issue.items() if k != "state_reason"} | {"state": "open"}
        saved.write_text(json.dumps({"issue": issue, "comments": case["comments"]}))
        started = time.monotonic()
        stdout, stderr, rc, timed_out = _run([sys.executable, "-m", "app.cli.main", "issue", str(saved), "--json"],
                                             env, args.timeout)
        row["seconds"] = round(time.monotonic() - started, 1)
    RAW.mkdir(parents=True, exist_ok=True)
    (RAW / f"{path.stem}.stderr.txt").write_text(stderr)
    output, problem = {}, None
    if timed_out:
        problem = f"runner timeout after {args.timeout} s"
    else:
        try:
            output = json.loads(stdout.strip().splitlines()[-1])
            (RAW / f"{path.stem}.json").write_text(json.dumps(output, indent=2))
        except (ValueError, IndexError):
            tail = (stderr.strip().splitlines() or ["no output"])[-1]
            problem = f"exit {rc}, no JSON: {tail}"
    if output and output.get("status") not in (None, "succeeded"):
        problem = f"pipeline {output.get('status')}"
    row["verdict"] = output.get("verdict") or "-"
    row["score"] = score(row["expected"], output.get("verdict"), problem is not None)
    row["kept_op"] = kept_operation_check(expected, output)
    row["reason"] = problem or reason_of(output)
    row["torch"] = ((output.get("reproduction") or {}).get("result") or {}).get("torch_version")
    after = sum(s.get("seconds") or 0 for s in output.get("stages") or [] if s.get("stage") in AFTER_VERDICT)
    row["verdict_s"] = round(max(0.0, row["seconds"] - after), 1)  # label -> verdict: all but what follows it
    row["split"] = case.get("split", "dev")
    return row


def _run(cmd: list[str], env: dict, timeout: float) -> tuple[str, str, int | None, bool]:
    """Run in its own process group; on timeout kill the whole group (sandboxes included)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return out, err, proc.returncode, False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return out, err, proc.returncode, True


def torch_version(rows: list[dict]) -> str:
    seen = sorted({r["torch"] for r in rows if r.get("torch")})
    if seen:
        return ", ".join(seen) + " (from the reproductions)"
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True, check=False)
    return (probe.stdout.strip() or "unknown") + " (the runner's interpreter; no case reached a reproduction)"


def _cell(text: object, limit: int = 160) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by the nearest-rank method."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-int(q * 100) * len(ordered) // 100) - 1))] if ordered else 0.0


def latency_line(rows: list[dict]) -> str:
    times = [r["verdict_s"] for r in rows if "verdict_s" in r]
    if not times:
        return "no latency measured"
    return (f"label -> verdict: median {percentile(times, 0.5):.1f} s, p90 {percentile(times, 0.9):.1f} s, "
            f"max {max(times):.1f} s ({len(times)} cases)")


def totals_line(rows: list[dict]) -> str:
    totals = {s: sum(r["score"] == s for r in rows) for s in SCORES}
    return (f"{len(rows)} cases: right {totals['right']}, honest inconclusive {totals['honest-inconclusive']}, "
            f"wrong {totals['wrong']}, WRONGLY CLOSED {totals['WRONGLY CLOSED']}")


def render(rows: list[dict], args: argparse.Namespace, started: str, elapsed: float, total: int) -> tuple[str, str]:
    summary = totals_line(rows)
    for split in sorted({r.get("split", "dev") for r in rows}):
        summary += f"\n  {split}: " + totals_line([r for r in rows if r.get("split", "dev") == split])
    summary += "\n" + latency_line(rows)
    kept = [r["kept_op"] for r in rows if r["kept_op"] != "-"]
    kept_line = (f"minimized repros keeping the reported operation: {kept.count('yes')}/{len(kept)}"
                 if kept else "no minimized repro to check")
    lines = [
        "# Real issues benchmark: results",
        "",
        f"- Date: {started}",
        f"- PyTorch: {torch_version(rows)}",
        f"- Command: `{' '.join(['python', 'benchmarks/real_issues/run.py', *sys.argv[1:]])}`",
        f"- Cases: {len(rows)} of {total}" + ("" if len(rows) == total else " (a subset)"),
        f"- Closed issues presented as open (`--as-open`): {'yes' if args.as_open else 'no'}",
        f"- Wall time: {elapsed:.0f} s ({sum(r['seconds'] for r in rows):.0f} s summed over cases, --jobs {args.jobs})",
        "",
        "| slug | split | issue | category | expected | Scrubbot | score | s | verdict s | kept op | Scrubbot's reason |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        score_cell = f"**{r['score']}**" if r["score"] in ("wrong", "WRONGLY CLOSED") else r["score"]
        lines.append(f"| `{r['slug']}` | {r.get('split', 'dev')} | [#{r['issue']}]({r['url']}) | {r['category']} | "
                     f"{r['expected']} | {r['verdict']} | {score_cell} | {r['seconds']:.0f} | {r.get('verdict_s', 0):.0f} | "
                     f"{r['kept_op']} | {_cell(r['reason'])} |")
    lines += ["", "## Totals", "", *[f"**{line.strip()}**  " for line in summary.splitlines()], "", f"{kept_line}", ""]
    return "\n".join(lines), summary + "\n" + kept_line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", default=[], metavar="SLUG", help="run only these (repeatable)")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    parser.add_argument("--timeout", type=float, default=1200, help="wall-clock limit of one case, s (default 1200)")
    parser.add_argument("--repro-timeout", type=int, help="SCRUB_REPRO_TIMEOUT for the runs (e.g. 60)")
    parser.add_argument("--as-open", action="store_true",
                        help="present closed issues as open (Scrubbot never touches a closed issue)")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md", help="where to write the results")
    parser.add_argument("--split", choices=("dev", "holdout", "all"), default="all",
                        help="which cases: the development part, the held-out part, or all (default)")
    args = parser.parse_args()

    every = sorted(CASES.glob("*.json"))
    paths = [CASES / f"{slug.removesuffix('.json')}.json" for slug in args.case] if args.case else every
    if args.split != "all":
        paths = [p for p in paths if json.loads(p.read_text()).get("split", "dev") == args.split]
    if missing := [p.stem for p in paths if not p.is_file()]:
        parser.error(f"no such case: {', '.join(missing)}")
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")

    def one(path: Path) -> dict:
        row = run_case(path, args)
        print(f"{row['slug']:42s} expected {row['expected']:18s} got {row['verdict']:20s} {row['score']:20s} "
              f"{row['seconds']:6.1f} s  {_cell(row['reason'], 90)}", file=sys.stderr, flush=True)
        return row

    clock = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(one, paths))
    document, summary = render(rows, args, started, time.monotonic() - clock, len(every))
    args.out.write_text(document)
    print(summary)
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
