"""What the CI job tells the signature's history (`app.ci_history.HistoryStore`), from the
report stage (a trusted worker, after the untrusted reruns): the reruns found the failure
flaky, and the draft PR that carries its test. Nothing when the run has no signature store
(the CLI) or no counted signature (a dispatch)."""

from __future__ import annotations

from app.ci_history import SignatureLink
from app.engine.verdict import rerun as reruns
from app.pipelines.base import RunContext
from app.pipelines.ci_failure.state import CIState, job_of


def record_outcome(ctx: RunContext, state: CIState) -> list[str]:
    store, job = ctx.signatures, job_of(state)
    if store is None or not job.signature or ctx.params.get("fingerprint") != job.signature:
        return []  # the CLI, or a dispatch (its failure was never counted as a signature)
    done = []
    if state.verdict == reruns.FLAKY and state.rerun:
        r = state.rerun
        store.mark_flaky(job.repo, job.signature,
                         f"the CI job's reruns (run #{ctx.run_id}): {r.get('failures')}/{r.get('runs')} failed")
        done.append("flaky")
    if state.pr_number:
        title = f"[scrub] test for {job.test}"[:300]
        store.link(job.repo, job.signature, SignatureLink("pull", int(state.pr_number), title, ctx.run_id, "draft PR"))
        done.append(f"PR #{state.pr_number}")
    return done
