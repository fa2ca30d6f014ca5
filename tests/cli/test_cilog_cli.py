"""`scrub ci-log FILE_OR_RUN_URL [--json]`: archives, text logs, run URLs."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from app.cli.main import app
from app.settings import reset_settings_cache
from tests.engine.cilogs.samples import build_archive, sample_jobs
from tests.fakes.fake_github import fake_github  # noqa: F401  (pytest fixture)

KEYS = ["job", "test", "kind", "exception", "message", "signature", "excerpt", "hint"]


def _run(*args: str):
    return CliRunner().invoke(app, ["ci-log", *args])


def test_archive_to_json(tmp_path):
    archive = tmp_path / "logs.zip"
    archive.write_bytes(build_archive(sample_jobs()))
    result = _run(str(archive), "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert len(out["jobs"]) == 6 and len(out["failures"]) == 8
    assert all(set(KEYS) <= set(failure) for failure in out["failures"])
    assert {f["kind"] for f in out["failures"]} == {"exception", "assertion", "timeout", "signal", "exit"}
    assert "8 failure(s) in 6 job(s)" in result.stderr  # the human table goes to stderr


def test_text_log_human_output(tmp_path):
    log = tmp_path / "job.txt"
    log.write_text("FAILED test/a.py::test_x - RuntimeError: CUDA error: an illegal memory access was encountered\n")
    result = _run(str(log))
    assert result.exit_code == 0 and result.stdout == ""
    assert "test/a.py::test_x" in result.stderr and "CUDA_LAUNCH_BLOCKING=1" in result.stderr


def test_missing_file_and_bad_url_are_clear_errors(tmp_path):
    assert _run(str(tmp_path / "nope.zip")).exit_code == 2
    result = _run("https://github.com/o/r/pulls/3")
    assert result.exit_code == 2 and "not a workflow run or job URL" in result.stderr


def test_a_log_without_failures_exits_1(tmp_path):
    log = tmp_path / "green.txt"
    log.write_text("collected 3 items\n3 passed in 0.1s\n")
    assert _run(str(log)).exit_code == 1


def _anonymous(monkeypatch, fake):
    monkeypatch.delenv("SCRUB_GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("SCRUB_GITHUB_APP_ID", raising=False)
    monkeypatch.setenv("SCRUB_GITHUB_API_URL", fake.url)
    reset_settings_cache()


def test_public_run_logs_are_read_without_a_token(monkeypatch):
    from tests.fakes.fake_github import FakeGitHub

    jobs = sample_jobs()
    with FakeGitHub(require_auth=False) as fake:
        fake.add_workflow_run("o/r", 78, jobs=[{"name": job.name, "conclusion": "failure"} for job in jobs],
                              logs_zip=build_archive(jobs))
        _anonymous(monkeypatch, fake)
        result = _run("https://github.com/o/r/actions/runs/78", "--json")
        assert result.exit_code == 0, result.stderr
        assert len(json.loads(result.stdout)["failures"]) == 8
        assert {r.auth for r in fake.requests if r.path.startswith("/repos/")} == {"none"}


def test_a_job_url_keeps_that_jobs_failures(monkeypatch):
    from tests.fakes.fake_github import FakeGitHub

    jobs = sample_jobs()
    with FakeGitHub(require_auth=False) as fake:
        fake.add_workflow_run("o/r", 79, jobs=[{"id": 900 + i, "name": job.name, "conclusion": "failure"}
                                               for i, job in enumerate(jobs)], logs_zip=build_archive(jobs))
        _anonymous(monkeypatch, fake)
        gtest = next(i for i, job in enumerate(jobs) if job.name == "cpp / gtest")
        result = _run(f"https://github.com/o/r/actions/runs/79/job/{900 + gtest}", "--json")
        assert result.exit_code == 0, result.stderr
        out = json.loads(result.stdout)
        assert out["failures"] and {f["job"] for f in out["failures"]} == {"cpp / gtest"}
        assert [job["name"] for job in out["jobs"]] == ["cpp / gtest"]
        missing = _run("https://github.com/o/r/actions/runs/79/job/5", "--json")
        assert missing.exit_code == 2 and "has no job 5" in missing.stderr


def test_refusals_say_what_to_do(monkeypatch, fake_github):  # noqa: F811
    fake_github.add_workflow_run("o/r", 80, jobs=[{"name": "t", "conclusion": "failure"}], logs_zip=b"")
    _anonymous(monkeypatch, fake_github)  # the fixture's server wants credentials: a private repo
    private = _run("https://github.com/o/r/actions/runs/80", "--json")
    assert private.exit_code == 2 and private.stdout == ""
    assert "set SCRUB_GITHUB_TOKEN" in private.stderr and "Traceback" not in private.output
    fake_github.inject_failure("GET", "/actions/runs/80", status=403,
                               message="API rate limit exceeded for 127.0.0.1.")
    limited = _run("https://github.com/o/r/actions/runs/80")
    assert limited.exit_code == 2 and "rate limit is spent" in limited.stderr and "60 requests" in limited.stderr


def test_run_url_is_fetched_through_the_github_client(fake_github, monkeypatch):  # noqa: F811
    jobs = sample_jobs()
    fake_github.add_workflow_run(
        "o/r", 77, run_attempt=2,
        jobs={2: [{"name": job.name, "conclusion": "failure"} for job in jobs]},
        logs_zip={1: build_archive(jobs[:1]), 2: build_archive(jobs)},
    )
    monkeypatch.setenv("SCRUB_GITHUB_TOKEN", "t")
    monkeypatch.setenv("SCRUB_GITHUB_API_URL", fake_github.url)
    reset_settings_cache()
    result = _run("https://github.com/o/r/actions/runs/77/attempts/2", "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert len(out["failures"]) == 8
    assert "cpp / gtest" in {job["name"] for job in out["jobs"]}  # real names from the jobs API


def test_a_directory_random_bytes_and_a_truncated_zip_are_input_errors(tmp_path):
    """Exit 2 with a sentence saying what is wrong, never "No failing test found" (exit 1)."""
    import random

    folder = tmp_path / "logs"
    folder.mkdir()
    noise = tmp_path / "noise.bin"
    noise.write_bytes(random.Random(7).randbytes(50_000))
    whole = build_archive(sample_jobs())
    truncated = tmp_path / "logs.zip"
    truncated.write_bytes(whole[: len(whole) // 2])
    for path, says in ((folder, "is a directory"), (noise, "neither a log archive (zip) nor a text log"),
                       (truncated, "damaged zip archive")):
        result = _run(str(path))
        assert result.exit_code == 2, (path, result.output)
        assert says in result.stderr and "No failing test" not in result.stderr and "Traceback" not in result.output


def test_a_text_log_with_a_few_stray_bytes_is_still_read(tmp_path):
    log = tmp_path / "job.txt"
    log.write_bytes(b"\x1b[31mcolour\x1b[0m caf\xe9\nFAILED test/a.py::test_x - RuntimeError: boom\n")
    assert _run(str(log)).exit_code == 0
