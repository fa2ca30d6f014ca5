"""The drift rule for messageless assertions: the failing assert must keep testing the bug."""

from __future__ import annotations

from types import SimpleNamespace

from app.engine.minimize.dataflow import assert_operations
from app.engine.minimize.oracle import SignatureOracle, signature_of
from app.engine.minimize.probe import unprobed

ORIGINAL = """\
import torch


def buggy_norm(x):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)  # bug: unbiased
    return (x - mean) / torch.sqrt(var + 1e-5)


class Model(torch.nn.Module):
    def forward(self, x):
        return buggy_norm(x)


def check(model, size):
    x = torch.randn(size, 8)
    actual = model(x)
    expected = torch.nn.functional.layer_norm(x, [8])
    assert torch.allclose(actual, expected)


check(Model(), 4)
"""
DRIFTED = "import torch\nassert torch.allclose(torch.randn([]), torch.ones(1))\n"
KEPT = ("import torch\nx = torch.randn(8)\n"
        "assert torch.allclose(torch.nn.functional.layer_norm(x, [8]), (x - x.mean()) / x.var().sqrt())\n")
ONE_SIDED = "import torch\nx = torch.randn(8)\nassert torch.allclose((x - x.mean()) / x.var().sqrt(), torch.ones(8))\n"


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_operations_follow_assignments_parameters_calls_and_classes():
    actual, expected = assert_operations(ORIGINAL, _line_of(ORIGINAL, "assert"))
    # `actual = model(x)`: the parameter `model` <- `Model()` -> `forward` returns `buggy_norm(x)`
    assert actual == {"sub", "mean", "var", "sqrt"}  # `x - mean`: two computed values subtracted
    assert expected == {"layernorm"}  # keyed like `nn.LayerNorm`: one op, two spellings


def test_constructors_conversions_operators_and_dead_code_are_not_operations():
    assert assert_operations(DRIFTED, 2) == (frozenset(), frozenset())
    assert assert_operations("x = torch.ones(2).float() + 1\nassert x.sum() == len(x)\n", 2) == ({"sum"}, set())
    # a definition's body only counts through what it returns
    unused = "def f(x):\n    y = x.var()\n    return x\nassert torch.allclose(f(torch.ones(1)), torch.ones(1))\n"
    assert assert_operations(unused, 4) == (frozenset(), frozenset())
    # `self.norm = ...` flows into `self.norm(x)`; tolerances are not operands
    module = ("class M:\n    def __init__(self):\n        self.norm = nn.LayerNorm(4)\n"
              "    def forward(self, x):\n        return self.norm(x)\n"
              "assert torch.allclose(M().forward(x), x, atol=eps.sqrt())\n")
    assert assert_operations(module, 6) == ({"layernorm"}, set())


def test_names_resolve_by_scope_and_calls_yield_only_what_they_return():
    # A drift the minimizer found: the outer `forward` computes, the `forward` Fused returns does not.
    shadowed = ("def Fused(reference):\n    def forward(x):\n        return x\n    return forward\n"
                "def forward(x):\n    return nn.LayerNorm([1])(x)\n"
                "reference = forward\nx = torch.randn([1])\n"
                "assert torch.allclose(Fused(reference)(x), reference(x))\n")
    assert assert_operations(shadowed, 9) == (frozenset(), {"layernorm"})


def test_only_an_assert_statement_has_operations():
    assert assert_operations("import torch\nraise AssertionError\n", 2) is None
    assert assert_operations("def f(:\n", 1) is None


def _run(source: str, line: int, code: str):
    tb = (f'Traceback (most recent call last):\n  File "/tmp/repro.py", line {line}, in <module>\n'
          f"    {code}\nAssertionError\n")
    return SimpleNamespace(output=SimpleNamespace(head=tb.encode(), tail=b""), exit_code=1,
                           signal=None, timed_out=False)


def test_oracle_rejects_an_assert_that_lost_the_buggy_computation():
    line = _line_of(ORIGINAL, "assert")
    original = signature_of(_run(ORIGINAL, line, "assert torch.allclose(actual, expected)"), ORIGINAL)
    runs = {
        DRIFTED: _run(DRIFTED, 2, DRIFTED.splitlines()[1]),
        KEPT: _run(KEPT, 3, KEPT.splitlines()[2]),
        ONE_SIDED: _run(ONE_SIDED, 3, ONE_SIDED.splitlines()[2]),
    }
    oracle = SignatureOracle(lambda source, timeout: runs[unprobed(source)], original, timeout_s=5)
    # KEPT swaps the sides and keeps a piece of each; ONE_SIDED compares the bug to a constant
    assert oracle([DRIFTED, KEPT, ONE_SIDED]) == [False, True, False]
    # same class, message and check: only the data flow tells them apart
    drifted = signature_of(runs[DRIFTED], DRIFTED)
    assert (drifted.exc_type, drifted.message) == (original.exc_type, original.message)
    assert original.site == {"allclose"} <= drifted.site
    assert not original.matches(drifted)
    # without the source the operations are unknown: no match either
    assert not original.matches(signature_of(runs[KEPT]))


def test_gradients_flow_from_backward_and_tuples_unpack_pairwise():
    source = ("out, ref = custom(x), F.layer_norm(x, [4])\n"
              "def custom(x):\n    return x.softmax(-1)\n"
              "loss = torch.masked_fill(out, m, 0).sum()\nloss.backward()\n"
              "assert torch.allclose(x.grad, ref)\n")
    grad, ref = assert_operations(source, 6)
    assert grad == {"softmax", "maskedfill", "sum"}  # `x.grad` <- `loss.backward()` <- `out`
    assert ref == {"layernorm"}  # not `custom`'s softmax: `a, b = f(x), g(x)` pairs up


def test_an_instance_passed_as_an_argument_brings_its_class():
    source = ("class Pool(torch.nn.Module):\n    def forward(self, x):\n        return x.softmax(-1)\n"
              "def step(model, x):\n    return model(x)\n"
              "def main():\n    model = Pool()\n    out = step(model, torch.ones(2))\n"
              "    assert torch.isfinite(out).all()\n")
    assert assert_operations(source, 9) == ({"softmax", "isfinite", "all"},)


def test_check_dataflow_records_the_data_path():
    from app.engine.minimize.dataflow import check_dataflow

    source = ("logp = F.log_softmax(logits.half(), -1)\nnll = -logp[:, targets].mean()\n"
              "assert torch.allclose(nll, F.cross_entropy(logits, targets))\n")
    flow = check_dataflow(source, 3)
    assert flow.path == {"[index]", "cast:half"}
    assert flow.operations == ({"logsoftmax", "mean", "neg"}, {"crossentropy"})  # `-x`: a negation
