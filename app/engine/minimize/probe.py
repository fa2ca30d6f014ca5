"""What the compared values were when a check failed: finite or not, read at run time.

The fingerprint (`dataflow`, `checks`) is static: it proves each side still computes its
operations, not that the values go wrong the same way. Shrinking sizes invites one drift it
cannot see: `(x - x.mean()) / x.var().sqrt()` on a one-element `x` is NaN (an unbiased variance
of one value), so a LayerNorm parity check that failed by a few percent now fails because one
side is NaN. A person would not call that the same bug.

So every run the minimizer judges is the program with a probe in front (`probed`), on its
first line (line numbers stay the same): an exception hook that, when the program dies at one
of its checks (`checks.check_operands`: `assert`, `assert_close(...)`, `if ...: raise`),
evaluates that check's operands in the failing frame and prints, before the traceback,

    [scrub-check] finite,nonfinite

one word per operand (`none` for None). A one-sided check is looked through: for
`assert torch.isfinite(p.grad).all()` the value is `p.grad`. It only runs after the program has already failed, never changes how it
fails, and says nothing when anything goes wrong (`read_probe` then returns None: unknown).
"""

from __future__ import annotations

import ast
import re

from app.engine.minimize.checks import CHECK_OPERATIONS, statement_operands
from app.engine.minimize.dataflow import operation_key
from app.engine.minimize.parsing import parse

MARK = "[scrub-check]"
_LINE = re.compile(r"^\[scrub-check\] ([a-z,]+)$", re.MULTILINE)
_TRACEBACK = "Traceback (most recent call last):"

# Runs in the program's process. `_T`: line -> the operands' source text; `_F`: the program's
# file name, as its frames report it (the probe is exec'd from the program's first line).
_HOOK = """
import sys as _s
_F = _s._getframe(1).f_code.co_filename
_T = %r
_h = _s.excepthook
def _scrub_check(kind, error, tb, _h=_h, _T=_T, _F=_F, _s=_s):
    try:
        at, frame = None, tb
        while frame is not None:
            if frame.tb_frame.f_code.co_filename == _F:
                at = frame
            frame = frame.tb_next
        if at is not None and at.tb_lineno in _T:
            words = []
            for text in _T[at.tb_lineno]:
                value = eval(text, at.tb_frame.f_globals, at.tb_frame.f_locals)
                finite = getattr(value, "isfinite", None)
                if value is None:
                    words.append("none")
                    continue
                if callable(finite):
                    ok = bool(finite().all())
                elif isinstance(value, (int, float, complex)):
                    ok = value == value and abs(value) != float("inf")
                else:
                    ok = True
                words.append("finite" if ok else "nonfinite")
            _s.stderr.write("%s " + ",".join(words) + "\\n")
            _s.stderr.flush()
    except BaseException:
        pass
    _h(kind, error, tb)
_s.excepthook = _scrub_check
"""


def check_table(tree: ast.Module) -> dict[int, list[str]]:
    """Every line of every check in the program -> its operands' source text."""
    table: dict[int, list[str]] = {}
    for node in ast.walk(tree):  # one walk: a candidate of any size is probed in linear time
        operands, spans = statement_operands(node), [node]
        if isinstance(node, ast.If):
            raises = [s for s in node.body if isinstance(s, ast.Raise)]
            operands, spans = (statement_operands(node), raises) if raises else (None, [])
        if operands:
            texts = [ast.unparse(_inspected(operand)) for operand in operands]
            for span in spans:
                for line in range(span.lineno, (span.end_lineno or span.lineno) + 1):
                    table.setdefault(line, texts)
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
    """`source` with the probe on its first line (after a `__future__` import if it starts with
    one); the same program, line for line. Unchanged if it has no check, or does not parse."""
    try:
        tree = parse(source)
    except SyntaxError:
        return source
    table = check_table(tree)
    if not table:
        return source
    install = f"exec({_HOOK % (table, MARK)!r}); "
    lines = source.splitlines(keepends=True)
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.ImportFrom) and first.module == "__future__":
        row = (first.end_lineno or first.lineno) - 1
        lines[row] = lines[row].rstrip("\n") + "; " + install.rstrip("; ") + "\n"
        futures = [node for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "__future__"]
        if len(futures) > 1:
            return source  # a second future import after the probe would not compile
        return "".join(lines)
    if not lines:
        return source
    return install + "".join(lines)


def unprobed(text: str) -> str:
    """The program `probed` was given (for fakes that look a run up by its source)."""
    try:
        tree = parse(text)
    except SyntaxError:
        return text
    for node in tree.body[:2]:
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and node.lineno == 1
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "exec" and node.value.args
                and isinstance(node.value.args[0], ast.Constant)
                and str(node.value.args[0].value).startswith(_HOOK.split("%r")[0])):
            line, _, rest = text.partition("\n")
            head, tail = line[:node.col_offset], line[node.end_col_offset:]
            line = head.removesuffix("; ") + tail.removeprefix("; ") if head else tail.removeprefix("; ")
            return line + ("\n" + rest if _ or rest else "")
    return text


def read_probe(text: str) -> tuple[str, ...] | None:
    """The words the probe printed for the last failure in `text`, or None if it printed none."""
    end = text.rfind(_TRACEBACK)
    found = _LINE.findall(text[:end] if end >= 0 else text)
    return tuple(found[-1].split(",")) if found else None
