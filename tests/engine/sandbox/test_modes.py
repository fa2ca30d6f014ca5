"""The test harness's mode claims: a claimed mode that cannot run fails under CI=true (never a
silent skip), an unclaimed one is skipped."""

from __future__ import annotations

import pytest

from tests.engine.sandbox import modes


def test_a_claimed_mode_that_cannot_run_fails_under_ci(monkeypatch):
    monkeypatch.setenv("SCRUB_TEST_SANDBOX_MODES", "root,user")
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(modes.os, "geteuid", lambda: 1000)  # an ordinary user claiming root mode
    with pytest.raises(pytest.fail.Exception, match="root mode needs root"):
        modes.require_mode("root")
    monkeypatch.setattr(modes.shutil, "which", lambda name: None)  # and no bwrap at all
    with pytest.raises(pytest.fail.Exception, match="bwrap"):
        modes.require_mode("user")


def test_without_ci_a_missing_claimed_mode_is_skipped_and_unclaimed_modes_always_are(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("SCRUB_TEST_SANDBOX_MODES", "root")
    monkeypatch.setattr(modes.os, "geteuid", lambda: 1000)
    with pytest.raises(pytest.skip.Exception, match="root mode needs root"):
        modes.require_mode("root")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.skip.Exception, match="not claimed"):
        modes.require_mode("user")


def test_default_claims_follow_who_runs_the_tests(monkeypatch):
    monkeypatch.delenv("SCRUB_TEST_SANDBOX_MODES", raising=False)
    monkeypatch.setattr(modes.os, "geteuid", lambda: 0)
    assert modes.claimed_modes() == ("root", "user")
    monkeypatch.setattr(modes.os, "geteuid", lambda: 1000)
    assert modes.claimed_modes() == ("user",)
