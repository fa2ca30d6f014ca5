"""Which names a pasted snippet reads without defining them."""

from __future__ import annotations

from app.engine.issue.python_names import parse_python, undefined_names


def test_parse_python_returns_the_tree_or_none_for_text_that_is_not_python():
    tree = parse_python("x = 1\nprint(x)")
    assert tree is not None and len(tree.body) == 2
    assert parse_python("Traceback (most recent call last):\n  File") is None
    assert parse_python("x = 1\0") is None  # a NUL byte is a ValueError, not a SyntaxError


def test_names_read_but_never_bound_are_reported_sorted():
    assert undefined_names("out = model(x)\nprint(out, y)") == ["model", "x", "y"]


def test_every_way_of_binding_a_name_counts_as_defined():
    source = "\n".join([
        "import torch.nn as nn, numpy",
        "from os import path as p",
        "def f(a, *args, k=1, **kw):",
        "    global g",
        "    return a, args, k, kw, g",
        "class C: pass",
        "try:\n    pass\nexcept Exception as e:\n    print(e)",
        "match 1:\n    case [first, *rest]:\n        print(first, rest)\n    case other:\n        print(other)",
        "for i in range(2): print(i, nn, numpy, p, f, C, __file__)",
    ])
    assert undefined_names(source) == []


def test_a_star_import_could_define_anything():
    assert undefined_names("from torch import *\nx = ones(2)") == []
    assert undefined_names("x = ones(2)") == ["ones"]


def test_code_that_does_not_parse_has_no_undefined_names():
    assert undefined_names("Run the code: it fails.") == []
