"""The issue pipeline end to end: the fake GitHub over HTTP, the real client, the real sandbox.

Every branch of seed 001 is one test. Most repros are plain Python (a `raise` stands in for the
bug) so the suite stays fast; the `torch` ones run real PyTorch in the sandbox.
"""

from __future__ import annotations

import sys

import pytest

from app import approvals
from app.github.client import GitHubClient
from app.pipelines.base import Finished, run_pipeline
from app.pipelines.memory import MemoryRunContext
from app.engine.issue.markdown import Repro
from app.pipelines.base import CPU_QUEUE, DEFAULT_QUEUE, GPU_QUEUE
from app.pipelines.issue.stages import STAGES, _code_queue, _poster_words
from app.pipelines.issue.stages import triage as triage_stage
from app.pipelines.issue.state import IssueState
from app.pipelines.state import plain
from app.settings import Settings
from tests.fakes.fake_github import FakeGitHub, fake_github  # noqa: F401  (fixture)

REPO = "octo/torchlike"
MARKER_PREFIX = "<!-- scrubbot:run="
FENCE = "```"


def py(code: str) -> str:
    return f"{FENCE}python\n{code}\n{FENCE}"


def traceback(line: str) -> str:
    return f"{FENCE}\nTraceback (most recent call last):\n  File \"repro.py\", line 1, in <module>\n{line}\n{FENCE}"


def settings(**overrides) -> Settings:
    """Experiments and the offered test are off unless a test turns them on (test_diagnosis.py,
    test_testcase.py cover them)."""
    overrides = {"experiments_budget_s": 0, "offer_tests": False, **overrides}
    return Settings(sandbox="bwrap", repro_timeout=overrides.pop("repro_timeout", 20), **overrides)


def scrub(fake: FakeGitHub, number: int, *, run_id: int = 1, ctx: MemoryRunContext | None = None,
          config: dict | None = None, **params) -> tuple[Finished, MemoryRunContext]:
    """Run the pipeline once for issue `number`: a fresh context (with `config` settings and
    `params` run params) unless one is given to resume."""
    if ctx is None:
        client = GitHubClient(token="test-token", base_url=fake.url)
        ctx = MemoryRunContext(run_id=run_id, github=client, settings=settings(**(config or {})),
                               params={"repo": REPO, "issue": number, **params})
    return run_pipeline(STAGES, ctx, any_queue=True), ctx


def trusted_issue(fake: FakeGitHub, body: str, *, title: str = "bug", user: str = "maintainer", **kw) -> int:
    """An issue by a collaborator (so a clean repro runs without approval)."""
    fake.add_collaborator(REPO, user)
    return fake.add_issue(REPO, title=title, body=body, user=user, **kw)["number"]


def our_comments(fake: FakeGitHub, number: int) -> list[str]:
    return [c["body"] for c in fake.comments(REPO, number) if MARKER_PREFIX in (c["body"] or "")]


def state_of(ctx: MemoryRunContext) -> IssueState:
    """The state the run left, as the next stage would see it (its stored outputs, loaded)."""
    merged: dict = {}
    for record in ctx.stages:
        merged.update(record.output)
    return IssueState.load(merged)


def status_of(ctx: MemoryRunContext, stage: str) -> str:
    return next(r.status for r in reversed(ctx.stages) if r.stage == stage)


# -- the stages over the typed state, without the sandbox -----------------------------------


def test_the_code_queue_follows_the_typed_state():
    assert _code_queue(IssueState(needs_cuda=True)) == GPU_QUEUE
    assert _code_queue(IssueState(needs_cuda=False)) == CPU_QUEUE
    assert _code_queue(IssueState(needs_cuda=True, stop=True)) == DEFAULT_QUEUE  # skipped: no GPU needed


def test_the_posters_words_are_the_title_and_body_then_their_own_comments():
    issue = {"title": "slow", "body": "on Windows 11", "user": {"login": "op"}}
    comments = [{"body": "me too", "user": {"login": "other"}}, {"body": "still", "user": {"login": "op"}},
                {"body": None, "user": {"login": "op"}}]
    assert _poster_words(issue, comments) == ["slow\n\non Windows 11", "still", ""]


def test_triage_runs_the_cpu_part_and_stores_that_it_dropped_the_cuda_lines():
    source = "import torch\nx = torch.ones(3)\nprint(x.sum())\ny = x.cuda()\nprint(y.sum())\n"
    state = IssueState(issue={"title": "Wrong results in a basic sum on CPU (results are correct on GPU)!",
                              "body": "", "state": "open", "labels": [], "user": {"login": "op"}},
                       repro=Repro(source, "op", "https://github.com/o/r/issues/1", "t", True))
    output = plain(triage_stage(None, state).output)
    IssueState.check_output("triage", output)
    assert output["needs_cuda"] is False and output["triage"]["cpu_source"] == output["repro"]["source"]
    assert output["repro"]["cuda_dropped"] is True and "cuda" not in output["repro"]["source"]
    assert IssueState.load(output).repro.url == "https://github.com/o/r/issues/1"


# -- verdicts that run code ---------------------------------------------------------------

BLOAT = "\n".join(f"unused_{i} = [{i}] * {i}" for i in range(24))


def test_reproduces_and_minimizes(fake_github):
    source = f"import os\nimport json\n{BLOAT}\nraise RuntimeError('index 7 is out of bounds for dimension 0')"
    number = trusted_issue(fake_github, "### 🐛 Describe the bug\n" + py(source) + "\n" +
                           traceback("RuntimeError: index 7 is out of bounds for dimension 0"),
                           labels=["needs reproduction"])
    finished, ctx = scrub(fake_github, number)
    assert (finished.status, finished.verdict) == ("succeeded", "reproduces")
    (comment,) = our_comments(fake_github, number)
    assert comment.startswith("This issue still reproduces on PyTorch ")
    minimized = state_of(ctx).minimized.source
    assert "unused_" not in minimized and "RuntimeError" in minimized
    assert f"{FENCE}python\n{minimized.strip()}\n{FENCE}" in comment
    assert "needs reproduction" not in fake_github.label_names(REPO, number)
    assert fake_github.issue(REPO, number)["state"] == "open"
    assert set(ctx.artifacts) == {"report.md", "repro_original.py", "repro_minimized.py"}
    assert "## Execution Log" in ctx.artifacts["report.md"][1]


def test_a_pass_without_a_witness_is_passes_now_labelled_and_left_open(fake_github):
    # The script does not check itself and no older release is provisioned: nothing shows that
    # this script ever failed (it may be a control block, or need what this worker lacks).
    number = trusted_issue(fake_github, py("x = [1, 2][0]\nprint(x)") + "\n" +
                           traceback("IndexError: list index out of range"))
    finished, ctx = scrub(fake_github, number)
    assert finished.verdict == "passes-now"
    assert state_of(ctx).reproduction.runs == 5  # "passes now" needs no 14-run proof: it closes nothing
    (comment,) = our_comments(fake_github, number)
    assert "no witness that this script ever showed the bug" in comment and "no older PyTorch release" in comment
    assert "no longer reproduces" not in comment
    assert fake_github.issue(REPO, number)["state"] == "open"
    assert "passes now" in fake_github.label_names(REPO, number)


@pytest.fixture
def old_and_new():
    from tests.pipelines.envs import make_envs, remove

    envs, root = make_envs(["old", "new"])
    yield ",".join(f"{label}={python}" for label, python in envs.items())  # SCRUB_ENVIRONMENTS
    remove(root)


# Fails with IndexError on the environment named "old" only, and checks nothing itself.
ONLY_OLD_FAILS = "import sys\nitems = [1]\nprint(items[int(sys.prefix.endswith('old'))])"


def test_fixed_is_witnessed_on_an_older_release_commented_and_closed(fake_github, old_and_new):
    number = trusted_issue(fake_github, py(ONLY_OLD_FAILS) + "\n" + traceback("IndexError: list index out of range"))
    finished, ctx = scrub(fake_github, number, config={"environments": old_and_new})
    assert finished.verdict == "fixed"
    witness = state_of(ctx).witness
    assert (witness.kind, witness.environment) == ("older-release", "old")
    (comment,) = our_comments(fake_github, number)
    assert comment.startswith("This issue no longer reproduces on PyTorch ")
    assert "this script demonstrated the bug and no longer does" in comment
    assert "Witness: on PyTorch old the same script fails with the reported failure" in comment
    issue = fake_github.issue(REPO, number)
    assert (issue["state"], issue["state_reason"]) == ("closed", "completed")


def test_a_script_that_passes_on_the_older_release_too_witnesses_nothing(fake_github, old_and_new):
    number = trusted_issue(fake_github, py("print([1, 2][0])") + "\n" + traceback("IndexError: list index out of range"))
    finished, ctx = scrub(fake_github, number, config={"environments": old_and_new})
    assert finished.verdict == "passes-now"
    assert "on PyTorch old it did not fail with the reported failure either" in state_of(ctx).witness.why
    assert fake_github.issue(REPO, number)["state"] == "open"


def test_the_reporters_self_checking_script_shown_failing_is_its_own_witness(fake_github):
    source = "x = [1, 2, 3]\nassert sum(x) == 6, 'wrong sum'"
    number = trusted_issue(fake_github, py(source) + "\n" + traceback("AssertionError: wrong sum"))
    finished, ctx = scrub(fake_github, number)
    assert (finished.verdict, state_of(ctx).witness.kind) == ("fixed", "self-check")
    assert state_of(ctx).reproduction.runs == 14  # closing needs the full proof
    assert fake_github.issue(REPO, number)["state"] == "closed"


def test_a_different_error_reports_both_and_keeps_the_issue_open(fake_github):
    number = trusted_issue(fake_github, py("raise TypeError('unsupported operand')") + "\n" +
                           traceback("ValueError: shapes do not match"))
    finished, _ = scrub(fake_github, number)
    assert finished.verdict == "different-error"
    (comment,) = our_comments(fake_github, number)
    assert "TypeError: unsupported operand" in comment and "ValueError: shapes do not match" in comment
    assert fake_github.issue(REPO, number)["state"] == "open"


def test_a_package_the_workers_lack_is_reported_not_called_fixed(fake_github):
    number = trusted_issue(fake_github, py("import not_installed_pkg\nnot_installed_pkg.run()") + "\n" +
                           traceback("RuntimeError: model failed"))
    finished, _ = scrub(fake_github, number)
    assert finished.verdict == "missing-dependency"
    (comment,) = our_comments(fake_github, number)
    assert "`not_installed_pkg`" in comment and "no longer reproduces" not in comment
    assert fake_github.issue(REPO, number)["state"] == "open"


def test_an_error_the_title_says_is_missing_is_not_the_reported_failure(fake_github):
    """The class of real issue #196106: the title says the call returns silently instead of
    raising, and a second block quotes the error sibling calls raise. That error is what the
    report asks for: once the call raises it (the fix), the run must not read "still
    reproduces"; and while the call still returns silently, its clean run is not "passes now"."""
    body = ("Out-of-range indices are wrapped:\n" +
            py("values = [10, 20, 30]\nvalues[9]  # -> 10 (silently returns values[9 % 3])") +
            "\n\nEvery sibling raises on the same index:\n\n" +
            py("other(values, 9)  # IndexError: list index out of range"))
    number = trusted_issue(fake_github, body, title="lookup(..., i) silently wraps an out-of-range index instead of raising")
    finished, ctx = scrub(fake_github, number)
    state = state_of(ctx)
    assert state.reported is None and state.expected_exception == "IndexError"
    assert finished.verdict == "inconclusive"
    (comment,) = our_comments(fake_github, number)
    assert "still reproduces" not in comment and fake_github.issue(REPO, number)["state"] == "open"


def test_a_reported_hang_that_times_out_reproduces(fake_github):
    number = trusted_issue(fake_github, "The loader hangs forever:\n" + py("import time\ntime.sleep(600)"))
    finished, ctx = scrub(fake_github, number, config={"repro_timeout": 3})
    assert finished.verdict == "reproduces"
    assert state_of(ctx).reproduction.result["outcome"] == "timeout"


def test_a_reported_segfault_that_gets_sigsegv_reproduces(fake_github):
    number = trusted_issue(fake_github, py("import ctypes\nctypes.string_at(0)") + "\nSegmentation fault (core dumped)")
    finished, ctx = scrub(fake_github, number)
    assert finished.verdict == "reproduces"
    assert state_of(ctx).reproduction.result["signal"] == "SIGSEGV"
    assert our_comments(fake_github, number)[0].startswith("This issue still reproduces")


def test_the_run_log_holds_what_the_repro_printed_and_each_runs_outcome_is_counted(fake_github):
    source = "print('loading the model <b>')\nimport sys\nprint('to stderr', file=sys.stderr)\nraise ValueError('bad shape')"
    number = trusted_issue(fake_github, py(source) + "\n" + traceback("ValueError: bad shape"))
    finished, ctx = scrub(fake_github, number)
    assert finished.verdict == "reproduces"
    [printed] = [line for line in ctx.lines if line.startswith("repro output on ")]
    assert "loading the model <b>" in printed and "to stderr" in printed and "ValueError: bad shape" in printed
    reproduction = state_of(ctx).reproduction
    assert sum(reproduction.outcomes.values()) == reproduction.runs and set(reproduction.outcomes) == {"error"}  # an uncaught exception


# -- triage: nothing runs -------------------------------------------------------------------


def test_a_closed_issue_is_left_untouched(fake_github):
    number = trusted_issue(fake_github, py("raise RuntimeError('x')"), state="closed", state_reason="completed")
    finished, ctx = scrub(fake_github, number)
    assert finished.verdict == "closed"
    assert fake_github.writes == []
    assert "reproduce" not in [r.stage for r in ctx.stages if r.status == "done"]


@pytest.mark.parametrize("title, body, label", [
    ("[Feature Request] a fused op", "### 🚀 The feature, motivation and pitch\nPlease add it.", "feature"),
    ("[Tracker] dynamo graph breaks", "- [ ] #10 first\n- [ ] #11 second", "tracker"),
    ("Crash in conv2d", "It crashes when I run my model, no idea why.", "needs reproduction"),
])
def test_non_actionable_issues_get_their_label_and_no_comment(fake_github, title, body, label):
    number = trusted_issue(fake_github, body, title=title)
    finished, _ = scrub(fake_github, number)
    assert finished.status == "succeeded"
    assert label in fake_github.label_names(REPO, number)
    assert our_comments(fake_github, number) == []
    assert fake_github.issue(REPO, number)["state"] == "open"


def test_a_screenshot_only_repro_asks_for_text(fake_github):
    number = trusted_issue(fake_github, "See the error:\n![screenshot](https://github.com/user-attachments/assets/abc)")
    finished, _ = scrub(fake_github, number)
    assert finished.verdict == "screenshot-only"
    assert "needs reproduction" in fake_github.label_names(REPO, number)
    (comment,) = our_comments(fake_github, number)
    assert "screenshot" in comment


# -- review: approval -----------------------------------------------------------------------


def test_an_untrusted_risky_repro_waits_for_approval_then_runs(fake_github):
    source = "import os\nos.system('echo hi')\nraise RuntimeError('boom')"
    number = fake_github.add_issue(REPO, title="bug", body=py(source) + "\n" + traceback("RuntimeError: boom"),
                                   user="stranger")["number"]
    finished, ctx = scrub(fake_github, number)
    assert finished.status == "awaiting_approval" and ctx.status == "awaiting_approval"
    (notice,) = our_comments(fake_github, number)
    assert "/scrub approve" in notice and "os.system" in notice
    assert "reproduce" not in [r.stage for r in ctx.stages]

    shown = next(r for r in ctx.stages if r.stage == "review").output[approvals.OUTPUT_KEY]
    held = state_of(ctx).repro.source  # the code the run holds, which the approval view shows
    assert held.strip() == source and shown == approvals.digest(held)
    ctx.params.update(approvals.approve(ctx.params, "maintainer", shown))  # what `/scrub approve` sets
    finished, ctx = scrub(fake_github, number, ctx=ctx)
    assert finished.verdict == "reproduces"
    (comment,) = our_comments(fake_github, number)  # the notice was edited, not a second comment
    assert comment.startswith("This issue still reproduces")


def test_an_approval_is_of_the_code_approved_not_of_the_run(fake_github):
    """Repro A approved; the author edits the issue to repro B; a retry (the run's stages
    forgotten, its params kept, as `/scrub retry` and a relabel of a stranded run do) must not
    run B under A's approval."""
    source_a = "import os\nos.system('echo a')\nraise RuntimeError('boom')"
    number = fake_github.add_issue(REPO, title="bug", body=py(source_a) + "\n" + traceback("RuntimeError: boom"),
                                   user="stranger")["number"]
    _, ctx = scrub(fake_github, number)
    ctx.params.update(approvals.approve(ctx.params, "maintainer", approvals.digest(state_of(ctx).repro.source)))
    source_b = "import os\nos.system('echo b > /tmp/b')\nraise RuntimeError('boom')"
    fake_github.issue(REPO, number)["body"] = py(source_b) + "\n" + traceback("RuntimeError: boom")
    finished, retried = scrub(fake_github, number, **ctx.params)  # a fresh run, the same params
    assert finished.status == "awaiting_approval"
    assert [r.stage for r in retried.stages][-1] == "review"  # B did not run
    review = next(r for r in retried.stages if r.stage == "review")
    assert "maintainer approved other code" in review.summary
    assert state_of(retried).repro.source.strip() == source_b
    assert review.output[approvals.OUTPUT_KEY] == approvals.digest(state_of(retried).repro.source)


def test_a_clean_repro_by_a_stranger_also_waits(fake_github):
    number = fake_github.add_issue(REPO, body=py("raise RuntimeError('x')"), user="stranger")["number"]
    finished, _ = scrub(fake_github, number)
    assert finished.status == "awaiting_approval"


@pytest.mark.parametrize("role", ["read", "triage"])
def test_a_clean_repro_by_a_collaborator_without_write_permission_waits(fake_github, role):
    fake_github.add_collaborator(REPO, "reed", role=role)  # a collaborator, but not a writer
    number = fake_github.add_issue(REPO, body=py("raise RuntimeError('x')"), user="reed")["number"]
    finished, ctx = scrub(fake_github, number)
    assert finished.status == "awaiting_approval"
    assert [r.stage for r in ctx.stages][-1] == "review"  # nothing ran
    review = next(r for r in ctx.stages if r.stage == "review")
    assert review.output["collaborator"] is False and f"reed's role is {role}" in review.summary
    (notice,) = our_comments(fake_github, number)
    assert "write access" in notice and "/scrub approve" in notice


def test_a_clean_repro_waits_when_github_cannot_say_who_its_author_is(fake_github):
    number = trusted_issue(fake_github, py("raise RuntimeError('x')"))  # by a writer
    fake_github.inject_failure("GET", "/collaborators/maintainer/permission", status=403, message="Forbidden")
    finished, ctx = scrub(fake_github, number)
    assert finished.status == "awaiting_approval"
    assert "maintainer's role is unknown" in next(r.summary for r in ctx.stages if r.stage == "review")


def test_a_clean_repro_by_a_stranger_runs_when_a_triager_labelled_the_issue(fake_github):
    fake_github.add_collaborator(REPO, "triager", role="triage")
    number = fake_github.add_issue(REPO, body=py("raise RuntimeError('x')"), user="stranger")["number"]
    finished, ctx = scrub(fake_github, number, labeled_by="triager")
    assert finished.verdict == "reproduces"
    assert "labelled by triager (triage)" in next(r.summary for r in ctx.stages if r.stage == "review")


def test_a_risky_repro_waits_for_approval_even_when_a_maintainer_labelled_it(fake_github):
    fake_github.add_collaborator(REPO, "boss", role="admin")
    number = fake_github.add_issue(REPO, body=py("import os\nos.system('id')"), user="stranger")["number"]
    finished, _ = scrub(fake_github, number, labeled_by="boss")
    assert finished.status == "awaiting_approval"


def test_a_label_by_someone_without_triage_permission_is_ignored_without_a_write(fake_github):
    number = trusted_issue(fake_github, py("raise RuntimeError('x')"))
    before = len(fake_github.writes_to())
    finished, ctx = scrub(fake_github, number, labeled_by="drive-by")
    assert (finished.status, finished.verdict) == ("skipped", "ignored")
    assert [r.stage for r in ctx.stages] == ["fetch"]
    assert len(fake_github.writes_to()) == before


def test_a_self_checking_repro_that_passes_now_is_fixed_and_says_what_happens_now(fake_github):
    source = "x = [1, 2, 3]\nprint('sum', sum(x))\nassert sum(x) == 6, 'wrong sum'"
    number = trusted_issue(fake_github, "The sum is wrong:\n" + py(source) + "\n" + traceback("AssertionError: wrong sum"))
    finished, _ = scrub(fake_github, number)
    assert finished.verdict == "fixed"
    (comment,) = our_comments(fake_github, number)
    assert comment.startswith("This issue no longer reproduces")
    assert "Now: the repro runs to completion; its last output line is `sum 6` (14 runs" in comment


def test_a_self_checking_script_never_shown_failing_is_no_witness(fake_github):
    source = "x = [1, 2, 3]\nassert sum(x) == 6, 'wrong sum'"
    number = trusted_issue(fake_github, "The sum is wrong:\n" + py(source))
    finished, _ = scrub(fake_github, number)
    assert finished.verdict == "passes-now"
    assert fake_github.issue(REPO, number)["state"] == "open"


def test_a_pass_here_does_not_close_a_report_from_windows(fake_github):
    # pytorch/pytorch#154127: a C++ compile error on Windows; the snippet passes on Linux.
    body = ("Compile error:\n" + py("print(sum([1, 2]))") + "\n" + traceback("RuntimeError: C++ compile error")
            + "\nFile [~\\AppData\\Local\\anaconda3\\Lib\\site-packages\\torch\\_dynamo\\eval_frame.py]")
    number = trusted_issue(fake_github, body)
    finished, _ = scrub(fake_github, number)
    assert finished.verdict == "inconclusive"
    assert not any("closed" in str(w.json) for w in fake_github.writes_to("PATCH"))  # never closed


def test_still_reproduces_shows_the_failure_its_frame_and_the_rate(fake_github):
    source = "def check(v):\n    raise ValueError(f'bad value {v}')\ncheck(3)"
    number = trusted_issue(fake_github, py(source) + "\n" + traceback("ValueError: bad value 3"))
    finished, _ = scrub(fake_github, number)
    assert finished.verdict == "reproduces"
    (comment,) = our_comments(fake_github, number)
    assert "Observed in 5 of 5 runs (failure rate 100%, 95% interval 57-100%)" in comment
    assert "ValueError: bad value 3\n  at repro.py, line 2: raise ValueError(f'bad value {v}')" in comment


# -- selection and idempotence --------------------------------------------------------------


def test_several_repros_the_shorter_self_contained_one_by_a_commenter_is_used(fake_github):
    long = "import sys\n" + BLOAT + "\nraise RuntimeError('bad value 3')"
    number = trusted_issue(fake_github, py(long) + "\n" + traceback("RuntimeError: bad value 3"), user="op")
    fake_github.add_comment(REPO, number, "fails too:\n" + py("y = model(3)"), user="someone",
                            created_at="2030-01-01T00:00:01Z")
    short = fake_github.add_comment(REPO, number, "shorter:\n" + py("raise RuntimeError('bad value 3')"),
                                    user="helper", created_at="2030-01-01T00:00:02Z")
    fake_github.add_collaborator(REPO, "helper")
    finished, ctx = scrub(fake_github, number)
    assert state_of(ctx).repro.url == short["html_url"]
    assert finished.verdict == "reproduces"
    assert f"Repro used: {short['html_url']} (by helper)." in our_comments(fake_github, number)[0]


def test_a_retry_of_the_same_run_edits_its_comment(fake_github):
    number = trusted_issue(fake_github, py("raise RuntimeError('x')") + "\n" + traceback("RuntimeError: x"))
    scrub(fake_github, number, run_id=42)
    scrub(fake_github, number, run_id=42)  # a new task for the same run, nothing recorded yet
    assert len(our_comments(fake_github, number)) == 1
    assert len(fake_github.writes_to("POST", "/comments")) == 1


def test_a_publish_that_dies_half_way_is_retried_without_a_second_comment(fake_github):
    number = trusted_issue(fake_github, py("raise RuntimeError('x')") + "\n" + traceback("RuntimeError: x"),
                           labels=["needs reproduction"])
    client = GitHubClient(token="t", base_url=fake_github.url)

    class DiesAfterCommenting:  # the worker is killed between the comment and the labels
        def __getattr__(self, name):
            return getattr(client, name)

        def update_labels(self, *args, **kwargs):
            raise ConnectionError("worker killed")

    ctx = MemoryRunContext(run_id=7, github=DiesAfterCommenting(), settings=settings(),
                           params={"repo": REPO, "issue": number})
    with pytest.raises(ConnectionError):
        run_pipeline(STAGES, ctx, any_queue=True)
    assert len(our_comments(fake_github, number)) == 1

    ctx.github = client  # the retried task
    finished, _ = scrub(fake_github, number, ctx=ctx)
    assert finished.verdict == "reproduces"
    assert len(our_comments(fake_github, number)) == 1
    assert "needs reproduction" not in fake_github.label_names(REPO, number)


def test_a_finished_stage_is_not_redone(fake_github):
    number = trusted_issue(fake_github, py("raise RuntimeError('x')") + "\n" + traceback("RuntimeError: x"))
    _, ctx = scrub(fake_github, number)
    fake_github.clear_writes()
    ran = len(ctx.stages)
    finished, ctx = scrub(fake_github, number, ctx=ctx)
    assert finished.verdict == "reproduces" and len(ctx.stages) == ran and fake_github.writes == []


# -- real torch -----------------------------------------------------------------------------

# A cold `import torch` in the sandbox takes seconds idle and far more on a loaded machine: these
# runs get the product's default timeout, not the 20 s the torch-free repros above get.
TORCH = {"repro_timeout": 120}


@pytest.mark.torch
def test_torch_repro_reproduces_on_the_installed_version(fake_github):
    import torch

    source = "import torch\na = torch.ones(2, 3)\nb = torch.ones(4, 5)\nprint(a @ b)"
    number = trusted_issue(fake_github, py(source) + "\n" + traceback(
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"))
    finished, _ = scrub(fake_github, number, config=TORCH)
    assert finished.verdict == "reproduces"
    assert our_comments(fake_github, number)[0].startswith(f"This issue still reproduces on PyTorch {torch.__version__}.")


TORCH_RESIDUAL = """import torch
import torch.nn as nn
import logging

logging.basicConfig(level=logging.INFO)
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * 2)
        self.fc2 = nn.Linear(dim * 3, dim)

    def forward(self, x):
        h = self.norm(x)
        h = self.fc1(h)
        h = torch.relu(h)
        return x + self.fc2(h)


def main():
    model = Block(16)
    data = torch.randn(8, 16)
    for step in range(3):
        out = model(data)
        loss = out.sum()
        loss.backward()
        print("step", step, loss.item())


if __name__ == "__main__":
    main()
"""


@pytest.mark.torch
def test_torch_repro_is_minimized_keeping_its_error(fake_github):
    from app.engine.minimize import code_lines

    number = trusted_issue(fake_github, py(TORCH_RESIDUAL) + "\n" + traceback(
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x32 and 48x16)"))
    finished, ctx = scrub(fake_github, number, config=TORCH)
    assert finished.verdict == "reproduces"
    assert code_lines(TORCH_RESIDUAL) > 20  # not minimal yet, by the seed's measure
    minimized = state_of(ctx).minimized
    assert minimized.final_lines <= 20
    assert "logging" not in minimized.source
    assert "Minimized repro:" in our_comments(fake_github, number)[0]


@pytest.mark.torch
def test_torch_fixed_behaviour_without_a_witness_stays_open(fake_github):
    source = "import torch\nx = torch.arange(6).reshape(2, 3)\nprint(x.sum(dim=1))"
    number = trusted_issue(fake_github, py(source) + "\n" + traceback(
        "RuntimeError: sum(): dim out of range"))
    finished, ctx = scrub(fake_github, number, config=TORCH)
    assert finished.verdict == "passes-now"
    assert state_of(ctx).reproduction.modes.get("fork", 0) >= 1  # the repeated runs were warm
    assert fake_github.issue(REPO, number)["state"] == "open"


def test_interpreter_is_this_one():
    assert settings().environment_map == {"local": sys.executable}


@pytest.fixture
def four_envs():
    from tests.pipelines.envs import make_envs, remove

    envs, root = make_envs(["e1", "e2", "e3", "e4"])
    yield ",".join(f"{label}={python}" for label, python in envs.items())  # SCRUB_ENVIRONMENTS
    remove(root)


def test_a_fixed_issue_is_bisected_to_the_first_fixed_environment(fake_github, four_envs):
    from tests.pipelines.envs import PREFIX_BUG

    source = PREFIX_BUG.format(broken=("e1", "e2"))
    number = trusted_issue(fake_github, py(source) + "\n" + traceback("RuntimeError: the bug is here"))
    finished, ctx = scrub(fake_github, number, config={"environments": four_envs})
    assert finished.verdict == "fixed"
    found = state_of(ctx).bisect
    assert (found.first_changed, found.last_unchanged) == ("e3", "e2")
    (comment,) = our_comments(fake_github, number)
    assert "It first stops reproducing in PyTorch e3 (it still reproduces in e2)." in comment
    assert fake_github.issue(REPO, number)["state"] == "closed"


def test_scrub_minimize_forces_minimizing_a_short_repro(fake_github):
    source = "a = 1\nb = [a] * 3\nraise RuntimeError('short but not minimal')"
    number = trusted_issue(fake_github, py(source) + "\n" + traceback("RuntimeError: short but not minimal"))
    _, ctx = scrub(fake_github, number)
    assert status_of(ctx, "minimize") == "skipped"  # 3 lines: already minimal by the seed's rule
    assert state_of(ctx).minimized is None
    _, forced = scrub(fake_github, number, run_id=2, force_minimize=True)
    assert state_of(forced).minimized.source.strip() == "raise RuntimeError('short but not minimal')"


def test_scrub_bisect_finds_where_a_reproducing_bug_started(fake_github, four_envs):
    from tests.pipelines.envs import PREFIX_BUG

    source = PREFIX_BUG.format(broken=("e3", "e4"))
    number = trusted_issue(fake_github, py(source) + "\n" + traceback("RuntimeError: the bug is here"))
    finished, ctx = scrub(fake_github, number, config={"environments": four_envs}, force_bisect=True)
    assert finished.verdict == "reproduces"
    (comment,) = our_comments(fake_github, number)
    assert "It first reproduces in PyTorch e3 (it does not in e2)." in comment


# -- issue #22: the classes of mistake seen on unseen issues ----------------------------------


def test_a_control_block_under_expected_behavior_never_closes_a_live_bug(fake_github):
    crash = "values = [1, 2, 3]\nprint(values[3])"
    control = "values = [1, 2, 3]\n" + "\n".join(f"print(values[{i % 3}])" for i in range(8))
    body = (f"### 🐛 Describe the bug\n\n{py(crash)}\n\n{traceback('IndexError: list index out of range')}\n\n"
            f"### Expected behavior\n\nWith an index in range it works:\n\n{py(control)}")
    number = trusted_issue(fake_github, body)
    finished, ctx = scrub(fake_github, number)
    assert finished.verdict == "reproduces"
    assert state_of(ctx).repro.source.strip() == crash
    (comment,) = our_comments(fake_github, number)
    assert "It is the block in the issue body at line 3, starting `values = [1, 2, 3]`" in comment
    assert fake_github.issue(REPO, number)["state"] == "open"


def test_a_failure_nothing_reported_is_fails_with_x_now_not_still_reproduces(fake_github):
    number = trusted_issue(fake_github, "It gives the wrong answer sometimes.\n" + py("weights = {}\nprint(weights['weight'])"))
    finished, _ = scrub(fake_github, number)
    assert finished.verdict == "inconclusive"
    (comment,) = our_comments(fake_github, number)
    assert "fails with KeyError: 'weight' now" in comment and "still reproduces" not in comment


def test_a_repl_transcript_runs_and_its_imports_count(fake_github):
    body = f"{FENCE}\n>>> import not_installed_pkg\n>>> not_installed_pkg.run()\nTraceback ...\n{FENCE}"
    number = trusted_issue(fake_github, body + "\n" + traceback("ValueError: bad"))
    finished, ctx = scrub(fake_github, number)
    assert finished.verdict == "missing-dependency" and state_of(ctx).repro.kind == "repl"


def test_a_script_that_exits_1_on_purpose_when_the_bug_is_gone_is_read_as_it_means_it(fake_github):
    source = ("import sys\nvalues = [1, 2, 3]\nif sum(values) == 6:\n    print('fixed: the sum is right')\n"
              "    sys.exit(1)\nprint('BUG: the sum is wrong')\n")
    number = trusted_issue(fake_github, "The sum comes out wrong on my machine.\n" + py(source))
    finished, ctx = scrub(fake_github, number)
    assert finished.verdict == "passes-now"  # the script says fixed; nothing was shown failing
    assert status_of(ctx, "minimize") == "skipped" and state_of(ctx).minimized is None
