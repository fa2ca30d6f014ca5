"""What the ingest asks GitHub to classify a run: each question once, and an unanswered one
leaves its evidence out instead of failing the ingest."""

from app.github.port import GitHubAPIError
from app.pipelines.ci_ingest.lookups import Lookups
from app.pipelines.memory import MemoryRunContext

WF = {"id": 5, "attempt": 1, "head_sha": "c" * 40, "default_branch": "main", "workflow_path": ".github/workflows/ci.yml"}


class GitHub:
    def __init__(self, fail: bool = False) -> None:
        self.calls, self.fail = [], fail

    def _answer(self, name, value):
        self.calls.append(name)
        if self.fail:
            raise GitHubAPIError(502, "Server Error")
        return value

    def get_workflow_run(self, repo, run_id):
        return self._answer("run", {"id": run_id, "run_attempt": 2, "conclusion": "success"})

    def list_open_issues(self, repo, label, limit=300):
        return self._answer("issues", [{"title": "UNSTABLE CI / tests"}])

    def merge_base(self, repo, base, head):
        return self._answer("compare", "b" * 40)

    def list_workflow_runs(self, repo, branch, per_page=30):
        runs = [{"id": 9, "event": "push", "head_branch": "main", "path": ".github/workflows/ci.yml"},
                {"id": 8, "event": "pull_request", "head_branch": "main", "path": ".github/workflows/ci.yml"},
                {"id": 7, "event": "schedule", "head_branch": "main", "path": ".github/workflows/other.yml"},
                {"id": 6, "event": "schedule", "head_branch": "main", "path": ".github/workflows/ci.yml"}]
        return self._answer("runs", runs)


def test_each_question_is_asked_once_and_trunk_runs_are_the_same_workflows_pushes_and_schedules():
    github = GitHub()
    lookups = Lookups(MemoryRunContext(github=github), "o/r", WF)
    assert lookups.passed_on_rerun and lookups.passed_on_rerun
    assert lookups.unstable_titles == ("UNSTABLE CI / tests",)
    trunk = lookups.trunk
    assert (trunk.merge_base, trunk.latest_runs) == ("b" * 40, (9, 6)) and lookups.trunk is trunk
    assert sorted(github.calls) == ["compare", "issues", "run", "runs"]


def test_github_not_answering_leaves_the_evidence_out():
    ctx = MemoryRunContext(github=GitHub(fail=True))
    lookups = Lookups(ctx, "o/r", WF)
    assert lookups.passed_on_rerun is False and lookups.unstable_titles == ()
    trunk = lookups.trunk
    assert trunk.merge_base is None and trunk.latest_runs is None and "502" in trunk.problem
    assert any("GitHub did not say" in line for line in ctx.lines)
    assert Lookups(ctx, "o/r", {**WF, "default_branch": ""}).trunk.problem.startswith("the run names no default")
