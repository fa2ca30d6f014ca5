"""Source transforms: each changes what its experiment varies, keeps every line where it was,
and says when there is nothing to change."""

from __future__ import annotations

import ast

from app.engine.diagnosis import transforms as t

COMPILED = """\
import torch


class M(torch.nn.Module):
    def forward(self, x):
        return torch.linalg.cond(torch.arctan(x))


model = M()
compiled = torch.compile(model, mode="max-autotune")
y = compiled(torch.ones(2, 2))


@torch.compile
def f(x):
    return x + 1


@torch.compile(dynamic=True)
def g(x):
    return x * 2
"""


def _same_lines(before: str, after: str) -> None:
    assert len(after.splitlines()) == len(before.splitlines())
    ast.parse(after)


def test_the_backend_is_set_everywhere_and_inductor_options_dropped_for_other_backends():
    out = t.compile_backend(COMPILED, "aot_eager")
    _same_lines(COMPILED, out)
    assert "torch.compile(model, mode=None, backend='aot_eager')" in out
    assert "@torch.compile(backend='aot_eager')" in out
    assert "@torch.compile(dynamic=True, backend='aot_eager')" in out
    assert "mode=\"max-autotune\"" in t.compile_backend(COMPILED, "inductor")


def test_the_backends_a_repro_uses_are_read_default_inductor():
    assert t.compile_backends(COMPILED) == ["inductor", "inductor", "inductor"]
    assert t.compile_backends("import torch\ntorch.compile(f, backend='aot_eager')\n") == ["aot_eager"]


def test_without_compile_every_compile_becomes_the_function_itself():
    out = t.without_compile(COMPILED)
    _same_lines(COMPILED, out)
    assert "compiled = (model)" in out and "torch.compile" not in out
    assert "@(lambda fn: fn)\ndef f(x):" in out and "@(lambda fn: fn)\ndef g(x):" in out


def test_dynamic_is_set_on_every_compile():
    out = t.compile_with(COMPILED, dynamic="False")
    assert out.count("dynamic=False") == 3 and "dynamic=True" not in out


def test_reset_goes_before_each_compiling_statement_only_when_there_are_two():
    source = "import torch\na = torch.compile(f)\nb = torch.compile(g)\n"
    out = t.reset_before_compiles(source)
    assert out.splitlines()[1:] == ["torch._dynamo.reset(); a = torch.compile(f)",
                                    "torch._dynamo.reset(); b = torch.compile(g)"]
    assert t.reset_before_compiles("import torch\na = torch.compile(f)\n") is None


def test_dataloaders_lose_their_workers_and_the_options_only_workers_take():
    source = ("loader = DataLoader(ds, batch_size=2, num_workers=4, persistent_workers=True, prefetch_factor=2)\n"
              "other = DataLoader(ds, num_workers=0)\n")
    out = t.dataloaders_single_process(source)
    assert out.splitlines()[0] == ("loader = DataLoader(ds, batch_size=2, num_workers=0, persistent_workers=False, "
                                   "prefetch_factor=None)")
    assert t.dataloaders_single_process("other = DataLoader(ds, num_workers=0)\n") is None
    assert t.dataloaders_single_process("x = 1\n") is None


def test_float64_raises_dtypes_and_float_casts():
    source = "x = torch.randn(3, dtype=torch.float32).half()\ny = x.float()\nz = torch.tensor(1.0).bfloat16()\n"
    out = t.to_float64(source)
    assert out == ("x = torch.randn(3, dtype=torch.float64).double()\ny = x.double()\n"
                   "z = torch.tensor(1.0).double()\n")


def test_smaller_sizes_divides_literals_and_the_constants_they_name():
    source = "q_len = 100000\nm = torch.full((q_len, q_len), 0.0)\nx = torch.randn(4096, 3)\nsteps = 1000\n"
    out = t.smaller_sizes(source, 8)
    assert out.splitlines() == ["q_len = 12500", "m = torch.full((q_len, q_len), 0.0)", "x = torch.randn(512, 3)",
                                "steps = 1000"]
    assert t.smaller_sizes("x = torch.randn(3, 4)\n", 8) is None


def test_to_cpu_moves_cuda_calls_and_device_strings():
    source = "m = nn.Embedding(3, 5).cuda()\nx = torch.tensor([3], device='cuda:0')\ny = x.to(\"cuda\")\n"
    out = t.to_cpu(source)
    assert out == "m = nn.Embedding(3, 5).cpu()\nx = torch.tensor([3], device='cpu')\ny = x.to('cpu')\n"


def test_a_prologue_takes_a_blank_line_before_the_first_statement_and_moves_nothing():
    source = '"""Doc."""\nfrom __future__ import annotations\n\nimport torch\nx = 1\n'
    out, shift = t.with_prologue(source, "import os\n")
    assert shift == 0 and out.splitlines()[3] == "import torch"
    assert out.splitlines()[2].startswith("exec(compile(")
    namespace: dict = {}
    exec(compile(out, "repro.py", "exec"), namespace)
    assert "os" in namespace


def test_a_prologue_before_a_first_line_statement_shifts_by_one():
    out, shift = t.with_prologue("import torch\nx = 1\n", "y = 2\n")
    assert shift == 1 and out.splitlines()[1:] == ["import torch", "x = 1"]


def test_a_comment_line_keeps_its_comment_after_the_prologue():
    out, shift = t.with_prologue("# the repro\nimport torch\n", "y = 2\n")
    assert shift == 0 and out.splitlines()[0].endswith("# the repro")


def test_the_builtin_compile_is_not_torch_compile_but_an_imported_one_is():
    assert not t.uses_compile("code = compile('1', 'x', 'eval')\n")
    assert not t.uses_compile("from tlib import compile\nf = compile(g)\n")
    out = t.compile_backend("from torch import compile as tc\nf = tc(g)\n", "eager")
    assert out == "from torch import compile as tc\nf = tc(g, backend='eager')\n"
