"""CI failures classified before a job opens: trunk or PR, same repository or fork, broken
trunk, flaky, unstable; and whether a failure opens a CI job (`decide`).

Pure functions over what the ingest gathered (the workflow run, the signature's history, a
few GitHub answers); `app.ci_history` has the data types. The rules, after PyTorch's Dr. CI:

- **trunk**: a `push` or `schedule` run on the default branch; **pr**: a `pull_request*` run;
  anything else (a push to another branch or a tag) is **branch**.
- **fork**: the run's head repository is not the base repository (or is not named). A fork's
  failure is recorded and reported, never checked out, pushed or given the fix command.
- **broken trunk** (PR and branch failures): the signature failed on trunk at the PR's merge
  base, or in one of trunk's latest completed runs of the same workflow. Unknown (None) when
  the signature failed on trunk but neither could be checked.
- **flaky**: this workflow run passed on a rerun in CI (a later attempt succeeded), or the
  signature is known flaky (an earlier run passed on rerun, or the CI job's reruns said so).
- **unstable**: the job's name says `unstable`, or an open issue labelled `unstable` is titled
  `UNSTABLE <workflow / job (config)>` for it (shard numbers dropped), as PyTorch marks them.

`decide`: only trunk failures and repeated PR (or branch) failures that are neither broken
trunk nor known flaky open a job, never a fork's or an unstable job's; "repeated" is the
repeat threshold, counted in distinct workflow runs of the same kind (trunk runs for a trunk
failure; clean same-repository PR and branch runs for a PR failure).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.ci_history import Classification, Occurrence, Scope, SignatureHistory
from app.engine.cilogs.fingerprint import normalize_job_name

TRUNK_EVENTS = frozenset({"push", "schedule"})
PR_EVENTS = frozenset({"pull_request", "pull_request_target"})
UNSTABLE_WORD = re.compile(r"\bunstable\b", re.IGNORECASE)
UNSTABLE_TITLE = re.compile(r"^\s*UNSTABLE\s+(?P<job>.+?)\s*$")


def scope_of(event: str, head_branch: str, default_branch: str) -> Scope:
    if event in TRUNK_EVENTS and head_branch and head_branch == default_branch:
        return Scope.trunk
    if event in PR_EVENTS:
        return Scope.pr
    return Scope.branch


def same_repository(head_repo: str, base_repo: str) -> bool:
    """A head repository that is not named counts as another one: nothing unproven is trusted."""
    return bool(head_repo) and head_repo.lower() == base_repo.lower()


def _job_key(text: str) -> str:
    return normalize_job_name(text).lower()


def unstable_reason(job: str, workflow: str, unstable_titles: Iterable[str]) -> str:
    """Why the job counts as unstable, or "" when it does not."""
    if UNSTABLE_WORD.search(job):
        return f"the job `{job}` is marked unstable in its name"
    names = {_job_key(job), _job_key(f"{workflow} / {job}")}
    for title in unstable_titles:
        match = UNSTABLE_TITLE.match(title or "")
        if match and _job_key(match["job"]) in names:
            return f"an open `unstable` issue marks it: {title.strip()[:200]}"
    return ""


@dataclass(frozen=True)
class TrunkState:
    """What GitHub says about trunk for one PR run: the merge base with the default branch and
    the latest completed trunk runs of the same workflow (None: could not be asked)."""

    merge_base: str | None = None
    latest_runs: tuple[int, ...] | None = None
    problem: str = ""  # why something could not be asked


def broken_trunk(history: SignatureHistory, trunk: TrunkState) -> tuple[bool | None, str]:
    """(broken, evidence): whether the signature failed on trunk where this PR stands."""
    on_trunk = history.trunk()
    if not on_trunk:
        return False, ""
    by_sha = {o.head_sha: o for o in on_trunk}
    if trunk.merge_base and trunk.merge_base in by_sha:
        seen = by_sha[trunk.merge_base]
        return True, (f"broken trunk: it failed on the merge base {trunk.merge_base[:12]} "
                      f"(trunk run {seen.workflow_run_id})")
    if trunk.latest_runs:
        failed = sorted({o.workflow_run_id for o in on_trunk} & set(trunk.latest_runs))
        if failed:
            return True, (f"broken trunk: it failed in trunk's latest runs of the workflow "
                          f"({', '.join(str(r) for r in failed)} of the last {len(trunk.latest_runs)})")
    if trunk.merge_base is None and trunk.latest_runs is None:
        return None, f"broken trunk unknown: it failed on trunk before, and {trunk.problem or 'GitHub did not say'}"
    return False, ""


def classify(*, event: str, head_branch: str, default_branch: str, head_repo: str, base_repo: str,
             job: str, workflow: str, history: SignatureHistory, passed_on_rerun: bool,
             unstable_titles: Sequence[str] = (), trunk: TrunkState | None = None) -> Classification:
    scope = scope_of(event, head_branch, default_branch)
    same = same_repository(head_repo, base_repo)
    evidence = [f"{scope.value}: a `{event or 'unknown'}` run on `{head_branch or '?'}`"
                + (f" (default branch `{default_branch}`)" if default_branch else "")]
    if not same:
        evidence.append(f"fork: the head repository is {head_repo or 'not named'}, not {base_repo}")
    broken: bool | None = False
    if scope != Scope.trunk:
        broken, why = broken_trunk(history, trunk or TrunkState(problem="trunk was not asked"))
        if why:
            evidence.append(why)
    flaky = passed_on_rerun or history.flaky
    if passed_on_rerun:
        evidence.append("flaky: a later attempt of this workflow run passed")
    elif history.flaky:
        evidence.append(f"flaky: known flaky ({history.flaky_evidence or 'its history'})")
    unstable = unstable_reason(job, workflow, unstable_titles)
    if unstable:
        evidence.append(f"unstable: {unstable}")
    return Classification(scope=scope.value, same_repo=same, broken_trunk=broken, flaky=flaky,
                          unstable=bool(unstable), evidence=tuple(evidence))


@dataclass(frozen=True)
class JobDecision:
    opens: bool
    reason: str
    count: int = 0  # distinct workflow runs that count toward the threshold


def _counts_for_pr(o: Occurrence) -> bool:
    c = o.classification
    return (c.scope != Scope.trunk and c.same_repo and not c.unstable and c.broken_trunk is False
            and not c.flaky and not o.passed_on_rerun)


def _counts_for_trunk(o: Occurrence) -> bool:
    c = o.classification
    return c.scope == Scope.trunk and c.same_repo and not c.unstable


def decide(current: Occurrence, history: SignatureHistory, threshold: int) -> JobDecision:
    """Whether `current` (already part of `history`, or not) opens a CI job."""
    c = current.classification
    if not c.same_repo:
        return JobDecision(False, "a fork's failure: recorded and reported, never checked out, pushed or fixed")
    if c.unstable:
        return JobDecision(False, "the job is marked unstable")
    if c.scope == Scope.trunk:
        counted = _counts_for_trunk
        kind = "trunk"
    else:
        if c.broken_trunk:
            return JobDecision(False, "broken trunk: attributed to trunk, not to this change")
        if c.broken_trunk is None:
            return JobDecision(False, "broken trunk could not be checked: no job until it can")
        if c.flaky or current.passed_on_rerun or history.flaky:
            return JobDecision(False, "known flaky: not this change's failure")
        counted = _counts_for_pr
        kind = "PR and branch"
    runs = {o.workflow_run_id for o in (*history.occurrences, current) if counted(o)}
    if len(runs) >= threshold:
        return JobDecision(True, f"failed in {len(runs)} {kind} runs (threshold {threshold})", len(runs))
    return JobDecision(False, f"failed in {len(runs)} of the {threshold} {kind} runs needed", len(runs))
