"""Sandbox checks of the generated test: the seed's "fails, then xfails, then passes" steps.

`check_test` writes one version of the test file into the worktree and runs that one test
with `pytest -v` in the sandbox, every device at once, and compares each device's status
with what it must be (`app.engine.fuzz.results.expected`). A failing device must also fail
with the bug's error: its exception class appears in the output as pytest prints it
(`E   ZeroDivisionError: ...`), and its message too (numbers masked: a minimized program
prints other values) unless the assertion was rewritten to
`assertEqual` (then only the class can match). `related_tests` runs the rest of the test
file restricted to the program's operations (`-k`).
"""

from __future__ import annotations

from typing import Any

from app.engine.fuzz.results import node_statuses
from app.engine.git.tree import Checkout
from app.engine.sandbox.treerun import TreeRunner, pytest_argv
from app.pipelines.kit.testcheck import judge


def check_test(runner: TreeRunner, worktree: Checkout, generated: dict[str, Any], *, marked: bool,
               devices: list[str], failing: list[str], exception: str, message: str,
               timeout_s: float) -> dict[str, Any]:
    """Run the test (marked or not) in the sandbox; `ok` when every device shows what it must
    (`app.pipelines.kit.testcheck.judge`, the same rule as the CI and issue tests)."""
    worktree.write_text(generated["path"], generated["marked" if marked else "unmarked"])  # never through a link
    runner.repack()
    result = runner.run(pytest_argv(generated["path"], extra=["-rA", "-k", generated["name"]]), timeout_s)
    check = judge(result.output.text(), generated["name"], marked=marked, devices=devices, failing=failing,
                  style=generated.get("style", "pytest"), exception=exception, message=message,
                  rewrote_assertion=bool(generated.get("rewrote_assertion")), timed_out=result.timed_out,
                  timeout_s=timeout_s)
    return check.to_dict() | {"exit_code": result.exit_code}


def related_tests(runner: TreeRunner, generated: dict[str, Any], operations: list[str],
                  timeout_s: float) -> dict[str, Any]:
    """The test file's other tests of the same operations; `ok` when they pass (or there are none)."""
    ops = [op for op in operations[:3] if op.isidentifier()]
    if not ops:
        return {"ok": True, "count": 0, "summary": "no operation to select related tests by", "failed": []}
    selection = f"({' or '.join(ops)}) and not {generated['name']}"
    runner.repack()
    result = runner.run(pytest_argv(generated["path"], extra=["-rA", "-k", selection]), timeout_s)
    output = result.output.text()
    statuses = node_statuses(output)
    failed = sorted(node for node, status in statuses.items() if status in ("FAILED", "ERROR"))
    if result.exit_code == 5:
        return {"ok": True, "count": 0, "summary": f"no related tests in {generated['path']} ({selection})",
                "failed": []}
    ok = result.exit_code == 0 and not failed
    summary = (f"{len(statuses) - len(failed)}/{len(statuses)} related tests passed "
               f"({generated['path']}, -k {selection!r})")
    return {"ok": ok, "count": len(statuses), "failed": failed, "summary": summary,
            "output": "" if ok else output[-4000:]}
