"""The real-issues scorer: a wrong "fixed" is the worst outcome, and "passes now" on a live bug
is wrong (its README's rule), while notices that claim nothing are honest."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("real_issues_run", ROOT / "benchmarks" / "real_issues" / "run.py")
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)


def test_scores():
    assert run.score("reproduces", "reproduces", False) == "right"
    assert run.score("reproduces", "fixed", False) == "WRONGLY CLOSED"
    assert run.score("reproduces", "passes-now", False) == "wrong"
    assert run.score("fixed", "passes-now", False) == "honest-inconclusive"
    assert run.score("reproduces", "inconclusive", False) == "honest-inconclusive"
    assert run.score("reproduces", "different-error", False) == "wrong"
    assert run.score("fixed", "different-error", False) == "honest-inconclusive"
    assert run.score("fixed", "reproduces", False) == "wrong"
    assert run.score("fixed", "fixed", True) == "wrong"  # a run that broke scores nothing
