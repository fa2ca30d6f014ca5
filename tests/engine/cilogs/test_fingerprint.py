"""CI fingerprints: stable across runs and shards, different for different failures."""

from __future__ import annotations

import pytest

from app.engine.cilogs.fingerprint import ci_fingerprint, normalize_job_name, short_fingerprint


@pytest.mark.parametrize(
    ("job", "normalized"),
    [
        ("linux-jammy / test (default, 1, 5, linux.2xlarge)", "linux-jammy / test (default, linux.2xlarge)"),
        ("linux-jammy / test (default, 4, 5, linux.2xlarge)", "linux-jammy / test (default, linux.2xlarge)"),
        ("win / test (default, 2, 3)", "win / test (default)"),
        ("tests 2/4", "tests"),
        ("unit (shard-3)", "unit"),
        ("gpu tests shard 2 of 8", "gpu tests"),
        ("build (3.11)", "build (3.11)"),  # a version is configuration, not a shard
        ("cuda12.1-py3.10 / build", "cuda12.1-py3.10 / build"),
    ],
)
def test_shard_markers_are_removed_and_configuration_kept(job, normalized):
    assert normalize_job_name(job) == normalized


def _fp(job="pull / test (default, 1, 5)", test="test/a.py::test_x", exc="RuntimeError", msg="boom", repo="o/r"):
    return ci_fingerprint(repo, job, test, exc, msg)


def test_same_failure_in_another_shard_and_run_has_the_same_fingerprint():
    first = _fp(msg="index 1000 out of range at 0x7f00aa12 in /tmp/pytest-12/x.py after 3.2s")
    again = _fp(job="pull / test (default, 3, 5)", msg="index 87 out of range at 0x5500bb00 in /tmp/pytest-99/y.py after 11s")
    assert first == again
    assert len(first) == 64 and int(first, 16) >= 0


@pytest.mark.parametrize(
    "other",
    [
        {"repo": "o/other"},
        {"job": "pull / test (distributed, 1, 5)"},
        {"test": "test/a.py::test_y"},
        {"exc": "ValueError"},
        {"msg": "a different error"},
    ],
)
def test_each_identifying_part_changes_the_fingerprint(other):
    assert _fp(**other) != _fp()


def test_short_form_is_a_prefix_for_branch_names():
    fingerprint = _fp()
    assert short_fingerprint(fingerprint) == fingerprint[:12]
