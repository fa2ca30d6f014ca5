"""Is an issue actionable before any code runs? Seed `001` step 2-3 as a pure decision.

`triage(issue, repro, images=...)` returns a `Triage`: a decision, the labels to add or remove,
a reason a person can read, and whether running the repro needs CUDA (the `repro-gpu` queue)
or hardware no worker has. Labels already on the issue are never re-added.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from app.domain import Verdict
from app.engine.issue import repro_facts
from app.engine.issue.python_names import undefined_names, without_comments

if TYPE_CHECKING:
    from app.engine.issue.markdown import Repro

Json = dict[str, Any]

ACTIONABLE = "actionable"
# Decisions that stop the pipeline before review; "closed" also forbids any write.
STOP_DECISIONS = (
    Verdict.closed, Verdict.duplicate, Verdict.feature, Verdict.better_engineering, Verdict.documentation, Verdict.tracker,
    Verdict.needs_reproduction, Verdict.screenshot_only, Verdict.unavailable_hardware,
)
NEEDS_REPRO_LABEL = "needs reproduction"

_FEATURE_TITLE = re.compile(r"^\s*\[?(?:feature(?: request)?|rfc|proposal)\]?\s*[:\]-]|feature request", re.I)
_FEATURE_BODY = re.compile(r"The feature, motivation and pitch|^#+\s*🚀", re.I | re.M)
# PyTorch's documentation template ("📚 The doc issue", older "📚 Documentation") and "[docs]" titles.
_DOCS_BODY = re.compile(r"^#+\s*📚|^#+\s*The doc issue\b", re.I | re.M)
_DOCS_TITLE = re.compile(r"^\s*\[docs?\]|^\s*docs?\s*:", re.I)
_DOCS_LABELS = {"module: docs", "documentation", "docs"}
# A title that says the documentation and the code disagree ("implementation and documentation
# mismatch", "the docs do not match the signature"): a run shows what the code does, never which
# side is wrong, so its result can neither confirm nor close the report.
_DOCS_MISMATCH_TITLE = re.compile(
    r"\b(?:doc(?:s|umentation)?|docstring)\b[^.\n]{0,40}\b(?:mismatch\w*|inconsisten\w*|disagree\w*|contradict\w*"
    r"|(?:does not|doesn't|do not|don't) match)"
    r"|\b(?:mismatch\w*|inconsisten\w*|disagree\w*|contradict\w*)\b[^.\n]{0,40}\b(?:doc(?:s|umentation)?|docstring)\b",
    re.I)
# GitHub's "Duplicate of #N" (and its common misspellings) opening a comment.
_DUPLICATE = re.compile(r"^\W{0,3}dup+l?icate(?:d)?(?:\s+of)?\s*[:\-]?\s*(?:of\s+)?(?:https://github\.com/[\w.-]+/[\w.-]+/issues/|#)"
                        r"(?P<number>\d+)", re.I)
_BE_TITLE = re.compile(r"\[BE\]|better[- ]engineering|\brefactor(?:ing)?\b|\bclean[- ]?up\b|code cleanup", re.I)
_TRACKER_TITLE = re.compile(r"\[tracker\]|^\s*tracker\s*:|tracking issue|\bmeta[- ]issue\b|\bburn[- ]?down\b", re.I)
_CHECKLIST_ISSUE = re.compile(r"^\s*[-*]\s+\[[ xX]\]\s+.*(?:#\d+|/issues/\d+|/pull/\d+)", re.M)

_CUDA = re.compile(
    r"""\.cuda\(|['"]cuda(?::[^'"\n]*)?['"]|torch\.cuda\.(?!is_available)|device\s*=\s*['"]cuda|\bnccl\b|triton""",
)
_MULTI_GPU = re.compile(
    r"""['"]cuda:[1-9]|\.cuda\([1-9]|device_count\(\)\s*(?:>=?\s*[2-9]|==\s*[2-9])|nproc[_-]per[_-]node[= ]+[2-9]"""
    r"""|world_size\s*=\s*[2-9].*\bnccl\b|\bnccl\b.*world_size\s*=\s*[2-9]""",
    re.S,
)
_TPU = re.compile(r"\btorch_xla\b|xla_device\(|\bTPU\b")
_MULTI_NODE = re.compile(r"--nnodes[= ]+(?:[2-9]|\d\d)|\bmulti[- ]node\b", re.I)


@dataclass(frozen=True)
class Triage:
    decision: str  # ACTIONABLE or one of STOP_DECISIONS
    reason: str
    add_labels: list[str] = field(default_factory=list)
    remove_labels: list[str] = field(default_factory=list)
    needs_cuda: bool = False
    # The repro to run instead of the reported one: its CPU part, when the report blames the
    # CPU and compares with a CUDA result that is only a reference.
    cpu_source: str | None = None

    @property
    def stops(self) -> bool:
        return self.decision != ACTIONABLE

    def to_dict(self) -> Json:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Json) -> Triage:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def needs_cuda(source: str) -> bool:
    """The repro asks for a CUDA device (so it must run on a `repro-gpu` worker); only code that
    runs counts, not a commented-out `# device = "cuda"`."""
    return bool(_CUDA.search(without_comments(source)))


def unavailable_hardware(source: str, gpu_workers: int = 1) -> str | None:
    """A reason when the repro needs hardware no worker has: TPUs, several GPUs, several nodes
    (read from the code, not its comments)."""
    source = without_comments(source)
    if _TPU.search(source):
        return "a TPU (torch_xla)"
    if _MULTI_NODE.search(source):
        return "several nodes"
    if _MULTI_GPU.search(source) and gpu_workers < 2:
        return "more than one GPU"
    return None


def _labels(issue: Json) -> set[str]:
    return {(label.get("name") if isinstance(label, dict) else str(label)) for label in issue.get("labels") or []}


def _label_decision(issue: Json, labels: set[str], decision: str, label: str, reason: str) -> Triage:
    return Triage(decision, reason, add_labels=[] if label in labels else [label])


def duplicate_of(comments: list[Json], trusted: set[str] | None) -> tuple[int, str] | None:
    """(N, who) when a comment opens with "Duplicate of #N" (GitHub's own phrase, also
    "Duplicate: #N"), by someone in `trusted` (triage permission or higher); `trusted` None
    when no permission can be asked (a saved issue run by hand): then any human comment counts."""
    for comment in comments:
        who = (comment.get("user") or {}).get("login", "")
        found = _DUPLICATE.match((comment.get("body") or "").strip())
        if found and (trusted is None or who in trusted):
            return int(found.group("number")), who
    return None


def triage(issue: Json, repro: Repro | None, *, images: bool = False, gpu_workers: int = 1,
           comments: list[Json] | None = None, trusted: set[str] | None = None) -> Triage:
    """Seed step 2-3: stop on what is not a runnable bug report; otherwise say where it runs.

    Order matters: a closed issue is never touched; a duplicate (the label, or "Duplicate of
    #N" from a triager among `comments`, see `duplicate_of`) is not run; meta issues (tracker,
    feature, documentation, refactoring) are labelled even when they carry code; then a bug
    without a copyable repro.
    """
    title, body, labels = issue.get("title") or "", issue.get("body") or "", _labels(issue)
    if issue.get("state") == "closed":
        return Triage(Verdict.closed, f"the issue is closed ({issue.get('state_reason') or 'closed'}); nothing to do")
    if "duplicate" in labels:
        return Triage(Verdict.duplicate, "marked as a duplicate of another issue")
    if original := duplicate_of(comments or [], trusted):
        return Triage(Verdict.duplicate, f"{original[1]} marked it as a duplicate of #{original[0]}")
    if _TRACKER_TITLE.search(title) or len(_CHECKLIST_ISSUE.findall(body)) >= 2 or "tracker" in labels:
        return _label_decision(issue, labels, Verdict.tracker, "tracker", "a tracking issue, not a single bug")
    if _FEATURE_TITLE.search(title) or _FEATURE_BODY.search(body) or labels & {"feature", "enhancement"}:
        return _label_decision(issue, labels, Verdict.feature, "feature", "a feature request, not a bug report")
    if _DOCS_BODY.search(body) or _DOCS_TITLE.search(title) or _DOCS_MISMATCH_TITLE.search(title) \
            or (labels & _DOCS_LABELS and repro is None):
        return _label_decision(issue, labels, Verdict.documentation, "module: docs",
                               "a documentation issue, not a bug to reproduce")
    if _BE_TITLE.search(title) or "better-engineering" in labels:
        return _label_decision(
            issue, labels, Verdict.better_engineering, "better-engineering", "a refactoring / better-engineering task"
        )
    if repro is None:
        if images:
            return _label_decision(
                issue, labels, Verdict.screenshot_only, NEEDS_REPRO_LABEL,
                "the repro is only in a screenshot; a copyable script is needed",
            )
        return _label_decision(issue, labels, Verdict.needs_reproduction, NEEDS_REPRO_LABEL, "no repro script in the issue")
    if idle := repro_facts.never_runs(repro.source):
        return _label_decision(issue, labels, Verdict.needs_reproduction, NEEDS_REPRO_LABEL,
                               f"the code only defines {', '.join(idle[:5])} and never calls anything")
    if not repro.self_contained:
        missing = ", ".join(undefined_names(repro.source)[:5])
        return _label_decision(issue, labels, Verdict.needs_reproduction, NEEDS_REPRO_LABEL,
                               f"the code is a fragment: it uses {missing or 'names'} without defining them")
    remove = [NEEDS_REPRO_LABEL] if NEEDS_REPRO_LABEL in labels else []
    hardware = unavailable_hardware(repro.source, gpu_workers)
    if hardware:
        return Triage(Verdict.unavailable_hardware, f"the repro needs {hardware}, which no worker has", remove_labels=remove)
    cuda = needs_cuda(repro.source)
    if cuda and repro_facts.cpu_is_the_wrong_side(f"{title}\n{body}"):
        cpu = repro_facts.cpu_part(repro.source)
        if cpu is not None:
            return Triage(ACTIONABLE, "the report blames the CPU result; the CUDA lines are only a reference, so "
                          "they are dropped and the CPU part runs on a CPU worker", remove_labels=remove, cpu_source=cpu)
    where = "a GPU worker (it needs CUDA)" if cuda else "a CPU worker"
    return Triage(ACTIONABLE, f"a bug report with a repro; runs on {where}", remove_labels=remove, needs_cuda=cuda)
