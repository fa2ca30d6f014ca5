"""What a failing check compares, and what its message means: the pieces of a bug fingerprint.

A check is what stops a program on purpose when two computations disagree:

- `assert torch.allclose(custom(x), reference(x)), f"{bad}/{total} differ"`;
- a checking call on its own line: `torch.testing.assert_close(a, b)`,
  `np.testing.assert_allclose(a, b)`, `self.assertEqual(a, b)`;
- `if not torch.allclose(a, b): raise AssertionError(...)`.

`check_operands(tree, line)` finds the check a traceback stopped at and the operands it compares
(a comparison's sides, a check call's positional arguments; tolerances are keywords, not
operands). `value_meanings(message)` reduces what a failure message prints to what must not
change while minimizing: a mismatch count or a percentage stays non-zero (`37/512` may become
`3/4`, never `0/1`), a NaN or an infinity stays printed.

Operation classes used by the rules (`oracle.FailureSignature.keeps_the_bug`):

- CHECK_OPERATIONS evaluate the check itself (`isnan(...).any()`, `allclose`); every candidate
  has them, so they say nothing about which computation is tested;
- PATH_OPERATIONS steer data on its way to the failure: masks, indexing, gathers, dtype casts.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

# Calls that make or convert data: they carry no bug of their own.
NEUTRAL_CALLS = frozenset({
    "randn", "rand", "randint", "randperm", "ones", "zeros", "empty", "full", "tensor", "as_tensor",
    "from_numpy", "arange", "linspace", "logspace", "eye", "randn_like", "rand_like", "ones_like",
    "zeros_like", "empty_like", "full_like", "Generator", "manual_seed", "seed", "no_grad",
    "to", "float", "double", "half", "bfloat16", "int", "long", "bool", "cpu", "cuda", "clone",
    "detach", "contiguous", "requires_grad_", "item", "tolist", "numpy", "device", "dtype",
    "eval", "train",
})
# Python builtins, neutral only when called by their bare name (`x.sum()` is an operation).
NEUTRAL_BUILTINS = frozenset({
    "range", "len", "list", "tuple", "dict", "set", "zip", "enumerate", "print", "isinstance",
    "getattr", "super", "str", "repr", "format", "sorted", "reversed", "min", "max", "abs", "sum",
    "float", "int", "bool",
})
CHECK_OPERATIONS = frozenset({
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "any", "all", "allclose", "isclose",
    "equal", "eq", "ne", "lt", "le", "gt", "ge", "item", "numel", "size", "dim", "count_nonzero",
    "assertclose", "assertallclose", "assertequal", "asserttrue", "assertfalse", "assertlessequal",
})
# Calls that move data around or keep books: a side keeping only these computes nothing of the
# original (`allclose(x.reshape(4), sdpa(q, k, v))` lost the custom attention).
PLUMBING = frozenset({
    "reshape", "view", "viewas", "transpose", "permute", "expand", "expandas", "unsqueeze", "squeeze",
    "flatten", "unflatten", "chunk", "split", "cat", "concat", "stack", "contiguous", "repeat", "t",
    "narrow", "select", "parseargs", "addargument", "namedparameters", "parameters", "product",
    "items", "keys", "values", "append", "get", "perfcounter", "time", "zerograd", "step",
})
# Keyed like `dataflow.operation_key` (no underscores, lower case).
PATH_OPERATIONS = frozenset({
    "maskedfill", "where", "maskedselect", "maskedscatter", "indexselect", "gather", "scatter",
    "scatteradd", "scatterreduce", "take", "takealongdim", "indexadd", "indexput", "indexcopy",
    "indexfill", "nonzero", "tril", "triu",
})


OPERATORS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.MatMult: "matmul", ast.Div: "div",
              ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow"}


def operator_operation(node: ast.AST) -> str | None:
    """The operators that count as operations of a computation: `q @ k` is a matmul, `-x` (of
    something computed, not a literal) a negation, `a - b` of two computed values a
    subtraction. `+ * /` are everywhere and tell nothing."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return "matmul"
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)
            and not isinstance(node.left, ast.Constant) and not isinstance(node.right, ast.Constant)):
        return "sub"  # `x - x.mean()`: centring, what a LayerNorm by hand is made of
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        return "neg"
    return None


# A library operation and the primitives a hand-written version of it is made of (keys as
# `dataflow.operation_key`; module and functional forms are one key, `batchnorm2d` is `batchnorm`).
_NORM = frozenset({"mean", "var", "std", "varmean", "stdmean", "sqrt", "rsqrt", "pow", "square", "sum", "sub"})
DECOMPOSITIONS: dict[str, frozenset[str]] = {
    "layernorm": _NORM, "groupnorm": _NORM, "batchnorm": _NORM, "instancenorm": _NORM,
    "rmsnorm": frozenset({"pow", "square", "mean", "rsqrt", "sqrt", "norm", "sum"}),
    "normalize": frozenset({"norm", "sqrt", "pow", "sum", "clamp", "clampmin"}),
    "softmax": frozenset({"exp", "sum", "max", "amax", "logsumexp"}),
    "logsoftmax": frozenset({"exp", "sum", "max", "amax", "logsumexp", "log", "softmax"}),
    "logsumexp": frozenset({"exp", "sum", "log", "max", "amax"}),
    "crossentropy": frozenset({"logsoftmax", "log", "softmax", "nllloss", "gather", "exp", "logsumexp",
                               "neg", "onehot", "sum", "mean"}),
    "nllloss": frozenset({"gather", "neg", "mean", "sum"}),
    "mseloss": frozenset({"pow", "square", "mean", "sum"}),
    "scaleddotproductattention": frozenset({"softmax", "matmul", "bmm", "baddbmm", "einsum"}),
    "multiheadattention": frozenset({"softmax", "matmul", "bmm", "baddbmm", "einsum", "linear"}),
    "linear": frozenset({"matmul", "mm", "addmm", "einsum"}),
    "gelu": frozenset({"tanh", "erf", "pow", "sigmoid"}),
    "silu": frozenset({"sigmoid"}),
    "mish": frozenset({"tanh", "softplus"}),
    "softplus": frozenset({"exp", "log", "log1p"}),
    "cosinesimilarity": frozenset({"norm", "sqrt", "sum", "pow"}),
}
# Element-wise operations: a pair of them (`F.gelu` against a hand-written GELU) may go whole,
# both sides at once, as a person drops a tail both sides share. Any other pair stays whole.
ELEMENTWISE_PAIRS = frozenset({"gelu", "silu", "mish", "softplus"})
_MODULE_SUFFIX = re.compile(r"[123]d$")

Pair = tuple[str, frozenset[str]]  # (library operation, the primitives of it the other side computes)


def hand_written_pairs(operations: tuple[frozenset[str], ...]) -> frozenset[Pair]:
    """A library operation on one operand and primitives of it computed by another: the
    hand-written version compared with the library's (`(x - x.mean()) / x.var().sqrt()` against
    `F.layer_norm(x, ...)` pairs `layernorm` with `mean, var, sqrt`).

    The library operation must be its operand's own (not a shared projection both sides call),
    and a primitive two library operations could claim (`pow`: a GELU's cube or a variance's
    square?) belongs to neither.
    """
    sides = [computing(side) for side in operations]
    candidates: list[tuple[str, frozenset[str]]] = []
    for i, side in enumerate(sides):
        others = frozenset().union(*(other for j, other in enumerate(sides) if j != i))
        for operation in side - others:
            primitives = DECOMPOSITIONS.get(_MODULE_SUFFIX.sub("", operation), frozenset())
            if primitives & others - side:
                candidates.append((operation, primitives & others - side))
    claims = Counter(primitive for _, primitives in candidates for primitive in primitives)
    pairs = {(operation, frozenset(p for p in primitives if claims[p] == 1)) for operation, primitives in candidates}
    return frozenset((operation, primitives) for operation, primitives in pairs if primitives)


def keeps_pairs(pairs: frozenset[Pair], operations: tuple[frozenset[str], ...]) -> bool:
    """Each pair stays whole: the library operation and every primitive of it the hand-written
    side used (a layer norm whose variance is dropped is another comparison). An element-wise
    pair may also go whole."""
    everything = frozenset().union(*operations) if operations else frozenset()
    for operation, primitives in pairs:
        whole = operation in everything and primitives <= everything
        gone = operation not in everything and _MODULE_SUFFIX.sub("", operation) in ELEMENTWISE_PAIRS
        if not (whole or gone):
            return False
    return True


def computing(operations: frozenset[str]) -> frozenset[str]:
    """The operations that compute something of a side: not the check's, not plumbing."""
    return operations - CHECK_OPERATIONS - PLUMBING


INDEX = "[index]"  # a subscript by a computed index: `x[mask]`, `logits[rows, labels]`
CAST_PREFIX = "cast:"  # a cast that loses precision or range: `cast:float16`
# Only narrowing casts carry bugs of their own (overflow, rounding); `.float()`, `.bool()`,
# `.long()` mostly build inputs and masks.
CAST_METHODS = frozenset({"half", "bfloat16", "char", "byte", "short"})
_DTYPES = re.compile(r"^(?:half|float16|bfloat16|float8\w*|int8|uint8|int16|qint\w*|quint\w*)$")


def check_operands(tree: ast.Module, line: int) -> list[ast.expr] | None:
    """The operands of the check at `line`, or None when no check stops there."""
    statements = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)
                  and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if not statements:
        return None
    statement = max(statements, key=lambda node: node.lineno)  # the innermost one
    if isinstance(statement, ast.Raise):
        guard = next((node for node in ast.walk(tree) if isinstance(node, ast.If) and statement in node.body), None)
        return statement_operands(guard) if guard is not None else None
    return statement_operands(statement)


def statement_operands(statement: ast.AST) -> list[ast.expr] | None:
    """The operands `statement` compares if it is a check (an `if` guarding a raise: its
    test's), else None."""
    if isinstance(statement, ast.Assert):
        return _operands(statement.test)
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and _is_check_call(statement.value):
        return _operands(statement.value)
    if isinstance(statement, ast.If) and any(isinstance(s, ast.Raise) for s in statement.body):
        return _operands(statement.test)
    return None


def _is_check_call(call: ast.Call) -> bool:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return name.lower().startswith("assert") and bool(call.args)


def _operands(test: ast.expr) -> list[ast.expr]:
    """What a check compares: a comparison's sides, a check call's positional arguments."""
    if isinstance(test, ast.UnaryOp):
        return _operands(test.operand)
    if isinstance(test, ast.BoolOp):
        return [o for value in test.values for o in _operands(value)]
    if isinstance(test, ast.Compare):
        return [test.left, *test.comparators]
    if isinstance(test, ast.Call) and test.args:
        if len(test.args) == 1 and isinstance(test.args[0], ast.Call) and _is_check_call(test):
            return _operands(test.args[0])  # self.assertTrue(torch.allclose(a, b))
        return list(test.args)
    return [test]


def cast_of(call: ast.Call) -> str | None:
    """`x.half()` -> `cast:half`; `x.to(torch.float16)`, `x.type(torch.float16)` -> `cast:float16`.

    A cast to a dtype held in a variable (`model.to(dtype)`) is not recorded: its target is not
    in the text, and a sweep over dtypes is usually not the bug. Widening casts neither.
    """
    if not isinstance(call.func, ast.Attribute):
        return None
    if call.func.attr in CAST_METHODS and not call.args:
        return CAST_PREFIX + call.func.attr
    if call.func.attr in ("to", "type"):
        for argument in [*call.args, *(k.value for k in call.keywords if k.arg == "dtype")]:
            if isinstance(argument, ast.Attribute) and _DTYPES.match(argument.attr):
                return CAST_PREFIX + argument.attr
    return None


def is_computed_index(node: ast.Subscript) -> bool:
    """`x[mask]`, `x[:, idx]`, `x[range(n), y]`: an index that is data, not a literal slice."""
    index = node.slice
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(not isinstance(part, (ast.Constant, ast.Slice)) and not _is_literal(part) for part in parts)


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _is_literal(node.operand)
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Slice) and all(
        part is None or _is_literal(part) for part in (node.lower, node.upper, node.step)))


# --- what printed values mean ----------------------------------------------------------------

_NUMBER = r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
_RATIO = re.compile(_NUMBER + r"\s*/\s*\d+")
_PERCENT = re.compile(_NUMBER + r"\s*%")
_COUNT_BEFORE = re.compile(_NUMBER + r"\s+(?:mismatch|differ|wrong|bad|incorrect|nan|inf|elements? differ)", re.IGNORECASE)
_COUNT_AFTER = re.compile(r"(?:mismatch\w*|differ\w*|wrong|incorrect)\s*[:=]?\s*" + _NUMBER, re.IGNORECASE)
_NAN = re.compile(r"(?<![\w.])nan(?![\w(])", re.IGNORECASE)
_INF = re.compile(r"(?<![\w.])-?inf(?![\w(])", re.IGNORECASE)


def value_meanings(message: str) -> frozenset[str]:
    """What the numbers a failure message prints mean, in the order printed.

    `"37/512 elements differ"` -> {"count#0:nonzero"}; `"grad: tensor([nan, 1.])"` -> {"nan"}.
    Only counts (a ratio's numerator, a percentage, a number next to "mismatch"/"differ"/"nan")
    are read: a shape or a dimension may shrink to anything.
    """
    meanings: set[str] = set()
    found: list[tuple[int, float]] = []
    for pattern in (_RATIO, _PERCENT, _COUNT_BEFORE, _COUNT_AFTER):
        for match in pattern.finditer(message):
            found.append((match.start(1), float(match.group(1))))
    for index, (_, value) in enumerate(sorted(set(found))):
        meanings.add(f"count#{index}:{'zero' if value == 0 else 'nonzero'}")
    if _NAN.search(message):
        meanings.add("nan")
    if _INF.search(message):
        meanings.add("inf")
    return frozenset(meanings)
