"""Typed pipeline state: each pipeline declares its fields once, stages read attributes.

The runner keeps the state as plain JSON (stage outputs merge into it, and a retried run's
done stages come back from the database as JSON). A stage never sees that dict: it gets a
typed view, `MyState.load(data)`, and returns an output whose keys must be fields of the
same class (`check_output`: a misspelt key fails the stage in tests instead of being lost).

- Every field has a default: it is unset until the stage that writes it has run.
- Nested values with a type of their own (a `Repro`, a `CIJob`) are decoded by the class's
  `DECODE` table and encoded back by `plain()` (anything with `to_dict()`), so outputs may
  hold the typed object itself.
- Keys the class does not know are ignored on load: a run stored by an older version, whose
  state had a key since removed, still resumes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar, Mapping, TypeVar

from app.domain import from_known

__all__ = ["Json", "PipelineState", "UnknownStateField", "from_known", "plain"]

Json = dict[str, Any]
S = TypeVar("S", bound="PipelineState")


class UnknownStateField(KeyError):
    """A stage wrote a key its pipeline's state does not declare (a programming error)."""

    def __str__(self) -> str:
        return str(self.args[0])


def plain(value: Any) -> Any:
    """`value` as JSON: typed parts (anything with `to_dict()`) encoded, containers walked."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


@dataclass
class PipelineState:
    """Base of a pipeline's state. Subclasses are dataclasses whose fields all have defaults."""

    # field name -> how its stored JSON becomes the typed value (None stays None)
    DECODE: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    @classmethod
    def field_names(cls) -> frozenset[str]:
        return frozenset(f.name for f in fields(cls))

    @classmethod
    def load(cls: type[S], data: Mapping[str, Any] | None) -> S:
        names = cls.field_names()
        values = {}
        for key, value in (data or {}).items():
            if key not in names:
                continue
            decode = cls.DECODE.get(key)
            values[key] = decode(value) if decode and value is not None else value
        return cls(**values)

    @classmethod
    def check_output(cls, stage: str, output: Mapping[str, Any]) -> None:
        unknown = sorted(set(output) - cls.field_names())
        if unknown:
            raise UnknownStateField(f"stage {stage!r} wrote {', '.join(unknown)}, which {cls.__name__} does not declare")

    def to_dict(self) -> Json:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}

    def merged(self: S, output: Mapping[str, Any]) -> S:
        """This state with a stage's output applied (what the next stage sees)."""
        type(self).check_output("(merge)", output)
        return type(self).load(self.to_dict() | plain(dict(output)))


class PlainState(dict):
    """The untyped state of a small pipeline (selftest, test doubles): a dict, any key."""

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> PlainState:
        return cls(data or {})

    @classmethod
    def check_output(cls, stage: str, output: Mapping[str, Any]) -> None:
        return None
