"""`ci_ingest`: a failed workflow run -> its failing tests, counted; a CI run when one repeats.

Stages (each checkpointed, so a retried task resumes where it stopped):

- `fetch`: the jobs of the run's attempt and its log archive (GitHub answers 302 to a short-lived
  URL; the client follows it and streams the zip to the run's data dir).
- `parse`: `cilogs.read_archive` over the zip, streaming; keeps the failures of failed jobs.
- `record`: count each fingerprint in the `SignatureStore` (once per workflow run); when one has
  failed in `settings.ci_repeat_threshold` distinct runs and has no CI run yet, open exactly one
  `Run(kind=ci_failure)`. The stage asks for its id to be enqueued (`StageResult.enqueue`) and
  lists it in `spawned_runs` (a record for the status page; it triggers nothing).
  Saves `failures.json` and `failures.md` for the status page.

Run params (set by the `workflow_run` webhook): repo, workflow_run_id, run_attempt, head_sha,
head_branch, name, url.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from app.engine.cilogs.archive import Failure, read_archive
from app.engine.cilogs.fingerprint import short_fingerprint
from app.pipelines.base import RunContext, Stage, StageResult
from app.pipelines.ci_ingest.signatures import SignatureStore
from app.pipelines.ci_ingest.state import IngestState

MAX_RECORDED_FAILURES = 200  # per workflow run: a broken build fails everything, count the first ones
DEFAULT_THRESHOLD = 2


def _repo(ctx: RunContext) -> str:
    return ctx.params.get("repo") or ""


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
    }


def logs_path(ctx: RunContext, repo: str, run_id: int, attempt: int) -> Path:
    data_dir = Path(ctx.settings.data_dir)
    return data_dir / "ci-logs" / repo.replace("/", "__") / f"run-{run_id}-attempt-{attempt}.zip"


def fetch(ctx: RunContext, state: IngestState) -> StageResult:
    if ctx.github is None:
        raise RuntimeError("ci_ingest needs GitHub access (no client configured)")
    repo, wf = _repo(ctx), _workflow_run(ctx)
    jobs = [
        {"id": j.get("id"), "name": j.get("name", ""), "conclusion": j.get("conclusion")}
        for j in ctx.github.list_run_jobs(repo, wf["id"], attempt=wf["attempt"])
    ]
    dest = logs_path(ctx, repo, wf["id"], wf["attempt"])
    if not (dest.is_file() and zipfile.is_zipfile(dest)):  # a retry keeps what was downloaded
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial = dest.with_suffix(".part")
        ctx.github.download_run_logs(repo, wf["id"], partial, attempt=wf["attempt"])
        partial.replace(dest)
    failed = [j["name"] for j in jobs if j["conclusion"] in ("failure", "timed_out")]
    summary = f"{len(jobs)} jobs, {len(failed)} failed; logs {dest.stat().st_size // 1024} KiB"
    return StageResult(summary=summary, output={"logs_path": str(dest), "jobs": jobs, "workflow_run": wf})


def parse(ctx: RunContext, state: IngestState) -> StageResult:
    jobs = state.jobs
    report = read_archive(state.logs_path, repo=_repo(ctx), job_names=[j["name"] for j in jobs])
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


def record(ctx: RunContext, state: IngestState) -> StageResult:
    repo, wf = _repo(ctx), state.workflow_run
    store = signature_store(ctx)
    threshold = int(ctx.settings.ci_repeat_threshold or DEFAULT_THRESHOLD)
    rows, spawned = [], []
    for failure in state.failures:
        seen = store.observe(repo, failure, wf["id"])
        linked = seen.linked_run_id
        if seen.should_open(threshold):
            params = {
                "repo": repo,
                "fingerprint": failure.signature,
                "failure": failure.to_dict(),
                "workflow_run": wf,
                "workflow_run_ids": list(seen.workflow_run_ids),
                "count": seen.count,
                "opened_by_run": ctx.run_id,
            }
            opened = store.open_ci_run(
                repo, failure.signature, target=wf["html_url"], params=params,
                installation_id=ctx.installation_id,
            )
            if opened is not None:
                spawned.append(opened)
                linked = opened
                ctx.log(f"{failure.test or failure.job}: failed in {seen.count} runs, opened CI run #{opened}")
        rows.append({**failure.to_dict(), "count": seen.count, "linked_run_id": linked})
    ctx.save_artifact("failures.json", "json", json.dumps({"jobs": state.log_jobs, "failures": rows}, indent=1))
    ctx.save_artifact("failures.md", "markdown", failures_markdown(rows, wf))
    repeated = sum(1 for r in rows if r["count"] >= threshold)
    verdict = f"{len(rows)} failures, {repeated} repeated" + (f", opened CI runs {spawned}" if spawned else "")
    return StageResult(
        summary=verdict,
        enqueue=spawned,
        output={"spawned_runs": spawned, "verdict": verdict, "signatures": [
            {"fingerprint": r["signature"], "count": r["count"], "linked_run_id": r["linked_run_id"]} for r in rows
        ]},
    )


def _cell(text: str, limit: int = 120) -> str:
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    first = first if len(first) <= limit else first[: limit - 1] + "…"
    # Keeps the table a table; HTML is the renderer's to escape (the status page does).
    return first.replace("|", "\\|").replace("`", "'")


def failures_markdown(rows: list[dict[str, Any]], wf: dict[str, Any]) -> str:
    """The status page's view of a CI ingest: one row per failure, with its count and CI run."""
    title = f"[{wf.get('name') or 'workflow run'} #{wf['id']}]({wf['html_url']})"
    lines = [f"## Failures of {title}", ""]
    if not rows:
        return "\n".join(lines + ["No failing test found in the logs."]) + "\n"
    lines += ["| job | test | kind | error | runs | CI run | signature |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        error = f"`{_cell(r['exception'], 60)}` {_cell(r['message'])}".strip()
        linked = f"#{r['linked_run_id']}" if r.get("linked_run_id") else ""
        lines.append(
            f"| {_cell(r['job'], 60)} | `{_cell(r['test'], 100)}` | {r['kind']} | {error} | {r['count']} | {linked} "
            f"| `{short_fingerprint(r['signature'])}` |"
        )
    hints = [(r["test"] or r["job"], r["hint"]) for r in rows if r.get("hint")]
    if hints:
        lines += ["", "### Hints", ""] + [f"- `{_cell(test, 100)}`: {hint}" for test, hint in hints]
    return "\n".join(lines) + "\n"


STAGES = [Stage("fetch", fetch, state=IngestState), Stage("parse", parse, state=IngestState),
          Stage("record", record, state=IngestState)]
