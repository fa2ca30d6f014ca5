"""The shared vocabulary's helpers: loading stored records, parsing commands and environments."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.domain import from_known, parse_command, parse_environments


@dataclass
class Record:
    name: str
    count: int = 0
    tags: tuple[str, ...] = ()


def test_from_known_keeps_known_fields_defaults_the_rest_and_ignores_unknown_keys():
    loaded = from_known(Record, {"name": "a", "removed_long_ago": 1, "added_later": {"x": 1}})
    assert loaded == Record(name="a")
    assert from_known(Record, {"name": "b", "count": 3}) == Record("b", 3)


def test_from_known_still_refuses_a_record_missing_a_required_field():
    with pytest.raises(TypeError):
        from_known(Record, {"count": 3})
    with pytest.raises(TypeError):
        from_known(Record, None)


def test_commands_and_environments_parse():
    assert parse_command("/scrub approve").word == "approve"
    assert parse_command("thanks!") is None
    assert parse_environments("old=/py/old,new=/py/new", default_python="/py") == {"old": "/py/old", "new": "/py/new"}
