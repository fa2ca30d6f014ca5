"""Failing CI cannot grow the data dir without bound (issue #21, finding 1).

Anyone who can make CI fail (a fork's pull request) makes Scrubbot download the run's log
archive. Through the ingest pipeline and the fake GitHub's 302 + signed blob: with caps of
1 MiB per repository and 2 MiB in all, 9 archives of ~400 KiB in three repositories leave at
most the caps on disk (the oldest evicted, the newest kept), and a 3 MiB archive is refused
with a stated verdict and leaves nothing behind.
"""

from __future__ import annotations

import io
import os
import zipfile

from app.github.client import GitHubClient
from app.pipelines.base import run_pipeline
from app.pipelines.ci_ingest import stages as ci_ingest
from app.pipelines.ci_ingest.signatures import MemorySignatureStore
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.reliability.fork_project import failing_archive

KiB, MiB = 1 << 10, 1 << 20


def _archive(padding: int) -> bytes:
    """A real failing run's archive plus `padding` bytes GitHub would store as they are."""
    buffer = io.BytesIO(failing_archive())
    with zipfile.ZipFile(buffer, "a", zipfile.ZIP_STORED) as archive:
        archive.writestr("tests (3.11)/9_Upload.txt", os.urandom(padding).hex()[:padding])
    return buffer.getvalue()


def _ingest(gh, store, repo: str, run_id: int, data_dir) -> MemoryRunContext:
    ctx = MemoryRunContext(
        run_id=run_id, github=GitHubClient(token="t", base_url=gh.url), signatures=store,
        settings=Settings(data_dir=data_dir, ci_logs_repo_mb=1, ci_logs_total_mb=2),
        params={"repo": repo, "workflow_run_id": run_id, "run_attempt": 1, "name": "CI", "event": "pull_request",
                "head_branch": "patch", "default_branch": "main", "head_repository": "mallory/x"})
    run_pipeline(ci_ingest.STAGES, ctx, any_queue=True)
    return ctx


def _sizes(folder) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_log_archives_stay_under_the_caps_oldest_evicted_and_an_oversized_one_refused(fake_github, tmp_path):
    store, data_dir = MemorySignatureStore(), tmp_path / "data"
    logs = data_dir / "ci-logs"
    archive = _archive(400 * KiB)
    repos = ("acme/one", "acme/two", "acme/three")
    ran: dict[str, list[int]] = {repo: [] for repo in repos}
    evicted_lines = []
    for index in range(9):
        repo, run_id = repos[index % 3], 700 + index
        fake_github.add_workflow_run(repo, run_id, jobs=[{"name": "tests (3.11)", "conclusion": "failure"}],
                                     logs_zip=archive)
        ctx = _ingest(fake_github, store, repo, run_id, data_dir)
        assert ctx.status == "succeeded", ctx.lines
        ran[repo].append(run_id)
        evicted_lines += [line for line in ctx.lines if "evicted" in line]
        assert (logs / repo.replace("/", "__") / f"run-{run_id}-attempt-1.zip").is_file()  # the new one is kept
        assert _sizes(logs) <= 2 * MiB, _sizes(logs)
        for folder in logs.iterdir():
            assert _sizes(folder) <= 1 * MiB, f"{folder.name}: {_sizes(folder)} bytes"
    for repo, ids in ran.items():  # what is left of a repository is its newest archives
        kept = sorted(int(p.name.split("-")[1]) for p in (logs / repo.replace("/", "__")).iterdir())
        assert kept == ids[len(ids) - len(kept):] and len(kept) < len(ids), (repo, kept, ids)
    assert evicted_lines, "an eviction is stated in the run's log"

    fake_github.add_workflow_run("acme/one", 799, jobs=[{"name": "tests (3.11)", "conclusion": "failure"}],
                                 logs_zip=_archive(3 * MiB))
    big = _ingest(fake_github, store, "acme/one", 799, data_dir)
    assert big.status == "failed" and "log archive refused" in (big.verdict or ""), big.lines
    assert "larger than 1 MiB" in big.verdict
    assert not any("799" in p.name for p in logs.rglob("*")), list(logs.rglob("*"))
    assert _sizes(logs) <= 2 * MiB
