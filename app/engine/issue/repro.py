"""`Repro`: one runnable piece of code from an issue thread, with where it came from.

Every candidate the selection sees and the one that runs: its source (with the standard
imports a snippet left out added), who posted it and where (`where`: "the issue body",
"comment 3"; `line` in that post), what kind of block it was (`fenced`, `repl`, `unfenced`,
`inline`), what the post presents it as (`role`: `repro` or `control`, for an "Expected
behavior" variant or a workaround), whether its author may speak for the project
(`trusted`: the original poster, or triage permission or higher), and `why` it was chosen.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from app.engine.minimize.size import code_lines

Json = dict[str, Any]


@dataclass(frozen=True)
class Repro:
    source: str
    author: str
    url: str
    created_at: str
    by_original_poster: bool
    self_contained: bool = field(default=True)
    # The source is the CPU part of the posted repro (triage dropped a CUDA-only comparison).
    cuda_dropped: bool = False
    kind: str = "fenced"
    role: str = "repro"
    where: str = ""
    line: int = 0
    trusted: bool = False  # the original poster or a triager (and up): may replace or close
    why: str = ""  # why this candidate runs (the selection rule, or the run that showed the failure)
    verbatim: bool = True  # the block as posted (standard imports aside): what the poster ran

    @property
    def lines(self) -> int:
        return code_lines(self.source)

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in self.source.splitlines()
                     if line.strip() and not line.startswith(("import ", "from "))), "")

    def to_dict(self) -> Json:
        """The stored shape: the fields a repro always had, plus the newer ones that are set."""
        data = asdict(self)
        dropped = data.pop("cuda_dropped")
        for name, default in _OPTIONAL.items():
            if data[name] == default:
                del data[name]
        return data | {"lines": self.lines} | ({"cuda_dropped": True} if dropped else {})

    @classmethod
    def from_dict(cls, data: Json) -> Repro:
        """From `to_dict()` (`lines` is derived); fields with a default may be absent."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


_OPTIONAL = {"kind": "fenced", "role": "repro", "where": "", "line": 0, "trusted": False, "why": "", "verbatim": True}
