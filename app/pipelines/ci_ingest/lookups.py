"""What the classification of an ingest's failures needs from GitHub, asked at most once per
ingest and only when a failure needs it (`app.engine.cilogs.classify` decides with it).

- `passed_on_rerun`: the run's latest attempt (`GET .../actions/runs/{id}`): a later attempt
  that succeeded makes this attempt's failures flaky.
- `unstable_titles`: open issues labelled `unstable` (PyTorch's `UNSTABLE <job>` issues).
- `trunk`: for a PR or branch run, the merge base of its head with the default branch (the
  compare API) and the latest completed trunk runs of the same workflow.

A question GitHub does not answer leaves its evidence out (and, for trunk, the reason);
it never fails the ingest.
"""

from __future__ import annotations

import logging
from functools import cached_property
from typing import Any

from app.engine.cilogs.classify import TRUNK_EVENTS, TrunkState
from app.github.port import GitHubAPIError
from app.pipelines.base import RunContext

log = logging.getLogger(__name__)
UNSTABLE_LABEL = "unstable"
TRUNK_WINDOW = 5  # trunk's latest runs of the workflow that count as "trunk now"
RUNS_PAGE = 50  # one page of the default branch's runs, to find TRUNK_WINDOW of this workflow


class Lookups:
    def __init__(self, ctx: RunContext, repo: str, workflow_run: dict[str, Any]) -> None:
        self.ctx, self.repo, self.wf = ctx, repo, workflow_run

    def _ask(self, what: str, call, *args: Any, **kwargs: Any) -> tuple[Any, str]:
        try:
            return call(*args, **kwargs), ""
        except GitHubAPIError as exc:
            self.ctx.log(f"GitHub did not say ({what}): {exc}")
            return None, f"GitHub did not answer ({what}: {exc.status})"

    @cached_property
    def passed_on_rerun(self) -> bool:
        latest, _ = self._ask("the run's latest attempt", self.ctx.github.get_workflow_run, self.repo, self.wf["id"])
        if not isinstance(latest, dict):
            return False
        attempt = int(latest.get("run_attempt") or 1)
        return attempt > int(self.wf.get("attempt") or 1) and latest.get("conclusion") == "success"

    @cached_property
    def unstable_titles(self) -> tuple[str, ...]:
        issues, _ = self._ask("unstable issues", self.ctx.github.list_open_issues, self.repo, UNSTABLE_LABEL)
        return tuple(str(i.get("title") or "") for i in issues or ())

    @cached_property
    def trunk(self) -> TrunkState:
        default, head = self.wf.get("default_branch") or "", self.wf.get("head_sha") or ""
        if not default or not head:
            return TrunkState(problem="the run names no default branch or head commit")
        merge_base, why_base = self._ask("merge base", self.ctx.github.merge_base, self.repo, default, head)
        runs, why_runs = self._ask("trunk's latest runs", self.ctx.github.list_workflow_runs, self.repo,
                                   default, RUNS_PAGE)
        latest = None
        if runs is not None:
            path = self.wf.get("workflow_path") or ""
            same = [r for r in runs if r.get("event") in TRUNK_EVENTS and r.get("head_branch") == default
                    and (not path or r.get("path") == path)]
            latest = tuple(int(r["id"]) for r in same[:TRUNK_WINDOW])
        return TrunkState(merge_base=merge_base, latest_runs=latest,
                          problem="; ".join(p for p in (why_base, why_runs) if p))
