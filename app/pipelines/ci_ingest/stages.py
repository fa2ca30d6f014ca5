"""`ci_ingest`: a failed workflow run -> its failing tests, counted and classified; a CI run when
one repeats and its classification allows (`app.engine.cilogs.classify`).

Stages (each checkpointed, so a retried task resumes where it stopped):

- `fetch`: the jobs of the run's attempt and its log archive (GitHub answers 302 to a short-lived
  URL; the client follows it and streams the zip to the run's data dir, bounded: `logstore`).
- `parse`: `cilogs.read_archive` over the zip, streaming; keeps the failures of failed jobs.
- `record`: count each fingerprint in the `SignatureStore` (once per workflow run), classify it
  (trunk / PR / branch, fork, broken trunk, flaky, unstable), store the occurrence in the
  signature's history, and open exactly one `Run(kind=ci_failure)` when the classification and
  the repeat threshold say so (`classify.decide`). The stage asks for its id to be enqueued
  (`StageResult.enqueue`) and lists it in `spawned_runs`. Saves `failures.json` and `failures.md`.

A rerun that passed (`conclusion: success`, attempt > 1) is ingested too: no logs, and `record`
marks the failures of the run's earlier attempts as passed on rerun (the signature: flaky).

Run params (set by the `workflow_run` webhook): repo, workflow_run_id, run_attempt, head_sha,
head_branch, name, url, event, head_repository, default_branch, pull_requests, conclusion.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from app.ci_history import Occurrence
from app.engine.cilogs.archive import read_archive
from app.engine.cilogs.classify import classify, decide, scope_of
from app.engine.verdict.same_error import error_key
from app.github.port import ArchiveTooLarge
from app.pipelines.base import RunContext, Stage, StageResult
from app.pipelines.ci_ingest.logstore import Caps, archive_path, make_room
from app.pipelines.ci_ingest.lookups import Lookups
from app.pipelines.ci_ingest.markdown import failures_markdown
from app.pipelines.ci_ingest.signatures import SignatureStore
from app.pipelines.ci_ingest.state import IngestState

MAX_RECORDED_FAILURES = 200  # per workflow run: a broken build fails everything, count the first ones
DEFAULT_THRESHOLD = 2
PASSED = "success"


def _repo(ctx: RunContext) -> str:
    return ctx.params.get("repo") or ""


def _passed_rerun(ctx: RunContext) -> bool:
    return ctx.params.get("conclusion") == PASSED


def _workflow_run(ctx: RunContext) -> dict[str, Any]:
    p = ctx.params
    run_id = int(p["workflow_run_id"])
    url = p.get("url") or f"https://github.com/{_repo(ctx)}/actions/runs/{run_id}"
    return {
        "id": run_id,
        "attempt": int(p.get("run_attempt") or 1),
        "head_sha": p.get("head_sha", ""),
        "head_branch": p.get("head_branch", ""),
        "name": p.get("name", ""),
        "html_url": url,
        "event": p.get("event", ""),
        "workflow_path": p.get("workflow_path", ""),
        "head_repository": p.get("head_repository", ""),
        "default_branch": p.get("default_branch", ""),
        "pull_requests": [int(n) for n in p.get("pull_requests") or [] if str(n).isdigit()][:50],
    }


def logs_path(ctx: RunContext, repo: str, run_id: int, attempt: int) -> Path:
    return archive_path(Path(ctx.settings.data_dir), repo, run_id, attempt)


def _download(ctx: RunContext, repo: str, wf: dict[str, Any]) -> tuple[Path, str]:
    """The run's archive on disk (kept from an earlier try, else fetched within the caps)."""
    dest = logs_path(ctx, repo, wf["id"], wf["attempt"])
    if dest.is_file() and zipfile.is_zipfile(dest):  # a retry keeps what was downloaded
        return dest, ""
    caps = Caps.from_settings(ctx.settings)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_suffix(".part")
    try:
        ctx.github.download_run_logs(repo, wf["id"], partial, attempt=wf["attempt"], max_bytes=caps.per_archive)
    except ArchiveTooLarge:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(dest)
    return dest, make_room(Path(ctx.settings.data_dir), dest, caps).describe()


def fetch(ctx: RunContext, state: IngestState) -> StageResult:
    if ctx.github is None:
        raise RuntimeError("ci_ingest needs GitHub access (no client configured)")
    repo, wf = _repo(ctx), _workflow_run(ctx)
    if _passed_rerun(ctx):
        return StageResult(summary=f"attempt {wf['attempt']} passed: no logs to read",
                           output={"workflow_run": wf}, skipped=True)
    jobs = [
        {"id": j.get("id"), "name": j.get("name", ""), "conclusion": j.get("conclusion")}
        for j in ctx.github.list_run_jobs(repo, wf["id"], attempt=wf["attempt"])
    ]
    try:
        dest, evicted = _download(ctx, repo, wf)
    except ArchiveTooLarge as exc:
        verdict = f"log archive refused: {exc} (SCRUB_CI_LOGS_REPO_MB / SCRUB_CI_LOGS_TOTAL_MB)"
        return StageResult(summary=verdict, output={"jobs": jobs, "workflow_run": wf, "verdict": verdict},
                           end="failed", verdict=verdict)
    failed = [j["name"] for j in jobs if j["conclusion"] in ("failure", "timed_out")]
    summary = f"{len(jobs)} jobs, {len(failed)} failed; logs {dest.stat().st_size // 1024} KiB"
    if evicted:
        ctx.log(evicted)
        summary += f"; {evicted}"
    return StageResult(summary=summary, output={"logs_path": str(dest), "jobs": jobs, "workflow_run": wf})


def parse(ctx: RunContext, state: IngestState) -> StageResult:
    if _passed_rerun(ctx):
        return StageResult(summary="a passing attempt: nothing to parse", skipped=True)
    jobs = state.jobs
    path = Path(state.logs_path)
    if not (path.is_file() and zipfile.is_zipfile(path)):  # evicted since `fetch`: fetched again
        path, _ = _download(ctx, _repo(ctx), state.workflow_run)
    report = read_archive(path, repo=_repo(ctx), job_names=[j["name"] for j in jobs])
    conclusions = {j["name"]: j["conclusion"] for j in jobs}
    # A job that succeeded may still print FAILED (a test rerun that passed, continue-on-error):
    # those did not fail the run. Jobs the API does not know (renamed, truncated) are kept.
    kept = [f for f in report.failures if conclusions.get(f.job, "failure") in ("failure", "timed_out")]
    ignored = len(report.failures) - len(kept)
    kept = kept[:MAX_RECORDED_FAILURES]
    summary = f"{len(kept)} failures in {len({f.job for f in kept})} jobs" + (f" ({ignored} in passing jobs ignored)" if ignored else "")
    ctx.log(summary)
    return StageResult(
        summary=summary,
        output={"failures": kept, "log_jobs": [j.to_dict() for j in report.jobs]},
    )


def signature_store(ctx: RunContext) -> SignatureStore:
    if ctx.signatures is None:
        raise RuntimeError("ci_ingest needs a signature store (ctx.signatures)")
    return ctx.signatures


def _passed(ctx: RunContext, wf: dict[str, Any]) -> StageResult:
    marked = signature_store(ctx).mark_passed_on_rerun(_repo(ctx), wf["id"], wf["attempt"])
    verdict = (f"attempt {wf['attempt']} passed: {len(marked)} signature(s) of earlier attempts are flaky"
               if marked else f"attempt {wf['attempt']} passed; no failure of an earlier attempt was recorded")
    return StageResult(summary=verdict, verdict=verdict, output={"verdict": verdict, "signatures": [
        {"fingerprint": fp, "passed_on_rerun": True} for fp in marked]})


def record(ctx: RunContext, state: IngestState) -> StageResult:
    wf = state.workflow_run or _workflow_run(ctx)
    if _passed_rerun(ctx):
        return _passed(ctx, wf)
    repo, store = _repo(ctx), signature_store(ctx)
    threshold = int(ctx.settings.ci_repeat_threshold or DEFAULT_THRESHOLD)
    lookups = Lookups(ctx, repo, wf)
    scope = scope_of(wf.get("event", ""), wf.get("head_branch", ""), wf.get("default_branch", ""))
    rows, spawned = [], []
    for failure in state.failures:
        seen = store.observe(repo, failure, wf["id"])
        history = store.history(repo, failure.signature)
        needs_trunk = scope != "trunk" and bool(history.trunk())
        classification = classify(
            event=wf.get("event", ""), head_branch=wf.get("head_branch", ""), default_branch=wf.get("default_branch", ""),
            head_repo=wf.get("head_repository", ""), base_repo=repo, job=failure.job, workflow=wf.get("name", ""),
            history=history, passed_on_rerun=lookups.passed_on_rerun, unstable_titles=lookups.unstable_titles,
            trunk=lookups.trunk if needs_trunk else None)
        occurrence = Occurrence(
            fingerprint=failure.signature, workflow_run_id=wf["id"], attempt=wf["attempt"], head_sha=wf["head_sha"],
            head_branch=wf["head_branch"], event=wf.get("event", ""), head_repo=wf.get("head_repository", ""),
            workflow=wf.get("name", ""), job=failure.job, pull_requests=tuple(wf.get("pull_requests") or ()),
            classification=classification, ingest_run_id=ctx.run_id, passed_on_rerun=lookups.passed_on_rerun)
        store.record_occurrence(repo, occurrence, error_key(failure.exception, failure.message))
        decision = decide(occurrence, history, threshold)
        linked = seen.linked_run_id
        if decision.opens and linked is None:
            opened = store.open_ci_run(repo, failure.signature, target=wf["html_url"], installation_id=ctx.installation_id,
                                       params=_job_params(ctx, failure, wf, seen, classification, decision.reason))
            if opened is not None:
                spawned.append(opened)
                linked = opened
                ctx.log(f"{failure.test or failure.job}: {decision.reason}; opened CI run #{opened}")
        rows.append({**failure.to_dict(), "count": seen.count, "linked_run_id": linked,
                     "classification": classification.to_dict(), "decision": decision.reason})
    ctx.save_artifact("failures.json", "json", json.dumps({"jobs": state.log_jobs, "failures": rows}, indent=1))
    ctx.save_artifact("failures.md", "markdown", failures_markdown(rows, wf))
    labels = sorted({r["classification"]["label"] for r in rows})
    verdict = f"{len(rows)} failures" + (f" ({', '.join(labels)})" if labels else "") + (
        f", opened CI runs {spawned}" if spawned else "")
    return StageResult(
        summary=verdict,
        enqueue=spawned,
        output={"spawned_runs": spawned, "verdict": verdict, "signatures": [
            {"fingerprint": r["signature"], "count": r["count"], "linked_run_id": r["linked_run_id"],
             "classification": r["classification"], "decision": r["decision"]} for r in rows
        ]},
    )


def _job_params(ctx: RunContext, failure: Any, wf: dict[str, Any], seen: Any, classification: Any,
                reason: str) -> dict[str, Any]:
    return {
        "repo": _repo(ctx),
        "fingerprint": failure.signature,
        "failure": failure.to_dict(),
        "workflow_run": wf,
        "workflow_run_ids": list(seen.workflow_run_ids),
        "count": seen.count,
        "opened_by_run": ctx.run_id,
        "classification": classification.to_dict(),
        "why": reason,
    }


STAGES = [Stage("fetch", fetch, state=IngestState), Stage("parse", parse, state=IngestState),
          Stage("record", record, state=IngestState)]
