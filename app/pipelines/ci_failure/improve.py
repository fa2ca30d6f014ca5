"""`improve`: a `workflow_dispatch` of the repo's scrub workflow (seed 002's `info.json`).

Inputs (`.github/workflows/scrub-dispatch.yml`, docs/ci-job.md): `deterministic` (a hint,
checked by the reruns), `url` (a GitHub Actions run URL: its logs are fetched and parsed like
ci_ingest does), `raw-logs` (parsed directly), `prompt` (what to fix: given to the fix command
and quoted in the report), `existing-test-path` (skip test creation; rerun that test).

One stage of its own, `inputs`, turns those into the same `CIJob` the CI job uses; every
stage after it is the CI job's (`ci_failure.WORK_STAGES`).
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from app.engine.cilogs.archive import Failure, read_log, read_text_log
from app.engine.git.repo import GitError, git
from app.pipelines.base import RunContext, Stage, StageResult
from app.pipelines.ci_failure.job import CIJob
from app.pipelines.ci_failure.stages import WORK_STAGES
from app.pipelines.ci_failure.state import CIState
from app.pipelines.kit.checkout import mirror_cache, remote_for
from app.pipelines.kit.phases import halt

_RUN_URL = re.compile(r"github\.com/(?P<repo>[\w.-]+/[\w.-]+)/actions/runs/(?P<run>\d+)(?:/attempts/(?P<attempt>\d+))?")


def _flag(value: Any) -> bool | None:
    """A dispatch boolean input: GitHub sends `true`/`false` as strings or booleans."""
    if isinstance(value, bool) or value is None:
        return value
    text = str(value).strip().lower()
    return True if text in ("true", "1", "yes") else False if text in ("false", "0", "no") else None


def _pick(failures: list[Failure], existing_test: str) -> Failure | None:
    """The failure to work on: the one of the existing test if named, else the first with a test."""
    if existing_test:
        stem = existing_test.split("::")[0]
        return next((f for f in failures if f.test and stem in f.test), failures[0] if failures else None)
    return next((f for f in failures if f.test), failures[0] if failures else None)


def _from_url(ctx: RunContext, repo: str, url: str) -> tuple[list[Failure], dict[str, Any]]:
    match = _RUN_URL.search(url)
    if not match:
        raise ValueError(f"not a GitHub Actions run URL: {url}")
    if match["repo"].lower() != repo.lower():
        raise ValueError(f"the run URL belongs to {match['repo']}, not to {repo}")
    run_id, attempt = int(match["run"]), int(match["attempt"]) if match["attempt"] else None
    workflow_run = ctx.github.get_workflow_run(repo, run_id)
    names = [j.get("name", "") for j in ctx.github.list_run_jobs(repo, run_id, attempt=attempt)]
    dest = Path(ctx.settings.data_dir) / "ci-logs" / repo.replace("/", "__") / f"dispatch-{ctx.run_id}.zip"
    dest.parent.mkdir(parents=True, exist_ok=True)
    ctx.github.download_run_logs(repo, run_id, dest, attempt=attempt)
    return read_log(dest, repo=repo, job_names=names).failures, workflow_run


def _head_of(ctx: RunContext, repo: str, ref: str) -> str:
    mirror = mirror_cache(ctx).sync(repo, remote_for(ctx, repo))
    # `ref` is from the payload: --end-of-options keeps a `--flag` from being read as one
    return git("rev-parse", "--verify", "--end-of-options", f"{ref or 'HEAD'}^{{commit}}", cwd=mirror).strip()


def inputs_stage(ctx: RunContext, state: CIState) -> StageResult:
    """The dispatch inputs -> a `CIJob` (the failure from the logs, the commit from the run or ref)."""
    params = ctx.params
    repo, ref = params["repo"], params.get("ref") or ""
    url, raw = (params.get("url") or "").strip(), params.get("raw-logs") or ""
    existing = (params.get("existing-test-path") or "").strip()
    # Even a run that stops here has a job: the report names the repo and the request.
    bare_job = {"job": CIJob(repo=repo, prompt=params.get("prompt") or "")}
    if not (url or raw.strip() or existing):
        return halt("no inputs", "the dispatch gave neither `url`, `raw-logs` nor `existing-test-path`",
                    status="Failed", extra=bare_job)
    workflow_run: dict[str, Any] = {}
    try:
        failures = read_text_log(io.BytesIO(raw.encode()), repo=repo).failures if raw.strip() else []
        if url:
            from_url, workflow_run = _from_url(ctx, repo, url)
            failures = failures or from_url
    except ValueError as exc:
        return halt("bad inputs", str(exc), status="Failed", extra=bare_job)
    failure = _pick(failures, existing)
    if failure is None and not existing:
        return halt("no failing test in the logs", "no failing test was found in the given logs",
                    status="Failed", extra=bare_job)
    job = CIJob.from_failure(repo, failure.to_dict() if failure else {}, workflow_run,
                             deterministic_hint=_flag(params.get("deterministic")),
                             existing_test=existing, prompt=params.get("prompt") or "")
    job.test = existing or job.test
    job.base = params.get("default_branch") or "main"  # the draft PR targets the default branch
    job.ref = ref
    try:
        job.head_sha = job.head_sha or _head_of(ctx, repo, ref)
    except GitError as exc:
        return halt("cannot resolve the ref", f"cannot resolve {ref or 'HEAD'}: {exc}", status="Failed",
                    extra={"job": job})
    source = "run URL" if workflow_run else "raw logs" if raw.strip() else "existing test"
    return StageResult(summary=f"{job.test} at {job.head_sha[:12]} (from the {source})",
                       output={"job": job, "failures_found": len(failures)})


STAGES = [Stage("inputs", inputs_stage, state=CIState), *WORK_STAGES]
