"""The fuzz job's own file access (the worker, outside the sandbox) against a hostile repository.

#21 finding 2: a repository tracking `tests -> <a directory of the worker>` with
`.github/scrub.yml` `test-file: tests/sitecustomize.py` made the worker create that file outside
the worktree; through `cfg -> <dir>` an existing host `.py` file was read into the test stage's
output (served by the API) and rewritten; a newline in `fuzz.command` became module-level code
in the generated test (its comment lines were not sanitized). Each attack runs the real fuzz
pipeline (checkout over the fake GitHub, the sandbox) in process, as a worker would.
"""

from __future__ import annotations

import json

import pytest

from app.github.client import GitHubClient
from app.pipelines.base import run_pipeline
from app.pipelines.fuzz.stages import STAGES
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.reliability.hostile_project import EVIL_MARK, HOST_MODULE, make_hostile_fuzz_project


def _run(fake_github, project, data_dir):
    fake_github.add_repo(project.repo)
    client = GitHubClient(token="ghp_test", base_url=fake_github.url, clone_urls={project.repo: project.bare})
    ctx = MemoryRunContext(run_id=1, github=client, settings=Settings(data_dir=data_dir),
                           params={"repo": project.repo, "fuzz-seed": "1", "minimize_budget_s": 5})
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    return ctx, finished


def _snapshot(directory):
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}


@pytest.fixture
def outside(tmp_path):
    directory = tmp_path / "worker-home"  # a directory of the worker, outside every checkout
    directory.mkdir()
    (directory / "host_settings.py").write_text(HOST_MODULE)
    return directory


def test_a_linked_tests_directory_gets_no_file_from_the_worker(fake_github, tmp_path, outside):
    yml = "fuzz:\n  command: python tools/fuzz.py --seed {seed}\n  devices: [cpu]\n  test-file: tests/sitecustomize.py\n"
    project = make_hostile_fuzz_project(tmp_path / "remote", links={"tests": outside}, scrub_yml=yml)
    before = _snapshot(outside)
    ctx, finished = _run(fake_github, project, tmp_path / "data")
    assert _snapshot(outside) == before, "the worker wrote through the repository's `tests` link"
    halt = ctx.completed_stages()["test"]["halt"]  # the run stops there, Partial, and says why
    assert halt["status"] == "Partial" and "tests/sitecustomize.py" in halt["reason"], halt
    assert "'tests' is a link" in halt["reason"], halt
    assert not fake_github.writes_to("POST", "/pulls")


def test_a_linked_config_directory_is_neither_read_nor_rewritten(fake_github, tmp_path, outside):
    yml = "fuzz:\n  command: python tools/fuzz.py --seed {seed}\n  devices: [cpu]\n  test-file: cfg/host_settings.py\n"
    project = make_hostile_fuzz_project(tmp_path / "remote", links={"cfg": outside}, scrub_yml=yml)
    before = _snapshot(outside)
    ctx, finished = _run(fake_github, project, tmp_path / "data")
    assert _snapshot(outside) == before, "the worker rewrote a host file through the `cfg` link"
    recorded = json.dumps(ctx.completed_stages()) + "".join(text for _, text in ctx.artifacts.values())
    assert "worker-owned-file-0b1c" not in recorded, "a host file's text reached the stored outputs"
    halt = ctx.completed_stages()["test"]["halt"]
    assert halt["status"] == "Partial" and "'cfg' is a link" in halt["reason"], halt


@pytest.mark.parametrize("newline", ["\\n", "\\r", "\\u2028"])
def test_a_newline_in_the_fuzz_command_never_becomes_code(fake_github, tmp_path, outside, newline):
    command = f"python tools/fuzz.py --seed {{seed}}{newline}{EVIL_MARK} = __import__('os').getcwd()"
    yml = f'fuzz:\n  command: "{command}"\n  devices: [cpu]\n'
    project = make_hostile_fuzz_project(tmp_path / "remote", links={}, scrub_yml=yml)
    ctx, finished = _run(fake_github, project, tmp_path / "data")
    stages = ctx.completed_stages()
    generated = (stages.get("test") or {}).get("generated") or {}
    for text in (generated.get("marked", ""), generated.get("unmarked", "")):
        lines = [line for line in text.splitlines() if EVIL_MARK in line]
        assert all(line.lstrip().startswith("#") for line in lines), lines
    # The repository's setting is refused, with its reason, before anything is generated.
    assert finished.status == "failed" and not generated, ctx.lines
    assert "fuzz.command must be one line" in stages["checkout"]["halt"]["reason"]
