"""`scrub issue` on a saved issue and `scrub bisect` across environments, as a user runs them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from app.cli.bisect import resolve_envs
from app.cli.main import app
from app.cli.offline_github import parse_issue_url, repo_and_number
from tests.pipelines.envs import PREFIX_BUG, make_envs, remove

FENCE = "```"


def saved_issue(tmp_path, body: str, comments: list[dict] | None = None, **issue) -> str:
    data = {"issue": {"number": 5, "title": "bug", "state": "open", "body": body, "labels": [],
                      "html_url": "https://github.com/o/r/issues/5", "created_at": "2026-01-01T00:00:00Z",
                      "user": {"login": "alice", "type": "User"}, **issue},
            "comments": comments or []}
    path = tmp_path / "issue.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.fixture
def runner(monkeypatch):
    monkeypatch.setenv("SCRUB_SANDBOX", "bwrap")
    monkeypatch.setenv("SCRUB_REPRO_TIMEOUT", "20")
    return CliRunner()


def test_issue_json_reports_what_would_be_posted(tmp_path, runner):
    body = (f"{FENCE}python\nraise KeyError('weight')\n{FENCE}\n\n{FENCE}\nTraceback (most recent call last):\n"
            f"KeyError: 'weight'\n{FENCE}")
    result = runner.invoke(app, ["issue", saved_issue(tmp_path, body, labels=[{"name": "needs reproduction"}]),
                                 "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["verdict"] == "reproduces" and out["issue"] == "o/r#5"
    assert out["comment"].startswith("This issue still reproduces on PyTorch ")
    assert out["labels"] == {"add": [], "remove": ["needs reproduction"]}
    assert out["selected_repro"]["url"] == "https://github.com/o/r/issues/5"
    assert out["reported_error"]["expect"] == "KeyError: 'weight'"
    assert out["reproduction"]["result"]["outcome"] == "error"
    assert "## Execution Log" in out["report"]
    assert out["diagnosis"]["patterns"] == [] and out["diagnosis"]["findings"] == []  # no pattern: nothing to try
    assert out["test"]["name"] == "test_issue_5" and [c["ok"] for c in out["test_checks"]] == [True, True]


def test_issue_prints_the_comment_for_a_fixed_issue(tmp_path, runner):
    body = (f"{FENCE}python\nok = True\nassert ok, 'it used to fail'\n{FENCE}\n\n"
            "AssertionError: it used to fail")  # the reporter's self-checking script, shown failing
    result = runner.invoke(app, ["issue", saved_issue(tmp_path, body)])
    assert result.exit_code == 1, result.output  # ran, and it did not reproduce
    assert result.stdout.startswith("This issue no longer reproduces on PyTorch ")


def test_issue_says_passes_now_for_a_pass_nothing_witnesses(tmp_path, runner):
    body = f"{FENCE}python\nprint('fine now')\n{FENCE}\n\nValueError: it used to fail"
    result = runner.invoke(app, ["issue", saved_issue(tmp_path, body)])
    assert result.exit_code == 1, result.output
    assert "no witness that this script ever showed the bug" in result.stdout


def test_issue_refuses_what_is_neither_file_nor_issue_url(runner):
    result = runner.invoke(app, ["issue", "https://example.com/nope"])
    assert result.exit_code == 2


def test_issue_urls_and_repos_are_parsed():
    assert parse_issue_url("https://github.com/pytorch/pytorch/issues/123#issuecomment-9") == ("pytorch/pytorch", 123)
    assert parse_issue_url("pytorch/pytorch#123") == ("pytorch/pytorch", 123)
    assert parse_issue_url("pytorch/pytorch#x") is None and parse_issue_url("#12") is None
    assert parse_issue_url("https://github.com/pytorch/pytorch/pull/123") is None
    assert repo_and_number({"html_url": "https://github.com/o/r/issues/7"}) == ("o/r", 7)


@pytest.mark.parametrize("content, says", [
    ('{"foo": 1}', 'not a GitHub issue: no "title" or "body" (keys: foo)'),
    ("[1, 2]", "not a JSON object"),
    ("{not json", "not JSON"),
    ('{"issue": {"title": "t", "body": "b"}}', 'needs a "number" or an "html_url"'),
    ('{"issue": {"title": "t", "body": 3, "number": 1}}', '"body" must be a string'),
    ('{"issue": {"title": "t", "number": 1}, "comments": "nope"}', '"comments" must be a list'),
])
def test_a_file_that_is_not_an_issue_is_refused_clearly(tmp_path, runner, content, says):
    path = tmp_path / "issue.json"
    path.write_text(content)
    result = runner.invoke(app, ["issue", str(path), "--json"])
    assert result.exit_code == 2 and result.stdout == ""
    assert says in result.stderr and "Traceback" not in result.output


def test_public_issue_by_short_reference_needs_no_token(runner, monkeypatch):
    from tests.fakes.fake_github import FakeGitHub

    with FakeGitHub(require_auth=False) as fake:
        number = fake.add_issue("o/r", title="bug", user="alice",
                                body=f"{FENCE}python\nraise KeyError('weight')\n{FENCE}\nKeyError: 'weight'")["number"]
        monkeypatch.setenv("SCRUB_GITHUB_API_URL", fake.url)
        monkeypatch.delenv("SCRUB_GITHUB_TOKEN", raising=False)
        monkeypatch.delenv("SCRUB_GITHUB_APP_ID", raising=False)
        result = runner.invoke(app, ["issue", f"o/r#{number}", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["issue"] == f"o/r#{number}"
        assert {r.auth for r in fake.requests} == {"none"} and fake.writes == []
        missing = runner.invoke(app, ["issue", "o/r#999"])
        assert missing.exit_code == 2
        assert "GitHub says issue o/r#999 does not exist; if it is private, set SCRUB_GITHUB_TOKEN" in missing.stderr


def test_envs_resolve_through_the_configuration_or_as_pairs():
    configured = {"2.11": "/py/211", "2.13": "/py/213"}
    assert resolve_envs("2.11,2.12=/py/212,2.13", configured) == {"2.11": "/py/211", "2.12": "/py/212", "2.13": "/py/213"}
    with pytest.raises(ValueError, match="2.10"):
        resolve_envs("2.10,2.13", configured)
    with pytest.raises(ValueError, match="two"):
        resolve_envs("2.13", configured)
    with pytest.raises(ValueError, match="scrub env add 2.12.0"):
        resolve_envs("2.12.0,2.13", configured)


def test_a_release_prefix_picks_the_newest_provisioned_patch():
    provisioned = {"2.13.0": "/e/2.13.0", "2.14.0": "/e/2.14.0", "2.14.1": "/e/2.14.1"}
    assert resolve_envs("2.13,2.14", provisioned) == {"2.13.0": "/e/2.13.0", "2.14.1": "/e/2.14.1"}


def test_bisect_finds_the_first_environment_where_the_outcome_changes(tmp_path, runner):
    envs, root = make_envs(["a1", "a2", "a3", "a4", "a5"])
    try:
        repro = tmp_path / "repro.py"
        repro.write_text(PREFIX_BUG.format(broken=("a1", "a2", "a3")))
        spec = ",".join(f"{label}={python}" for label, python in envs.items())
        result = runner.invoke(app, ["bisect", str(repro), "--envs", spec, "--json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert (out["first_changed"], out["last_unchanged"]) == ("a4", "a3")
        assert out["summary"] == "fixed in a4 (still fails in a3)"
        assert out["probes"]["a4"] == "passed" and out["probes"]["a1"].startswith("RuntimeError")
    finally:
        remove(root)


def test_issue_url_is_read_through_the_configured_client_and_nothing_is_written(runner, monkeypatch):
    from tests.fakes.fake_github import FakeGitHub

    with FakeGitHub() as fake:
        number = fake.add_issue("o/r", title="bug", user="alice",
                                body=f"{FENCE}python\nraise KeyError('weight')\n{FENCE}\nKeyError: 'weight'")["number"]
        monkeypatch.setenv("SCRUB_GITHUB_API_URL", fake.url)
        monkeypatch.setenv("SCRUB_GITHUB_TOKEN", "cli-token")
        result = runner.invoke(app, ["issue", f"https://github.com/o/r/issues/{number}", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["verdict"] == "reproduces"
        assert fake.writes == []


def test_a_short_release_that_is_not_provisioned_gets_a_command_that_works():
    """`2.12` is not a release `scrub env add` accepts: the hint names a full one, never `env add 2.12`."""
    from app.torch_releases import parse_version

    with pytest.raises(ValueError) as refused:
        resolve_envs("2.12,2.13", {"2.13.0": "/e/2.13.0"})
    message = str(refused.value)
    assert "scrub env add 2.12 " not in message + " " and "`scrub env add 2.12.0`" in message
    suggested = message.split("`scrub env add ")[1].split("`")[0]
    assert parse_version(suggested) == "2.12.0"  # the command it prints is one `env add` takes
    assert "--provision" in message and "2.12.x" in message
