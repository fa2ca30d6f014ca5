"""The fake GitHub's CI history endpoints answer the client the way GitHub does."""

from app.github.client import GitHubClient
from app.github.port import GitHubAPIError
from tests.fakes.ci_project import _git, make_ci_project
from tests.fakes.fake_github import FakeGitHub


def test_runs_issues_and_the_merge_base(tmp_path):
    project = make_ci_project(tmp_path, slow_s=1.0)
    src = tmp_path / "src"
    _git(src, "checkout", "--quiet", "-b", "fix")
    (src / "fix.txt").write_text("x")
    _git(src, "add", ".")
    _git(src, "commit", "--quiet", "-m", "fix", author="A|a@example.com")
    head = _git(src, "rev-parse", "HEAD")
    _git(src, "push", "--quiet", str(project.bare), "fix")
    with FakeGitHub() as fake:
        fake.serve_git(project.repo, project.bare)
        fake.add_workflow_run(project.repo, 3, head_branch="main", event="push")
        fake.add_workflow_run(project.repo, 4, head_branch="fix", event="pull_request")
        fake.add_workflow_run(project.repo, 5, head_branch="main", event="schedule")
        fake.add_issue(project.repo, 1, title="UNSTABLE CI / tests", labels=["unstable"])
        fake.add_issue(project.repo, 2, title="closed one", labels=["unstable"], state="closed")
        fake.add_issue(project.repo, 3, title="other", labels=["bug"])
        client = GitHubClient(token="t", base_url=fake.url)
        assert [r["id"] for r in client.list_workflow_runs(project.repo, "main")] == [5, 3]
        assert [i["number"] for i in client.list_open_issues(project.repo, "unstable")] == [1]
        assert client.merge_base(project.repo, "main", head) == project.head_sha
        try:
            client.merge_base(project.repo, "main", "0" * 40)
            raise AssertionError("an unknown commit must be a 404")
        except GitHubAPIError as exc:
            assert exc.status == 404
