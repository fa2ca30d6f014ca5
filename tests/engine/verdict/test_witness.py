"""No "fixed" without a witness: which evidence counts, on both sides."""

from __future__ import annotations

from app.engine.verdict.script import ScriptFacts
from app.engine.verdict.witness import no_witness_reason, older_release, release_to_try, self_check

REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "bad"}
CHECKS = ScriptFacts(self_checking=True)


def test_the_reporters_self_checking_script_shown_failing_is_a_witness():
    assert self_check(trusted=True, role="repro", verbatim=True, reported=REPORTED, facts=CHECKS).holds


def test_anything_less_is_no_self_check_witness():
    base = {"trusted": True, "role": "repro", "verbatim": True, "reported": REPORTED, "facts": CHECKS}
    quoted = {"kind": "exception", "exception": "", "message": "a message quoted in a comment, maybe a remark"}
    for change in ({"trusted": False}, {"role": "control"}, {"verbatim": False}, {"reported": None},
                   {"facts": ScriptFacts()}, {"reported": quoted}):
        assert self_check(**(base | change)) is None, change


def test_the_older_release_is_the_reporters_when_provisioned_else_the_oldest():
    labels = ["2.4.1", "2.8.0", "2.13.0"]
    assert release_to_try(labels, "2.13.0", "2.8.0") == "2.8.0"
    assert release_to_try(labels, "2.13.0", "1.13.1") == "2.4.1"
    assert release_to_try(labels, "2.13.0", None) == "2.4.1"
    assert release_to_try(["local"], "local", "2.1.0") is None


def test_only_a_reproducing_run_on_the_older_release_witnesses():
    assert older_release("2.4.1", ["passes-now", "reproduces"], "RuntimeError: bad").holds
    missing = older_release("2.4.1", ["fixed", "fixed", "fixed"], "passed")
    assert not missing.holds and "did not fail" in missing.why


def test_the_reason_names_what_is_missing():
    why = no_witness_reason(trusted=True, role="repro", verbatim=True, reported=REPORTED, facts=ScriptFacts(),
                            older_tried=False)
    assert "no older PyTorch release is provisioned" in why
    assert "someone other" in no_witness_reason(trusted=False, role="repro", verbatim=True, reported=REPORTED,
                                                facts=CHECKS, older_tried=False)
