"""`/scrub` words from the run kinds: what each resolves to, and the help made of their lines."""

from __future__ import annotations

import pytest

from app.domain import ActOnLatest, CommandRequest, CreateRun, Lifecycle, Refuse, RerunFrom
from app.pipelines import commands, registry
from app.pipelines.issue import KIND as ISSUE

URL = "https://github.com/o/r/issues/5"


def request(word: str, args: str = "") -> CommandRequest:
    return CommandRequest(command=word, repo="o/r", issue=5, user="maintainer", installation_id=1, issue_url=URL,
                          args=args)


@pytest.mark.parametrize("word", ["", "help", "dance", "APPROVE"])
def test_a_word_no_kind_declares_resolves_to_nothing_the_help(word):
    assert commands.resolve(request(word)) is None


def test_lifecycle_words_act_on_the_latest_run_of_their_kind():
    assert commands.resolve(request("approve")) == ActOnLatest(Lifecycle.approve, "issue")
    retry = commands.resolve(request("retry"))
    assert (retry.action, retry.kind) == (Lifecycle.retry, "issue")
    assert (retry.otherwise.kind, retry.otherwise.trigger, retry.otherwise.target) == ("issue", "comment:retry", URL)
    assert retry.otherwise.params == {"repo": "o/r", "issue": 5, "url": URL, "requested_by": "maintainer"}


@pytest.mark.parametrize(("word", "flag"), [("bisect", "force_bisect"), ("minimize", "force_minimize")])
def test_force_words_redo_their_stage_or_start_a_run_with_the_flag(word, flag):
    action = commands.resolve(request(word))
    assert isinstance(action, RerunFrom)
    assert (action.kind, action.stage, action.flag, action.stages) == ("issue", word, flag, ISSUE.stage_names)
    assert action.otherwise.params[flag] is True and action.otherwise.trigger == f"comment:{word}"


def test_fuzz_starts_a_fuzz_run_or_answers_its_usage():
    action = commands.resolve(request("fuzz", "42 please"))
    assert isinstance(action, CreateRun)
    run = action.run
    assert (run.kind, run.target, run.trigger) == ("fuzz", "fuzz seed 42", "comment:fuzz")
    assert run.params == {"repo": "o/r", "fuzz-seed": "42", "trigger": "comment", "issue": 5,
                          "requested_by": "maintainer"}
    assert run.started.format(id=7) == "fuzz run 7 started for seed 42"
    for args in ("", "soon"):
        refused = commands.resolve(request("fuzz", args))
        assert isinstance(refused, Refuse) and refused.message.startswith("usage: /scrub fuzz <seed>")


def test_the_help_lists_every_word_of_every_kind_in_order():
    text = commands.help_text()
    assert text.startswith("Scrubbot commands (they need write permission on this repository):\n\n")
    lines = [line for line in text.splitlines() if line.startswith("- `/scrub ")]
    assert [line.split("`")[1] for line in lines] == [
        "/scrub approve", "/scrub retry", "/scrub bisect", "/scrub minimize", "/scrub stress", "/scrub test",
        "/scrub fuzz <seed>"]


def test_a_broken_kind_leaves_its_words_out_of_the_help(monkeypatch):
    monkeypatch.setitem(registry.PIPELINE_MODULES, "fuzz", "app.pipelines.not_written_yet")
    assert "/scrub fuzz" not in commands.help_text() and "/scrub approve" in commands.help_text()
    assert commands.resolve(request("fuzz", "42")) is None
