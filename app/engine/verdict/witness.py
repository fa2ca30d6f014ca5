"""No "fixed" without a witness: evidence that the script that passes now once showed the bug.

A clean run proves the bug is gone only if *this script* demonstrated the bug. A control
block, a stranger's variant, a script that needs a GPU the worker lacks or a platform the
worker is not: all pass now without saying anything about the bug. So before Scrubbot says
"no longer reproduces" and closes, one of two witnesses must hold:

- `older-release`: the same script, run on an older provisioned release (the reporter's
  version when it is provisioned, else the oldest one), fails with the reported failure
  there (`classify(...) == reproduces`, within `WITNESS_RUNS` runs);
- `self-check`: the script is the one the reporter (or a triager) posted and presented as
  failing (it is a `repro` block, run verbatim, with a reported failure), and it checks its
  own result (an `assert`, an `assert_*` call, a `raise`, an exit code or a BUG/OK print), so
  its clean run now is the script itself saying the bug is gone.

Without either, the verdict is `passes-now`: the comment says what happens now and why it
cannot close, a label marks it, and the issue stays open.

Pure decisions over plain data; the runs are the caller's (`app/pipelines/issue/runner.py`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from app.domain import Verdict
from app.engine.verdict.classify import quoted_only
from app.engine.verdict.script import ScriptFacts

OLDER_RELEASE, SELF_CHECK, NONE = "older-release", "self-check", "none"
WITNESS_RUNS = 3  # runs on the older release: a flaky bug gets three chances to show


@dataclass(frozen=True)
class Witness:
    kind: str  # older-release, self-check or none
    why: str  # one sentence for the comment
    environment: str | None = None  # the older release that ran (older-release, or none after trying)
    observed: str = ""  # what the script did there

    @property
    def holds(self) -> bool:
        return self.kind in (OLDER_RELEASE, SELF_CHECK)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Witness:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def self_check(*, trusted: bool, role: str, verbatim: bool, reported: dict[str, Any] | None,
               facts: ScriptFacts) -> Witness | None:
    """The `self-check` witness, or None when one of its conditions fails."""
    if not (trusted and role == "repro" and verbatim and reported and facts.self_checking) or quoted_only(reported):
        return None
    return Witness(SELF_CHECK, "the script is the one the report presents as failing, and it checks its own "
                               "result, so its clean runs now are its own verdict")


def release_to_try(labels: list[str], current: str, reported_version: str | None) -> str | None:
    """The older environment to look for a witness on: the reporter's version when one of the
    labels names it, else the oldest label; None when there is nothing older than `current`."""
    older = labels[:labels.index(current)] if current in labels else [label for label in labels if label != current]
    if not older:
        return None
    if reported_version:
        for label in older:
            if label.split("+")[0] == reported_version or label == reported_version.rsplit(".", 1)[0]:
                return label
    return older[0]


def older_release(label: str, verdicts: list[str], observed: str) -> Witness:
    """The answer of the runs on `label`: a witness when one reproduced."""
    if Verdict.reproduces in verdicts:
        return Witness(OLDER_RELEASE, f"on PyTorch {label} the same script fails with the reported failure",
                       label, observed)
    return Witness(NONE, f"on PyTorch {label} it did not fail with the reported failure either ({observed})",
                   label, observed)


def missing(reason: str) -> Witness:
    return Witness(NONE, reason)


def no_witness_reason(*, trusted: bool, role: str, verbatim: bool, reported: dict[str, Any] | None,
                      facts: ScriptFacts, older_tried: bool) -> str:
    """Why nothing witnesses the script, for the comment (the first reason that applies)."""
    if not trusted:
        return "the script that ran was posted by someone other than the reporter or a maintainer"
    if role != "repro":
        return "the script that ran is presented in the issue as the expected behaviour or a workaround"
    if not reported:
        return "the issue states no failure to compare with"
    if not verbatim:
        return "the script that ran is an adapted version of the posted one"
    if not facts.self_checking and not older_tried:
        return ("the script does not check its own result and no older PyTorch release is provisioned to show "
                "that it once failed")
    return "the script does not check its own result"


__all__ = ["NONE", "OLDER_RELEASE", "SELF_CHECK", "WITNESS_RUNS", "Witness", "missing", "no_witness_reason",
           "older_release", "release_to_try", "self_check"]
