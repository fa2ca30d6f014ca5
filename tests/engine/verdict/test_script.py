"""What a repro says about its own result: checks, exit codes, BUG/OK prints, its own assert."""

from __future__ import annotations

import pytest

from app.engine.verdict.script import ScriptFacts, own_check_failed, says, verdict_of_text

EXITS_WHEN_FIXED = """import sys, torch
out = torch.ones(2).sum()
if out == 2:
    print("not reproduced: the result is right")
    sys.exit(1)
print("BUG: wrong sum")
"""


def test_exit_codes_and_verdict_prints_are_read_from_the_code():
    facts = ScriptFacts.read(EXITS_WHEN_FIXED)
    assert facts.self_checking and facts.exit_codes == (1,)
    assert facts.bug_says == ("BUG: wrong sum",) and facts.ok_says == ("not reproduced: the result is right",)


@pytest.mark.parametrize("text, meaning", [
    ("BUG: mismatch", "bug"), ("OK", "ok"), ("not reproduced", "ok"), ("results do not match", "bug"),
    ("no bug", "ok"), ("FAIL", "bug"), ("PASS", "ok"), ("max diff:", None), ("Error is large", None),
])
def test_what_a_printed_verdict_means(text, meaning):
    assert verdict_of_text(text) == meaning


def test_a_label_before_a_value_is_not_a_verdict():
    assert ScriptFacts.read("print('mismatch:', 3)").bug_says == ()


def test_the_last_verdict_printed_is_what_the_script_says():
    facts = ScriptFacts.read(EXITS_WHEN_FIXED)
    assert says(facts, "warming up\nnot reproduced: the result is right\n") == "ok"
    assert says(facts, "BUG: wrong sum\n") == "bug"
    assert says(facts, "nothing\n") is None


def test_a_failure_at_the_scripts_own_assert_is_its_own_check():
    own = 'Traceback (most recent call last):\n  File "/tmp/repro.py", line 4, in <module>\n    assert a == b\nAssertionError\n'
    inside = ('Traceback (most recent call last):\n  File "/tmp/repro.py", line 4, in <module>\n    out = f(x)\n'
              '  File "/usr/lib/torch/x.py", line 9, in f\n    assert cond\nAssertionError\n')
    assert own_check_failed(own) and not own_check_failed(inside)
