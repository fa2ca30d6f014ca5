"""Does a generated test xfail in the sandbox? (`verify_xfail`, read from pytest's summary counts.)"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from app.engine.sandbox.treerun import TreeRunner, pytest_argv

Json = dict[str, Any]
_COUNTS = re.compile(r"(\d+) (passed|failed|xfailed|xpassed|skipped|errors?|deselected)\b")


@dataclass(frozen=True)
class XfailCheck:
    """A generated test run in the sandbox: did it end xfailed, with no failure, error or XPASS?"""

    xfailed: bool
    summary: str
    counts: dict[str, int] = field(default_factory=dict)
    exit_code: int | None = None
    timed_out: bool = False
    output: str = ""

    def to_dict(self) -> Json:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Json) -> XfailCheck:
        return cls(**{k: data[k] for k in ("xfailed", "summary", "counts", "exit_code", "timed_out", "output") if k in data})


def pytest_counts(output: str) -> dict[str, int]:
    """`{"xfailed": 1, "passed": 2}` from pytest's final summary line."""
    lines = [line for line in output.splitlines() if _COUNTS.search(line)]
    if not lines:
        return {}
    return {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in _COUNTS.findall(lines[-1])}


def verify_xfail(runner: TreeRunner, path: str, timeout_s: float) -> XfailCheck:
    """Run `path` in the sandbox: it must end with >= 1 xfailed and no failure, error or XPASS."""
    runner.repack()
    result = runner.run(pytest_argv(path), timeout_s)
    counts = pytest_counts(result.output.text())
    bad = counts.get("failed", 0) + counts.get("error", 0) + counts.get("xpassed", 0)
    ok = result.exit_code == 0 and counts.get("xfailed", 0) >= 1 and not bad
    if result.timed_out:
        summary = f"timed out after {timeout_s:.0f} s"
    else:
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or f"exit code {result.exit_code}"
    return XfailCheck(xfailed=ok, summary=summary, counts=counts, exit_code=result.exit_code,
                      timed_out=result.timed_out, output=result.output.tail_text(3000))
