"""When a tracked bug is re-checked, and what its re-check is given.

The scheduler (`workers/schedule.py`: Celery beat on a real broker, a thread of `scrub worker`
on the embedded one) calls these each tick:

- `current_build(settings)`: the newest build: the newest nightly on
  `SCRUB_TORCH_NIGHTLY_INDEX_URL` when one is configured (it is newer than any release), else
  the newest provisioned release (`SCRUB_ENVIRONMENTS` / `scrub env add`);
- `due(bugs, ...)`: which open bugs to re-check now, within each repository's daily budget
  (`SCRUB_PROGRESSION_RUNS_PER_DAY`). An issue is due when the current build is not the one it
  was last checked on (a new release or nightly), any bug when its last check (or the run that
  found it) is older than `SCRUB_PROGRESSION_INTERVAL_S`. New builds go first, then the bugs
  checked longest ago. A bug with a re-check queued or running waits for it;
- `params_for(...)`: the re-check's run params, built from the run that found the bug (the
  repro, the reported failure, the rate measured then; or the generated test and its PR), so
  the re-check needs nothing but its params (the trusted side reads the database, the run does
  not).

Pure except `current_build` (which reads the index and probes an interpreter).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.domain import TrackedBug
from app.engine.envs.index import IndexUnavailable, torch_wheels
from app.engine.envs.nightlies import daily
from app.engine.sandbox.environments import InterpreterError, probe_interpreter

ISSUE, PULL = "issue", "pull"
NEW_BUILD, PERIODIC = 0, 1  # priorities


@dataclass(frozen=True)
class Due:
    bug: TrackedBug
    reason: str  # "new build nightly 2026-03-05", "periodic: last checked 2026-03-04 10:00 UTC"
    priority: int


def _version(python: str) -> str:
    try:
        return probe_interpreter(python).torch_version or ""
    except InterpreterError:
        return ""


def release_build(label: str, python: str) -> dict[str, Any]:
    return {"label": label, "version": _version(python) or label, "kind": "release", "python": python}


def nightly_builds(settings: Any) -> list[dict[str, Any]]:
    """The index's nightlies (one a day, oldest first) as builds; empty without an index."""
    if not settings.torch_nightly_index_url:
        return []
    try:
        nightlies = daily(torch_wheels(settings.torch_nightly_index_url), gpu=bool(settings.gpu))
    except IndexUnavailable:
        return []
    return [{"label": n.label, "version": n.version, "kind": "nightly", "nightly": n.to_dict()} for n in nightlies]


def current_build(settings: Any) -> dict[str, Any]:
    """The newest build a re-check runs on (module docstring)."""
    nightlies = nightly_builds(settings)
    if nightlies:
        return nightlies[-1]
    label, python = list(settings.environment_map.items())[-1]
    return release_build(label, python)


def build_named(settings: Any, label: str) -> dict[str, Any] | None:
    """The build a label names (a provisioned release or an index nightly), or None when gone."""
    envs = settings.environment_map
    if label in envs:
        return release_build(label, envs[label])
    if label.startswith("nightly "):
        return next((b for b in nightly_builds(settings) if b["label"] == label), None)
    return None


def _aware(moment: datetime | None) -> datetime | None:
    from datetime import UTC

    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def due(bugs: list[TrackedBug], *, build: str, now: datetime, interval_s: float, per_day: int,
        spent: dict[str, int], found_at: dict[int, datetime] | None = None) -> list[Due]:
    """The re-checks to start now, in order (module docstring). `build`: the current build's
    label; `spent`: progression runs per repository (lower case) in the last day; `found_at`:
    when each source run ended (a bug never re-checked counts from then)."""
    wanted: list[Due] = []
    for bug in bugs:
        if not bug.open or bug.active_run is not None:
            continue
        checked_on = bug.last_check_build or bug.build
        last = _aware(bug.last_check_at) or _aware((found_at or {}).get(bug.source_run))
        if bug.target == ISSUE and checked_on != build:
            wanted.append(Due(bug, f"new build {build}", NEW_BUILD))
        elif last is None or now - last >= timedelta(seconds=interval_s):
            when = f"last checked {last:%Y-%m-%d %H:%M} UTC" if last else "never checked"
            wanted.append(Due(bug, f"periodic: {when}", PERIODIC))
    epoch = datetime.min.replace(tzinfo=now.tzinfo)
    wanted.sort(key=lambda d: (d.priority, _aware(d.bug.last_check_at) or epoch, d.bug.source_run))
    left = {}
    chosen = []
    for item in wanted:
        repo = item.bug.repo.lower()
        left.setdefault(repo, per_day - spent.get(repo, 0))
        if left[repo] > 0:
            chosen.append(item)
            left[repo] -= 1
    return chosen


def params_for(bug: TrackedBug, source: dict[str, Any], *, build: dict[str, Any], last_build: dict[str, Any] | None,
               reason: str) -> dict[str, Any]:
    """A re-check's params from the bug and its source run's state (module docstring)."""
    common = {"repo": bug.repo, "number": bug.number, "target": bug.target, "source_run": bug.source_run,
              "title": bug.title, "last_state": bug.state, "reason": reason, "build": build}
    if bug.target == PULL:
        job, generated = source.get("job") or {}, source.get("generated") or {}
        return common | {"base": str(job.get("base") or "main"), "failed_at": str(job.get("head_sha") or ""),
                         "test_path": generated.get("path"), "test_source": generated.get("source"),
                         "test_kind": generated.get("kind") or "repro", "rerun": source.get("rerun") or {},
                         "pr_url": source.get("pr_url"), "needs_gpu": bool(job.get("needs_gpu"))}
    repro = source.get("repro") or {}
    return common | {"source": repro.get("source") or "", "repro_url": repro.get("url"),
                     "trusted": bool(repro.get("trusted")),
                     "reported": source.get("reported"), "expected_exception": source.get("expected_exception"),
                     "reproduction": {k: (source.get("reproduction") or {}).get(k)
                                      for k in ("runs", "reproduced", "interval", "rate")},
                     "needs_cuda": bool(source.get("needs_cuda")), "last_build": last_build}


__all__ = ["Due", "build_named", "current_build", "due", "nightly_builds", "params_for", "release_build"]
