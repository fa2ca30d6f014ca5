"""A re-check's runs: cold first, then forked repeats, sized by the plan; the answer of each kind."""

from __future__ import annotations

import pytest

from app.engine.verdict.bisect_probe import ABSENT, REPRODUCES, UNKNOWN, ProbePlan
from app.pipelines.kit.probes import probe_on, recheck
from app.settings import Settings
from tests.pipelines.envs import make_envs, remove

REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "the bug is here",
            "expect": "RuntimeError: the bug is here"}


@pytest.fixture(scope="module")
def python():
    envs, root = make_envs(["build"])
    yield envs["build"]
    remove(root)


SETTINGS = Settings(sandbox="bwrap", repro_timeout=30)


def test_clean_runs_until_the_plan_says_absent_the_repeats_forked(python):
    answer, last = recheck(SETTINGS, python, "print('fine')\n", REPORTED, ProbePlan(5, 0.5), label="build")
    assert (answer.outcome, answer.runs) == (ABSENT, 5)
    assert last["mode"] == "fork" and last["environment"] == "build"


def test_a_reproducing_first_run_settles_it_at_once(python):
    answer, last = recheck(SETTINGS, python, "raise RuntimeError('the bug is here')\n", REPORTED, ProbePlan(9, 0.3))
    assert (answer.outcome, answer.runs) == (REPRODUCES, 1) and last["exception"] == "RuntimeError"


def test_another_error_is_untested_with_what_it_did(python):
    answer, _ = recheck(SETTINGS, python, "import no_such_module\n", REPORTED, ProbePlan(9, 0.3))
    assert answer.outcome == UNKNOWN and "no_such_module" in answer.why


def test_a_script_that_fails_only_when_forked_is_rerun_cold_and_found_clean(python):
    # The forked child has the zygote's modules; a cold run does not: the forked runs "reproduce".
    forked_only = ("import sys\nif 'scrub_zygote_candidate' in sys.modules:\n"
                   "    raise RuntimeError('the bug is here')\n")
    answer, last = recheck(SETTINGS, python, forked_only, REPORTED, ProbePlan(4, 0.5))
    assert (answer.outcome, answer.runs) == (ABSENT, 4)  # the disagreeing forked runs are not evidence
    assert last.get("mode") != "fork"


def test_the_bisection_probe_runs_cold(python):
    answer = probe_on(SETTINGS, python, "print('fine')\n", REPORTED, ProbePlan(2, 0.8), label="build")
    assert (answer.outcome, answer.runs) == (ABSENT, 2)
