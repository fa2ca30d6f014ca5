"""`parse`: `ast.parse` that is safe to call from the minimizer's threads.

CPython 3.11 (before 3.11.8, python/cpython#106905) keeps the depth counter of its C-to-Python
AST converter in per-interpreter state. If a thread switch happens inside one conversion (a
garbage collection that runs a `__del__` is enough) and another thread parses meanwhile, the
first parse fails with `SystemError: AST constructor recursion depth mismatch`. The minimizer
parses on its main thread while its pool threads judge candidates, and a whole minimization
died of it once in CI.

So every parse in the minimizer goes through one process-wide lock, and a parse that still
hits the error (a thread outside the minimizer parsing at the same moment, which the lock does
not cover) is retried: each conversion resets the counter when it starts, so a retry is clean.
"""

from __future__ import annotations

import ast
import os
import threading
from typing import Literal, overload

_RETRIES = 5
_MISMATCH = "recursion depth mismatch"

_lock = threading.RLock()


def _reset_lock_in_child() -> None:
    # A fork while another thread held the lock would leave the child's copy held forever.
    global _lock
    _lock = threading.RLock()


os.register_at_fork(after_in_child=_reset_lock_in_child)


@overload
def parse(source: str, mode: Literal["exec"] = "exec") -> ast.Module: ...
@overload
def parse(source: str, mode: Literal["eval"]) -> ast.Expression: ...
def parse(source: str, mode: str = "exec") -> ast.AST:
    """`ast.parse(source, mode=mode)`, serialized and retried on the 3.11 converter race.
    `SyntaxError` and every other error pass through unchanged."""
    for attempt in range(_RETRIES):
        try:
            with _lock:
                return ast.parse(source, mode=mode)
        except SystemError as error:
            if _MISMATCH not in str(error) or attempt == _RETRIES - 1:
                raise
    raise AssertionError("unreachable")
