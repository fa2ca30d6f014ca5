"""What the compared values were when a check failed: finite or not, read at run time.

The fingerprint (`dataflow`, `checks`) is static: it proves each side still computes its
operations, not that the values go wrong the same way. Shrinking sizes invites one drift it
cannot see: `(x - x.mean()) / x.var().sqrt()` on a one-element `x` is NaN (an unbiased variance
of one value), so a LayerNorm parity check that failed by a few percent now fails because one
side is NaN. A person would not call that the same bug.

So every run the minimizer judges is the program with a probe (`probed`), added to the line
of its last leading import (line numbers stay the same, and the imports stay first): an
exception hook that, when the program dies at one of its checks (`checks.check_operands`: `assert`, `assert_close(...)`, `if ...: raise`),
evaluates that check's operands in the failing frame and prints, before the traceback,

    [scrub-check] finite,nonfinite

one word per operand (`none` for None, `zero` for a finite value that is all zeros: a side that
now returns a zero bias, or `x - x`, compares nothing of the original's computation). A one-sided check is looked through: for
`assert torch.isfinite(p.grad).all()` the value is `p.grad`. It only runs after the program has already failed, never changes how it
fails, and says nothing when anything goes wrong (`read_probe` then returns None: unknown).
"""

from __future__ import annotations

import ast
import re

from app.engine.minimize.checks import CHECK_OPERATIONS, statement_operands
from app.engine.minimize.coverage import EVENT_CAP, TRACER, conditionals
from app.engine.minimize.coverage import MARK as DEAD
from app.engine.minimize.dataflow import operation_key
from app.engine.minimize.parsing import parse

MARK = "[scrub-check]"
_LINE = re.compile(r"^\[scrub-check\] ([a-z,]+)$", re.MULTILINE)
_TRACEBACK = "Traceback (most recent call last):"

# Runs in the program's process. `_T`: line -> the operands' source text; `_F`: the program's
# file name, as its frames report it (the probe is exec'd from the program's first line).
_HOOK = """
import sys as _s, linecache as _l
_F = _s._getframe(1).f_code.co_filename
_T = %r
_h = _s.excepthook
def _scrub_check(kind, error, tb, _h=_h, _T=_T, _F=_F, _s=_s, _l=_l):
    try:
        at, frame = None, tb
        while frame is not None:
            if frame.tb_frame.f_code.co_filename == _F:
                at = frame
            frame = frame.tb_next
        line = _l.getline(_F, at.tb_lineno).strip() if at is not None else ""
        if line in _T:
            words = []
            for text in _T[line]:
                value = eval(text, at.tb_frame.f_globals, at.tb_frame.f_locals)
                finite = getattr(value, "isfinite", None)
                if value is None:
                    words.append("none")
                    continue
                zero = False
                if callable(finite):
                    ok = bool(finite().all())
                    zero = ok and callable(getattr(value, "any", None)) and not bool(value.any())
                elif isinstance(value, (int, float, complex)):
                    ok = value == value and abs(value) != float("inf")
                    zero = ok and value == 0
                else:
                    ok = True
                words.append("zero" if zero else "finite" if ok else "nonfinite")
            _s.stderr.write("%s " + ",".join(words) + "\\n")
            dead = _scrub_dead()
            if dead:
                _s.stderr.write("%s " + dead + "\\n")
            _s.stderr.flush()
    except BaseException:
        pass
    _h(kind, error, tb)
_s.excepthook = _scrub_check
"""

def check_table(tree: ast.Module, source: str) -> dict[str, list[str]]:
    """Every line of every check in the program (its text, stripped) -> its operands' source.

    Keyed by text, not number: a caller may still insert lines before the program's own (the
    fuzz job puts a device statement after the imports) and the probe must find its checks.
    """
    lines = source.splitlines()
    table: dict[str, list[str]] = {}
    for node in ast.walk(tree):  # one walk: a candidate of any size is probed in linear time
        operands, spans = statement_operands(node), [node]
        if isinstance(node, ast.If):
            raises = [s for s in node.body if isinstance(s, ast.Raise)]
            operands, spans = (statement_operands(node), raises) if raises else (None, [])
        if operands:
            texts = [ast.unparse(_inspected(operand)) for operand in operands]
            for span in spans:
                for line in range(span.lineno, (span.end_lineno or span.lineno) + 1):
                    if 0 < line <= len(lines) and lines[line - 1].strip():
                        table.setdefault(lines[line - 1].strip(), texts)
    return table


def _inspected(operand: ast.expr) -> ast.expr:
    """What a one-sided check tests: `torch.isfinite(p.grad).all()` -> `p.grad` (through the
    check's own calls, `checks.CHECK_OPERATIONS`, and `not`)."""
    while True:
        if isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not):
            operand = operand.operand
        elif isinstance(operand, ast.Call) and isinstance(operand.func, (ast.Attribute, ast.Name)) and operation_key(
                operand.func.attr if isinstance(operand.func, ast.Attribute) else operand.func.id) in CHECK_OPERATIONS:
            if operand.args:
                operand = operand.args[0]
            elif isinstance(operand.func, ast.Attribute):
                operand = operand.func.value
            else:
                return operand
        else:
            return operand


def probed(source: str) -> str:
    """`source` with the probe installed, line for line the same program: appended to its
    leading docstring and imports (`import torch; exec(...)`), so whatever is put after the
    imports still comes after them, or in front of its first line if it has none. Unchanged if
    it has no check, or does not parse."""
    try:
        tree = parse(source)
    except SyntaxError:
        return source
    table = check_table(tree, source)
    if not table or not tree.body:
        return source
    hook = _HOOK % (table, MARK, DEAD) + TRACER % (conditionals(tree), EVENT_CAP, EVENT_CAP)
    install = f"exec({hook!r})"
    lines = source.splitlines(keepends=True)
    leading = None
    for position, node in enumerate(tree.body):
        docstring = position == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if not (docstring or isinstance(node, (ast.Import, ast.ImportFrom))):
            break
        leading = node
    if leading is None:
        return install + "; " + "".join(lines)
    row, column = (leading.end_lineno or leading.lineno) - 1, leading.end_col_offset or 0
    text = lines[row]
    lines[row] = text[:column] + "; " + install + text[column:]
    return "".join(lines)


def unprobed(text: str) -> str:
    """The program `probed` was given (for fakes that look a run up by its source)."""
    try:
        tree = parse(text)
    except SyntaxError:
        return text
    hook = _HOOK.split("%r")[0]
    for node in tree.body:
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "exec" and node.value.args and isinstance(node.value.args[0], ast.Constant)
                and str(node.value.args[0].value).startswith(hook)):
            lines = text.splitlines(keepends=True)
            line = lines[node.lineno - 1]
            before, after = line[:node.col_offset], line[node.end_col_offset or 0:]
            lines[node.lineno - 1] = before.removesuffix("; ") + after if before else after.removeprefix("; ")
            return "".join(lines)
    return text


def read_probe(text: str) -> tuple[str, ...] | None:
    """The words the probe printed for the last failure in `text`, or None if it printed none."""
    end = text.rfind(_TRACEBACK)
    found = _LINE.findall(text[:end] if end >= 0 else text)
    return tuple(found[-1].split(",")) if found else None
