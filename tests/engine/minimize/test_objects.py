"""The object-flattening pass: an instance made once becomes plain names, and still runs."""

from __future__ import annotations

import ast
import textwrap

from app.engine.minimize.edits import NodeIndex, apply_edits
from app.engine.minimize.passes.objects import instances_to_names

PARITY = textwrap.dedent("""\
    class Attention:
        def __init__(self, dim, scale=2):
            super().__init__()
            self.weight = [dim] * dim
            self.scale = scale

        def split(self, x):
            return [w * x for w in self.weight]

        def manual(self, x):
            return sum(self.split(x))

        def fused(self, x):
            return sum(self.split(x)) * self.scale


    model = Attention(3)
    out, ref = model.manual(2), model.fused(2)
    assert (out, ref) == (18, 36)
""")


def _candidates(source: str) -> list[str]:
    tree = ast.parse(source)
    index = NodeIndex(tree)
    return [ast.unparse(apply_edits(tree, edits, index)) for edits in instances_to_names(tree, index)]


def test_a_helper_object_becomes_names_and_functions_that_compute_the_same():
    [flat] = _candidates(PARITY)
    assert "class " not in flat and "model" not in flat and "self" not in flat
    assert "def manual(x)" in flat and "weight = [dim] * dim" in flat and "dim = 3" in flat
    exec(compile(flat, "flat", "exec"), {})  # the assert at the end still holds


def test_objects_it_cannot_flatten_safely_are_left_alone():
    twice = PARITY + "other = Attention(4)\n"
    passed_on = PARITY + "print(model)\n"
    clash = PARITY.replace("model = Attention(3)", "weight = 1\nmodel = Attention(3)")
    shadow = PARITY.replace("def split(self, x):", "def split(self, x, scale=1):")
    stored = PARITY + "model.scale = 5\n"
    for source in (twice, passed_on, clash, shadow, stored):
        assert _candidates(source) == [], source


def test_an_attribute_holding_the_same_named_argument_does_not_clash():
    # `self.heads = heads` beside the program's own `heads`, passed as `Attention(dim, heads)`
    source = textwrap.dedent("""\
    class Attention:
        def __init__(self, dim, heads):
            self.heads = heads
            self.width = dim // heads

        def manual(self, x):
            return x * self.width + self.heads


    dim, heads = (8, 4)
    model = Attention(dim, heads)
    assert model.manual(1) == 6
    """)
    [flat] = _candidates(source)
    assert "class " not in flat and "heads = heads" in flat
    exec(compile(flat, "flat", "exec"), {})
    renamed = source.replace("model = Attention(dim, heads)", "model = Attention(dim, 2 * heads)")
    assert _candidates(renamed) == []  # `heads` would then hold another value


def test_a_called_module_instance_becomes_its_forward_and_its_layers_names():
    # `model(x)` runs `forward`; `model.value.weight` is the layer's weight: both flatten
    source = textwrap.dedent("""\
    import torch
    class Pool(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.value = torch.nn.Linear(dim, dim)
        def forward(self, x):
            return self.value(x).sum()
    model = Pool(2)
    model(torch.ones(2)).backward()
    assert model.value.weight.grad is not None
    """)
    [flat] = _candidates(source)
    assert "class " not in flat and "model" not in flat
    assert "forward(torch.ones(2)).backward()" in flat and "value.weight.grad" in flat
    exec(compile(flat, "flat", "exec"), {})
    assert _candidates(source.replace("model = Pool(2)", "model = Pool(2)\nprint(model)")) == []
