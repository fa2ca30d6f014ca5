"""No stage that may run on a repro worker reads GitHub: the trust split, checked on the code.

A repro worker's `ctx.github` is a `RepoAccess` (`workers/repro.py`): a clone URL of the run's
repository, nothing else. Tests that run pipelines on an in-memory context with a full fake
GitHub cannot see a repro stage that reads GitHub; this scan can. For every kind, every stage
whose queue rule is not the default queue's is a root (a `Routed` stage whose work is the
default queue's is not: its work never runs elsewhere, `app.pipelines.kit.routed`); from each
root, the functions and classes of `app` it names are followed (calls, references, closures;
a class means all its methods), and every `<x>.github` in them must be
`<x>.github.clone_url(...)` or a test for None. The scan is static: a GitHub port reached
through an object whose type it cannot see is missed, but the way the culprit search read
GitHub on repro workers (`ctx.github.compare_commits`, `builds.source_commit(github, ...)`,
`hasattr(github, ...)`) is found.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from dataclasses import fields

from app.pipelines import registry
from app.pipelines.base import DEFAULT_QUEUE, Stage, StageResult
from app.pipelines.kit.routed import Routed, on_default
from app.pipelines.state import PlainState

DEFAULT_RULE = next(f.default for f in fields(Stage) if f.name == "queue")
ALLOWED = "clone_url"


def trusted_rule(rule) -> bool:
    """A queue rule that always answers the default queue."""
    if rule is DEFAULT_RULE or rule is on_default:
        return True
    cells = dict(zip(getattr(rule, "__code__", types.SimpleNamespace(co_freevars=())).co_freevars,
                     [c.cell_contents for c in getattr(rule, "__closure__", None) or ()]))
    return rule.__qualname__.startswith("on_queue.") and cells.get("queue") == DEFAULT_QUEUE


def roots(stage: Stage) -> list:
    routed = getattr(stage.run, "__self__", None)
    if isinstance(routed, Routed):
        return [] if routed.trusted else [routed.work]
    return [] if trusted_rule(stage.queue) else [stage.run]


def _ours(obj, home: str) -> bool:
    module = getattr(obj, "__module__", "") or ""
    return (module.startswith("app.") and not module.startswith("app.github.")) or module == home


def _unwrap(obj):
    if isinstance(obj, types.MethodType):
        return obj.__func__
    return getattr(obj, "func", obj) if type(obj).__name__ == "partial" else obj


def _resolve(node: ast.AST, scope: dict):
    """What a `Name` or `a.b.c` refers to in `scope`, or None."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        if isinstance(base, (types.ModuleType, type)):
            return getattr(base, node.attr, None)
    return None


def _allowed(node: ast.Attribute, parents: dict) -> bool:
    parent = parents.get(node)
    if isinstance(parent, ast.Attribute) and parent.attr == ALLOWED:
        return isinstance(parents.get(parent), ast.Call)
    if isinstance(parent, ast.Compare):  # `ctx.github is None`
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops)
    return isinstance(parent, (ast.If, ast.IfExp, ast.BoolOp, ast.UnaryOp))  # truthiness only


def github_reads(functions: list) -> list[str]:
    """`file:line: <source>` of every GitHub use beyond a clone URL reachable from `functions`."""
    found, seen, todo = [], set(), [(_unwrap(f), getattr(f, "__module__", "")) for f in functions]
    while todo:
        obj, home = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, type):
            todo += [(_unwrap(v), home) for v in vars(obj).values() if inspect.isfunction(_unwrap(v))]
            continue
        if not inspect.isfunction(obj):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(obj))
        except (OSError, TypeError):
            continue
        tree = ast.parse(source)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        closure = inspect.getclosurevars(obj)
        scope = {**vars(__import__("builtins")), **obj.__globals__, **closure.nonlocals}
        file, first = inspect.getsourcefile(obj), obj.__code__.co_firstlineno
        if "." in obj.__qualname__ and "<locals>" not in obj.__qualname__:  # a method: its class too
            todo.append((obj.__globals__.get(obj.__qualname__.split(".")[0]), home))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "github" and not _allowed(node, parents):
                line = first + node.lineno - 1
                found.append(f"{file}:{line} ({obj.__qualname__}): {ast.unparse(parents.get(node, node))[:120]}")
            target = _resolve(node, scope) if isinstance(node, (ast.Name, ast.Attribute)) else None
            target = _unwrap(target) if target is not None else None
            if target is not None and (inspect.isfunction(target) or isinstance(target, type)) and _ours(target, home):
                todo.append((target, home))
    return sorted(set(found))


def test_no_kind_s_repro_stages_read_github():
    reads = {}
    for kind in registry.kinds():
        for stage in kind.stages:
            if found := github_reads(roots(stage)):
                reads[f"{kind.name}.{stage.name}"] = found
    assert reads == {}, "stages that may run on a repro worker read GitHub (move the read to a stage on the " \
                        f"default queue): {reads}"


# -- the scan itself: it finds what it is for, and leaves what a repro stage may do -------------------

def _helper_reads(ctx):
    github = ctx.github  # the culprit search's old way: the port handed on
    return github.compare_commits("o/r", "a", "b")


class _Searcher:
    def __init__(self, ctx):
        self.ctx = ctx

    def run(self):
        return self.pulls()

    def pulls(self):
        return self.ctx.github.commit_pulls("o/r", "a")


def _through_helper(ctx, state):
    return _helper_reads(ctx)


def _through_class(ctx, state):
    return _Searcher(ctx).run()


def _probing(ctx, state):
    return hasattr(ctx.github, "compare_commits")


def _cloning(ctx, state):
    if ctx.github is None or not ctx.github:
        return StageResult()
    return StageResult(summary=ctx.github.clone_url("o/r"))


def _reading(ctx, state):
    return ctx.github.get_issue("o/r", 1)


def test_the_scan_finds_reads_through_helpers_classes_and_hasattr_and_leaves_clone_urls():
    repro = lambda state: "repro-cpu"
    assert github_reads(roots(Stage("a", _through_helper, queue=repro))) != []
    assert any("commit_pulls" in line for line in github_reads(roots(Stage("b", _through_class, queue=repro))))
    assert github_reads(roots(Stage("c", _probing, queue=repro))) != []
    assert github_reads(roots(Stage("d", _cloning, queue=repro))) == []
    # The default queue's stages may read it, a Routed stage's trusted work too, not a repro one's.
    assert roots(Stage("e", _reading)) == []
    assert roots(Routed(lambda s: True, _reading, on_default, repro).stage("f", PlainState)) == []
    assert github_reads(roots(Routed(lambda s: True, _reading, repro, repro).stage("g", PlainState))) != []
