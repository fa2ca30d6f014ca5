"""`Repro`: one runnable block of a thread, with where it came from."""

from __future__ import annotations

from app.engine.issue.repro import Repro


def test_the_first_line_is_the_first_line_of_code_after_the_imports():
    repro = Repro("import torch\n\nx = torch.ones(2)\nprint(x)\n", "op", "u", "t", True)
    assert repro.first_line == "x = torch.ones(2)"


def test_the_stored_shape_adds_only_the_newer_fields_that_are_set():
    plain = Repro("x = 1\n", "op", "u", "t", True)
    assert set(plain.to_dict()) == {"source", "author", "url", "created_at", "by_original_poster", "self_contained", "lines"}
    placed = Repro("x = 1\n", "op", "u", "t", True, where="comment 2", line=4, trusted=True, why="w", kind="repl")
    assert Repro.from_dict(placed.to_dict()) == placed and placed.to_dict()["where"] == "comment 2"
