"""`app.approvals`: an approval holds for the exact code approved, nothing else."""

from __future__ import annotations

from app import approvals


def test_an_approval_holds_for_the_digest_approved_only():
    code_a, code_b = approvals.digest("print('a')\n"), approvals.digest("print('b')\n")
    params = approvals.approve({"repo": "o/r"}, "wanda", code_a)
    assert params == {"repo": "o/r", "approved_by": "wanda", "approved_sha256": code_a}
    assert approvals.approved(params, code_a) and not approvals.approved(params, code_b)


def test_a_name_without_a_digest_approves_no_code():
    """Runs approved before digests (or a forged `approved_by` alone) approve nothing."""
    assert not approvals.approved({"approved_by": "wanda"}, approvals.digest("x"))
    assert not approvals.approved({"approved_sha256": approvals.digest("x")}, approvals.digest("x"))


def test_a_new_approval_replaces_the_old_digest():
    old = approvals.approve({}, "wanda", approvals.digest("a"))
    assert approvals.approve(old, "otto", None) == {"approved_by": "otto"}  # a gate with no code
    assert approvals.approve(old, "otto", "f" * 64)["approved_sha256"] == "f" * 64


def test_a_local_run_of_the_operator_runs_any_code():
    params = approvals.trusted_local("scrub demo")
    assert approvals.approved(params, approvals.digest("anything at all"))


def test_the_digest_is_sha256_of_the_utf8_text_and_never_fails():
    assert approvals.digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert len(approvals.digest("\ud800 lone surrogate")) == 64
