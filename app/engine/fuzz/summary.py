"""The fix summary: the seed's step-2 questions, answered from what the fix command wrote.

The fix command may write markdown to `SUMMARY_FILE` (its path is in `$SCRUBBOT_SUMMARY_FILE`):
an optional first `# PR title` heading, a paragraph (the PR summary), and `## <question>`
sections. Headings are matched to the seed's questions by keyword (`## Root cause`,
`## Complexity`, `## Edge cases`, `## Similar operations`, ...). What the command did not
answer is said to be unanswered; nothing is made up. The file itself is never committed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

SUMMARY_FILE = ".scrubbot-fix-summary.md"
QUESTIONS = (
    ("root_cause", "What was the root cause?", ("root cause", "cause")),
    ("complexity", "What is the runtime complexity of the fix?", ("complexity", "runtime")),
    ("refactoring", "Were there refactoring opportunities (duplication, early exits)?", ("refactor", "dry")),
    ("edge_cases", "What edge cases does the fix handle?", ("edge case", "corner case")),
    ("correctness", "Why is this fix correct?", ("correct", "why")),
    ("similar", "Are there other similar operations that might have the same bug?", ("similar", "other op")),
)
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$")


@dataclass
class FixSummary:
    title: str = ""
    summary: str = ""
    answers: dict[str, str] = field(default_factory=dict)
    written: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    def render(self) -> str:
        """The questions and their answers, as markdown (the report and the fix commit use it)."""
        if not self.written:
            return "The fix command wrote no summary (" + SUMMARY_FILE + "): the questions stay unanswered."
        lines = []
        for key, question, _ in QUESTIONS:
            lines.append(f"- {question} " + (self.answers.get(key) or "(not answered by the fix command)"))
        return "\n".join(lines)


def _key_of(heading: str) -> str | None:
    lowered = heading.lower()
    for key, _, words in QUESTIONS:
        if any(word in lowered for word in words):
            return key
    return None


def parse_summary(text: str | None) -> FixSummary:
    if not text or not text.strip():
        return FixSummary()
    result = FixSummary(written=True)
    current: str | None = "_intro"
    chunks: dict[str, list[str]] = {"_intro": []}
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) == 1 and not result.title and current == "_intro":
            result.title = heading.group(2).strip()[:120]
            continue
        if heading:
            current = _key_of(heading.group(2))
            if current:
                chunks.setdefault(current, [])
            continue
        if current:
            chunks.setdefault(current, []).append(line)
    result.summary = "\n".join(chunks.pop("_intro")).strip()[:2000]
    result.answers = {k: " ".join(v).strip()[:1000] for k, v in chunks.items() if " ".join(v).strip()}
    return result
