"""The typed pipeline state: load from stored JSON, check stage outputs, encode typed parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from app.pipelines.state import PipelineState, PlainState, UnknownStateField, plain


@dataclass(frozen=True)
class Part:
    name: str
    size: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Part:
        return cls(**data)


@dataclass
class ToyState(PipelineState):
    DECODE = {"part": Part.from_dict, "parts": lambda items: [Part.from_dict(i) for i in items]}

    verdict: str | None = None
    count: int = 0
    part: Part | None = None
    parts: list[Part] = field(default_factory=list)


def test_load_decodes_typed_parts_and_leaves_unset_fields_at_their_defaults():
    state = ToyState.load({"part": {"name": "a", "size": 2}, "parts": [{"name": "b", "size": 1}]})
    assert state.part == Part("a", 2)
    assert state.parts == [Part("b", 1)]
    assert state.verdict is None and state.count == 0


def test_load_ignores_keys_an_older_version_stored():
    assert ToyState.load({"count": 3, "removed_since": True}).count == 3


def test_a_stored_null_stays_none_instead_of_being_decoded():
    assert ToyState.load({"part": None}).part is None


def test_check_output_names_the_stage_and_the_unknown_key():
    ToyState.check_output("count", {"count": 1})
    with pytest.raises(UnknownStateField, match=r"stage 'count' wrote cuont, which ToyState does not declare"):
        ToyState.check_output("count", {"cuont": 1})


def test_to_dict_round_trips_through_load():
    state = ToyState(verdict="ok", count=2, part=Part("a"), parts=[Part("b", 3)])
    assert ToyState.load(state.to_dict()) == state


def test_merged_applies_an_output_holding_typed_parts():
    state = ToyState(count=1).merged({"part": Part("x", 9), "verdict": "done"})
    assert state == ToyState(verdict="done", count=1, part=Part("x", 9))


def test_plain_encodes_nested_typed_parts_in_containers():
    assert plain({"a": [Part("p")], "b": (1, 2)}) == {"a": [{"name": "p", "size": 0}], "b": [1, 2]}


def test_plain_state_is_a_dict_that_accepts_any_key():
    state = PlainState.load({"x": 1})
    PlainState.check_output("any", {"whatever": 2})
    assert state == {"x": 1} and isinstance(state, dict)
