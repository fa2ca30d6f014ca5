"""Which side of each conditional ran: the fingerprint counts only code the failing run executed.

The fingerprint (`dataflow`) is static and flow-insensitive: a side of a check that reads
`y if bias is None else normalised(y)` depends on the normalisation whether or not that branch
ever ran. The minimizer can then keep a program whose live branch returns something else (a
zero bias) while the dead one keeps the bug's operations in the fingerprint: the "kept
operations" rule is fooled, and the result is bigger and arguably another bug.

So the probe (`probe.probed`) also traces the program's own file while it runs (`sys.settrace`
for the program's frames only, one event per instruction: `f_trace_opcodes`), and when the
program dies it prints, before the traceback, the conditionals (`x if c else y`, `if c:`)
whose test ran but one side never did:

    [scrub-dead] 34:15:body,40:8:orelse

(the conditional's line and column, and the side that never ran). `read_dead` reads it back and
`prune` removes those sides from a tree before the fingerprint is computed, so the original and
every candidate are judged on what their failing runs executed.

Sound only where the trace sees everything that ran, so it says nothing (no line: nothing is
pruned) when the program compiles (`torch.compile`, TorchScript, `torch.export`: their code
does not run as traced Python lines), sets its own tracer, or runs more than `EVENT_CAP`
instructions of its own (a bounded cost per candidate: counted, never timed). A side is only
called dead when its conditional's test ran in the traced process and, for an `if` with an
`else`, the other side ran: a side that ran elsewhere (a worker process) leaves its test unseen
there too. A thread's frames are traced as well (`threading.settrace`).
"""

from __future__ import annotations

import ast
import re

MARK = "[scrub-dead]"
EVENT_CAP = 200_000  # instructions of the program's own file traced per run, then no report
_LINE = re.compile(r"^\[scrub-dead\] ([0-9a-z:,]*)$", re.MULTILINE)
_TRACEBACK = "Traceback (most recent call last):"
# Programs whose code may run other than as traced Python lines, or that trace themselves.
_UNTRACEABLE = frozenset({"compile", "jit", "script", "export", "_dynamo", "dynamo", "inductor", "settrace",
                          "setprofile", "monitoring", "symbolic_trace", "vmap", "functional_call", "cuda_graph"})

Span = tuple[int, int, int, int]  # first line, first column, last line, end column

# Runs in the program's process (inside `probe._HOOK`): `_C` is the table of conditionals,
# `(line, column) -> (test, body, orelse, has_else)` spans; `_F` the program's file name.
TRACER = """
_C = %r
_seen = {}
_n = [0]
def _scrub_trace(frame, event, arg, _seen=_seen, _n=_n, _F=_F):
    try:
        if frame.f_code.co_filename != _F:
            return None
        if _n[0] > %d:
            frame.f_trace_opcodes = False
            return None
        if event == "call":
            frame.f_trace_opcodes = True
        elif event == "opcode":
            _n[0] += 1
            _seen.setdefault(frame.f_code, set()).add(frame.f_lasti)
    except BaseException:
        pass
    return _scrub_trace
def _scrub_dead(_seen=_seen, _n=_n, _C=_C, _s=_s):
    if _s.gettrace() is not _scrub_trace or _n[0] > %d:
        return None
    ran = []
    for code, offsets in _seen.items():
        positions = list(code.co_positions())
        for offset in offsets:
            p = positions[offset // 2] if offset // 2 < len(positions) else None
            if p and None not in p:
                ran.append((p[0], p[2], p[1], p[3]))
    def _in(span):
        return any((span[0], span[1]) <= (a, b) and (c, d) <= (span[2], span[3]) for a, b, c, d in ran)
    dead = []
    for (line, column), (test, body, orelse, has_else) in _C.items():
        if not _in(test):
            continue
        body_ran, orelse_ran = _in(body), has_else and _in(orelse)
        if not body_ran and (orelse_ran or not has_else):
            dead.append("%%d:%%d:body" %% (line, column))
        elif has_else and body_ran and not orelse_ran:
            dead.append("%%d:%%d:orelse" %% (line, column))
    return ",".join(dead)
if _C:
    import threading as _th
    _th.settrace(_scrub_trace)
    _s.settrace(_scrub_trace)
    _m = _s._getframe(1)
    if _m.f_code.co_filename == _F:
        _m.f_trace, _m.f_trace_opcodes = _scrub_trace, True
"""


def traceable(tree: ast.Module) -> bool:
    """May the probe trust a trace of this program (see the module's docstring)?"""
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name is None and isinstance(node, ast.alias):
            name = node.name.rsplit(".", 1)[-1]
        if name in _UNTRACEABLE:
            return False
    return True


def conditionals(tree: ast.Module) -> dict[tuple[int, int], tuple[Span, Span, Span, bool]]:
    """Every `x if c else y` and `if c:` of the program: where its test, body and else are."""
    table: dict[tuple[int, int], tuple[Span, Span, Span, bool]] = {}
    if not traceable(tree):
        return table
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp):
            table[(node.lineno, node.col_offset)] = (_span(node.test), _span(node.body), _span(node.orelse), True)
        elif isinstance(node, ast.If):
            orelse = _block(node.orelse) if node.orelse else (0, 0, 0, 0)
            table[(node.lineno, node.col_offset)] = (_span(node.test), _block(node.body), orelse, bool(node.orelse))
    return table


def _span(node: ast.AST) -> Span:
    return (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _block(body: list[ast.stmt]) -> Span:
    return (*_span(body[0])[:2], *_span(body[-1])[2:])  # type: ignore[return-value]


def read_dead(text: str) -> frozenset[tuple[int, int, str]]:
    """The sides the probe saw never run in the last failure of `text` (empty: none, or unknown)."""
    end = text.rfind(_TRACEBACK)
    found = _LINE.findall(text[:end] if end >= 0 else text)
    dead: set[tuple[int, int, str]] = set()
    for item in found[-1].split(",") if found and found[-1] else ():
        line, column, side = item.split(":")
        if side in ("body", "orelse"):
            dead.add((int(line), int(column), side))
    return frozenset(dead)


class _Prune(ast.NodeTransformer):
    def __init__(self, dead: frozenset[tuple[int, int, str]]) -> None:
        self.dead = dead

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        if (node.lineno, node.col_offset, "body") in self.dead:
            return node.orelse
        if (node.lineno, node.col_offset, "orelse") in self.dead:
            return node.body
        return node

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if (node.lineno, node.col_offset, "body") in self.dead:
            node.body = [ast.copy_location(ast.Pass(), node.body[0])]
        if (node.lineno, node.col_offset, "orelse") in self.dead:
            node.orelse = []
        return node


def prune(tree: ast.Module, dead: frozenset[tuple[int, int, str]]) -> ast.Module:
    """`tree` (changed in place) without the sides that never ran; every other node keeps its
    position, so a check is still found at its line."""
    return _Prune(dead).visit(tree) if dead else tree
