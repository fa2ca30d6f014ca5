"""Which zygote a repro gets: only what it will use, warmed only where warming pays."""

from __future__ import annotations

from app.engine.minimize.runners import (
    BASE_PRELOAD,
    COMPILE_PRELOAD,
    COMPILE_WARMUP,
    Zygote,
    zygote_for,
)


def test_a_repro_without_torch_gets_a_bare_zygote():
    assert zygote_for("import numpy\nnumpy.zeros(3)[5]") == Zygote(preload=(), warmup=None)
    assert zygote_for("# uses torch later\nprint('torch')").preload == ()


def test_a_torch_repro_gets_torch_and_dynamo_without_a_warm_up():
    assert zygote_for("import torch\ntorch.ones(2) + torch.ones(3)") == Zygote(BASE_PRELOAD, None)
    assert zygote_for("from torch import nn\nnn.Linear(2, 2)").preload == BASE_PRELOAD


def test_a_compile_repro_gets_inductor_and_the_dynamo_warm_up():
    zygote = zygote_for("import torch\nf = torch.compile(lambda x: x, fullgraph=True)")
    assert zygote.preload == BASE_PRELOAD + COMPILE_PRELOAD
    assert zygote.warmup == COMPILE_WARMUP
    compile(zygote.warmup, "<warm-up>", "exec")  # it is valid Python
    assert "torch._dynamo.reset()" in zygote.warmup  # children start with empty compile caches
