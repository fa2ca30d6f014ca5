"""One vocabulary in use: run and stage statuses and verdicts are compared as the domain's enums.

A comparison with a string that spells one of `RunStatus`, `StageStatus`, `Verdict` or
`RerunVerdict` (`status == "done"`, `verdict in ("reproduces", ...)`) anywhere in `app/` or
`workers/` fails here, and so does one in a status-page template; the few that compare another
vocabulary spelled the same way are named below with what they are.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from app.domain import RerunVerdict, RunStatus, StageStatus, Verdict

ROOT = Path(__file__).resolve().parents[1]
WORDS = {word.value for vocabulary in (RunStatus, StageStatus, Verdict, RerunVerdict) for word in vocabulary}
OTHER_VOCABULARIES = {
    ("app/engine/issue/triage.py", "closed"): "GitHub's issue state",
    ("app/engine/issue/triage.py", "duplicate"): "a label's name",
    ("app/engine/issue/triage.py", "tracker"): "a label's name",
    ("app/engine/issue/triage.py", "better-engineering"): "a label's name",
    ("app/engine/verdict/bisect.py", "fixed"): "a bisection's direction",
    ("app/engine/verdict/culprit.py", "fixed"): "a bisection's direction",
    ("workers/results.py", "failed"): "a repro job's outcome (`workers.jobs.ReproResult`)",
    ("app/pipelines/issue/runner.py", "deterministic"): "the flaky rule's `Literal` answer",
    ("app/pipelines/issue/runner.py", "flaky"): "the flaky rule's `Literal` answer",
}
TEMPLATE_COMPARISON = re.compile(r"""(?:status|verdict)\s*(?:==|!=)\s*["']([\w-]+)["']""")


def spelled_out(source: str) -> list[tuple[int, str]]:
    """(line, word) of each comparison with a string that is one of the domain's words."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        for side in [node.left, *node.comparators]:
            items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            found += [(node.lineno, item.value) for item in items
                      if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value in WORDS]
    return found


def test_statuses_and_verdicts_are_compared_as_enums():
    modules = sorted([*ROOT.glob("app/**/*.py"), *ROOT.glob("workers/**/*.py")])
    found = [f"{path.relative_to(ROOT)}:{line}: {word!r}" for path in modules if path.name != "domain.py"
             for line, word in spelled_out(path.read_text())
             if (str(path.relative_to(ROOT)), word) not in OTHER_VOCABULARIES]
    assert not found, "compare with app.domain's enums (RunStatus, StageStatus, Verdict...):\n" + "\n".join(found)


def test_templates_compare_statuses_as_enums():
    found = [f"{path.relative_to(ROOT)}: {word!r}" for path in sorted(ROOT.glob("app/web/templates/*.html"))
             for word in TEMPLATE_COMPARISON.findall(path.read_text())]
    assert not found, found


def test_the_scan_sees_a_spelled_out_word():
    assert spelled_out('if run.status == "done" or verdict in ("reproduces", "x"):\n    pass\n') == [
        (1, "done"), (1, "reproduces")]
