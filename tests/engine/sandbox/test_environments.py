"""Environment mapping and interpreter probing (runs this interpreter once, no torch import)."""

from __future__ import annotations

import sys

import pytest

from app.engine.sandbox.environments import InterpreterError, minimal_cover, parse_environments, probe_interpreter


def test_parse_environments_string_dict_and_default():
    assert parse_environments("2.11=/e/a/bin/python, 2.13=/e/b/bin/python") == {
        "2.11": "/e/a/bin/python", "2.13": "/e/b/bin/python"}
    assert parse_environments({"x": "/p"}) == {"x": "/p"}
    assert parse_environments("", default_python="/usr/bin/python3") == {"local": "/usr/bin/python3"}
    with pytest.raises(InterpreterError):
        parse_environments("2.11")


def test_minimal_cover_drops_nested_and_system_dirs(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert minimal_cover([str(tmp_path / "a" / "b"), str(tmp_path / "a"), "/usr/lib"]) == (str(tmp_path / "a"),)


def test_probe_reports_versions_and_is_cached():
    info = probe_interpreter(sys.executable)
    assert info.python_version == ".".join(map(str, sys.version_info[:3]))
    assert probe_interpreter(sys.executable) is info
    with pytest.raises(InterpreterError):
        probe_interpreter("/nonexistent/python")
