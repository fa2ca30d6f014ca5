"""What a failing check tests: the computation each operand depends on, found statically.

A failure message says little about the bug; the computation feeding the check is the bug.
`assert torch.allclose(fused(x), reference(x))` reduces to
`assert torch.allclose(torch.randn([]), torch.ones(1))` with the same class, message and check,
yet the buggy computation is gone: drift. So the oracle also requires
(`FailureSignature.tests_the_same_computation`) that each operand keeps some of its own
operations. An operation is a call of a library function that neither makes nor converts data
(`var`, `layer_norm`, `exp`; not `randn`, `ones`, `to`), or of an instance of a library class
(`nn.LayerNorm(d)(x)`; constructing it computes nothing), keyed case- and underscore-
insensitively so `nn.LayerNorm` and `F.layer_norm` are the same operation.

Why per operand: "some operation survives somewhere" accepts `allclose(x.exp(), ones(1))` for a
softmax bug; "both sides share an operation" rejects the hand-written minimum
`allclose((x - x.mean()) / x.var().sqrt(), F.layer_norm(x, [4]))`. Tolerances are not operands.
Besides operations, the flow records data-path steps (`checks`): computed subscripts, narrowing
casts; `w.grad` flows from every `loss.backward()`.

The analysis is a static over-approximation, cheap and deterministic:

- data flows through assignments by name, resolved by lexical scope but flow-insensitively
  (every binding of `x` in its scope feeds every use of it); `self.attr` by attribute name;
- calling a function defined in the program brings in what it returns, and the arguments of
  its call sites flow into its parameters; calling an instance of a class defined in the
  program brings in what its methods return (constructing one brings in nothing);
- operators (`+`, `/`) are not operations: `torch.randn(2) - 1` tests nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from app.engine.minimize.bindings import argument, bindings, callee_name, returned
from app.engine.minimize.checks import (
    CAST_PREFIX,
    INDEX,
    NEUTRAL_BUILTINS,
    NEUTRAL_CALLS,
    OPERATORS,
    PATH_OPERATIONS,
    Pair,
    cast_of,
    check_operands,
    hand_written_pairs,
    is_computed_index,
    operator_operation,
)
from app.engine.minimize.coverage import prune
from app.engine.minimize.parsing import parse

Operations = tuple[frozenset[str], ...]  # one set per compared operand, in order

def assert_operations(source: str, line: int) -> Operations | None:
    """For each operand of the check failing at `line` (None: no check there), its operations."""
    flow = check_dataflow(source, line)
    return None if flow is None else flow.operations


@dataclass(frozen=True)
class CheckFlow:
    """What a failing check compares: each operand's operations, and the data-path steps
    (masks, indexing, casts: `checks.PATH_OPERATIONS`, `INDEX`, `cast:*`) feeding any operand."""

    operations: Operations
    path: frozenset[str]
    # (mask or cast, the operation that consumes its result): `masked_fill` -> `softmax`
    consumers: frozenset[tuple[str, str]] = frozenset()
    # (library operation, the primitives a hand-written version of it used): `checks.hand_written_pairs`
    pairs: frozenset[Pair] = frozenset()


def check_dataflow(source: str, line: int, dead: frozenset[tuple[int, int, str]] = frozenset()) -> CheckFlow | None:
    """`dead`: the sides of conditionals the failing run never executed (`coverage.read_dead`),
    left out: only what ran computes the compared values."""
    try:
        tree = prune(parse(source), dead)
    except SyntaxError:
        return None
    operands = check_operands(tree, line)
    if operands is None:
        return None
    flow = _Flow(tree)
    traced = [flow.operations(operand) for operand in operands]
    steps = frozenset().union(*traced)
    path = frozenset(op for op in steps if op in PATH_OPERATIONS or op == INDEX or op.startswith(CAST_PREFIX))
    operations = tuple(frozenset(op for op in ops if op != INDEX and not op.startswith(CAST_PREFIX))
                       for ops in traced)
    return CheckFlow(operations, path, flow.consumers(path), hand_written_pairs(operations))


def called_operations(tree: ast.Module, nodes: list[ast.AST]) -> frozenset[str]:
    """What `nodes` (parts of `tree`) call themselves: see `_Flow.called`."""
    flow = _Flow(tree)
    return frozenset().union(*(flow.called(node) for node in nodes))


def operation_key(name: str) -> str:
    """`LayerNorm`, `layer_norm` -> `layernorm`: the module and functional forms of one op."""
    return name.replace("_", "").lower()


Key = tuple[int, str]  # (id of the scope binding it, name)


class _Flow:
    """Bindings, definitions' results and call sites of one program, resolved by lexical scope.

    A scope is the module or a function (Python's rule; class bodies are not scopes for the
    methods in them). A name resolves to the innermost enclosing scope binding it, so two
    functions both called `forward` stay apart.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.scope_of: dict[int, ast.AST] = {}  # node -> innermost enclosing scope
        self.parent: dict[int, ast.AST] = {}  # scope -> enclosing scope
        self.bindings: dict[Key, list[ast.AST]] = {}  # name -> expressions binding it
        self.results: dict[Key, list[ast.AST]] = {}  # function -> what calling it yields
        self.classes: dict[Key, list[ast.AST]] = {}  # class -> what calling an instance yields
        self.parameters: dict[Key, list[tuple[Key, int | None]]] = {}  # -> (callable, position)
        self.attributes: dict[str, list[ast.AST]] = {}  # `self.x = ...`, methods' results, by name
        self.calls: dict[Key, list[ast.Call]] = {}  # callable -> its call sites
        named_calls: list[ast.Call] = []
        self.tree = tree
        self.parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self.loads: dict[str, list[ast.Name]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.loads.setdefault(node.id, []).append(node)
        self._index(tree, tree, named_calls)
        for call in named_calls:
            key = self._resolve(call, call.func.id)  # type: ignore[attr-defined]
            if key is not None:
                self.calls.setdefault(key, []).append(call)

    def _index(self, node: ast.AST, scope: ast.AST, named_calls: list[ast.Call], in_class: bool = False) -> None:
        self.scope_of[id(node)] = scope
        inner = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = node
            self.parent[id(node)] = scope
            if not isinstance(node, ast.Lambda) and not in_class:  # methods: see ClassDef
                self._add(self.results, (id(scope), node.name), returned(node))
                self._parameters((id(scope), node.name), node)
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._add(self.classes, (id(scope), node.name), returned(method))
                    self.attributes.setdefault(method.name, []).extend(returned(method))
                    if method.name == "__init__":  # `Model(a)` -> `__init__(self, a)`
                        self._parameters((id(scope), node.name), method, skip=1)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            named_calls.append(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
            self.attributes.setdefault("grad", []).append(node.func.value)  # `w.grad` <- `loss.backward()`
        for target, value in bindings(node):
            for bound in ast.walk(target):
                if isinstance(bound, ast.Name) and isinstance(bound.ctx, ast.Store):
                    self._add(self.bindings, (id(scope), bound.id), [value])
                elif isinstance(bound, ast.Attribute) and isinstance(bound.ctx, ast.Store):
                    self.attributes.setdefault(bound.attr, []).append(value)
        for child in ast.iter_child_nodes(node):
            self._index(child, inner, named_calls, in_class=isinstance(node, ast.ClassDef))

    @staticmethod
    def _add(table: dict[Key, list[ast.AST]], key: Key, values) -> None:
        table.setdefault(key, []).extend(values)

    def _parameters(self, callable_key: Key, function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                    skip: int = 0) -> None:
        args = function.args
        for position, arg in enumerate([*args.posonlyargs, *args.args][skip:]):
            self.parameters.setdefault((id(function), arg.arg), []).append((callable_key, position))
        for arg in [*args.kwonlyargs, *filter(None, [args.vararg, args.kwarg])]:
            self.parameters.setdefault((id(function), arg.arg), []).append((callable_key, None))

    def _resolve(self, node: ast.AST, name: str) -> Key | None:
        """The (scope, name) `name` refers to where `node` is, if the program binds it."""
        scope: ast.AST | None = self.scope_of[id(node)]
        while scope is not None:
            key = (id(scope), name)
            if key in self.bindings or key in self.results or key in self.classes or key in self.parameters:
                return key
            scope = self.parent.get(id(scope))
        return None

    def operations(self, root: ast.expr) -> frozenset[str]:
        found: set[str] = set()
        seen: set[int] = set()
        pending: list[ast.AST] = [root]
        while pending:
            node = pending.pop()
            if id(node) not in seen:
                seen.add(id(node))
                for sub in self._walk(node):
                    pending.extend(self._feeding(sub, found))
        return frozenset(found)

    def consumers(self, path: frozenset[str]) -> frozenset[tuple[str, str]]:
        """For each mask or cast in `path`, the operations that take its result: the nearest
        enclosing operation of the call, or of each read of the name it is assigned to."""
        pairs: set[tuple[str, str]] = set()
        for call in (node for node in ast.walk(self.tree) if isinstance(node, ast.Call)):
            step = cast_of(call) or operation_key(self._library_call(call) or "")
            if step not in path or step == INDEX:
                continue
            readers: list[ast.AST] = [call]
            statement = self.parents.get(id(call))
            if isinstance(statement, ast.Assign) and statement.value is call:
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        key = self._resolve(target, target.id)
                        readers += [n for n in self.loads.get(target.id, ()) if self._resolve(n, n.id) == key]
            pairs.update((step, op) for reader in readers if (op := self._consumer(reader)) and op != step)
        return frozenset(pairs)

    def _consumer(self, node: ast.AST) -> str | None:
        parent = self.parents.get(id(node))
        while parent is not None and not isinstance(parent, ast.stmt):
            if isinstance(parent, ast.Call) and (name := self._library_call(parent)) and not name[0].isupper():
                return operation_key(name)
            parent = self.parents.get(id(parent))
        return None

    def _library_call(self, call: ast.Call) -> str | None:
        """The name of the library function `call` calls, unless it is neutral or the program's."""
        if isinstance(call.func, ast.Name):
            name = call.func.id
            own = name in NEUTRAL_BUILTINS or self._resolve(call, name) is not None
        elif isinstance(call.func, ast.Attribute):
            name = call.func.attr
            own = name in self.attributes  # a method or attribute of the program's own
        else:
            return None
        return None if own or name in NEUTRAL_CALLS else name

    def _assigned(self, name: ast.Name) -> Iterator[ast.AST]:
        """The values bound to `name` where it is read: assignments, arguments for a parameter."""
        key = self._resolve(name, name.id)
        if key is None:
            return
        yield from self.bindings.get(key, ())
        for callable_key, position in self.parameters.get(key, ()):
            for call in self.calls.get(callable_key, ()):  # the argument passed, not the call
                yield from argument(call, name.id, position)

    def _instances_called(self, call: ast.Call) -> Iterator[ast.Call]:
        """The constructions (`nn.LayerNorm(d)`, `Model()`) whose instance `call` calls.

        Constructing an object computes nothing; calling it (`self.norm(x)`, `model(x)`,
        `nn.LayerNorm(d)(x)`) runs what its class computes.
        """
        func = call.func
        if isinstance(func, ast.Name):
            values = list(self._assigned(func))
        elif isinstance(func, ast.Attribute):
            values = list(self.attributes.get(func.attr, []))
        else:
            values = [func]
        seen: set[int] = set()
        while values:
            value = values.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                   and value.func.attr in NEUTRAL_CALLS):  # `Model(d).to(dtype).eval()`
                value = value.func.value
            if isinstance(value, ast.Name):  # passed on: `train(model)` -> `model = Model()`
                values.extend(self._assigned(value))
            elif isinstance(value, (ast.Tuple, ast.List)):  # `for norm in (b.ln1, b.ln2)`
                values.extend(value.elts)
            elif isinstance(value, ast.Attribute):  # `block.ln1` -> `self.ln1 = LayerNorm(d)`
                values.extend(self.attributes.get(value.attr, []))
            elif isinstance(value, ast.Call) and callee_name(value.func, upper=True):
                yield value

    def _walk(self, node: ast.AST) -> Iterator[ast.AST]:
        """`ast.walk`, except into the arguments of a call of the program's own function or
        class: those reach the result only through its parameters (see `_feeding`)."""
        pending = [node]
        while pending:
            current = pending.pop()
            yield current
            if (isinstance(current, ast.Call) and isinstance(current.func, ast.Name)
                    and self._resolve(current, current.func.id) in self.results.keys() | self.classes.keys()):
                pending.append(current.func)
            else:
                pending.extend(ast.iter_child_nodes(current))

    def _feeding(self, node: ast.AST, found: set[str]) -> Iterator[ast.AST]:
        """What flows into `node`; records `node` in `found` if it is an operation."""
        if isinstance(node, ast.Call):
            name = self._library_call(node)
            if name is not None and not name[0].isupper():
                found.add(operation_key(name))
            elif (cast := cast_of(node)) is not None:
                found.add(cast)
            for construction in self._instances_called(node):
                key = self._resolve(construction, construction.func.id) \
                    if isinstance(construction.func, ast.Name) else None
                if key in self.classes:
                    yield from self.classes[key]
                else:
                    module = self._library_call(construction)
                    if module is not None and module[0].isupper():
                        found.add(operation_key(module))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            yield from self._assigned(node)
            yield from self.results.get(self._resolve(node, node.id), ())  # type: ignore[arg-type]
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            yield from self.attributes.get(node.attr, ())
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and is_computed_index(node):
            found.add(INDEX)
        elif (operator := operator_operation(node)) is not None:
            found.add(operator)

    def called(self, node: ast.AST) -> frozenset[str]:
        """The operations `node` itself calls, whatever their inputs: library functions and
        methods (`item` and `to` included), library classes whose instances it calls
        (`self.emb(x)` -> `embedding`), and operators (`a + b` -> `add`, `q @ k` -> `matmul`)."""
        found: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.BinOp):
                found.add(OPERATORS.get(type(sub.op), "operator"))
            elif (operator := operator_operation(sub)) is not None:
                found.add(operator)
            elif isinstance(sub, ast.Call):
                own = False
                for construction in self._instances_called(sub):
                    own = True
                    module = callee_name(construction.func, upper=True)
                    key = self._resolve(construction, construction.func.id) \
                        if isinstance(construction.func, ast.Name) else None
                    if module is not None and key not in self.classes:
                        found.add(operation_key(module))
                name = callee_name(sub.func)
                if not own and name is not None and self._library_call(sub) is not None or name in NEUTRAL_CALLS:
                    found.add(operation_key(name))
        return frozenset(found)

