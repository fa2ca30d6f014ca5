"""The oracle keeps the bug, not only the exception: each rule on tiny programs.

Every case is a drift a minimizer can reach in a few steps, with the same exception class and
the same (digit-masked) first message line as the original: only the bug fingerprint tells
them apart. Tracebacks are written the way CPython prints them for `repro.py`.
"""

from __future__ import annotations

from types import SimpleNamespace

from app.engine.minimize.oracle import signature_of


def _run(source: str, message: str, *, line: int | None = None, library_frame: bool = False):
    """A failed run of `source` stopping at its last `assert`/check line with `message`."""
    if line is None:
        line = max(i for i, text in enumerate(source.splitlines(), 1) if "assert" in text)
    code = source.splitlines()[line - 1].strip()
    frames = f'  File "/tmp/repro.py", line {line}, in <module>\n    {code}\n'
    if library_frame:
        frames += '  File "/usr/lib/python3/site-packages/torch/testing/_comparison.py", line 1631, in assert_close\n' \
                  "    raise error_metas[0].to_error(msg)\n"
    text = f"Traceback (most recent call last):\n{frames}AssertionError: {message}\n".replace(": \n", "\n")
    return SimpleNamespace(output=SimpleNamespace(head=text.encode(), tail=b""), exit_code=1,
                           signal=None, timed_out=False)


def _signature(source: str, message: str = "", **kwargs):
    return signature_of(_run(source, message, **kwargs), source)


ATTENTION = """\
import torch
import torch.nn.functional as F
proj = torch.nn.Linear(4, 4)
def manual(q):
    return torch.softmax(proj(q) @ proj(q).mT, -1) @ proj(q)
def fused(q):
    return F.scaled_dot_product_attention(proj(q), proj(q), proj(q))
q = torch.randn(1, 3, 4)
out, ref = manual(q), fused(q)
assert torch.allclose(out, ref), f"{(~torch.isclose(out, ref)).sum()}/{out.numel()} outputs differ"
"""
KEPT = """\
import torch
import torch.nn.functional as F
q = torch.randn(1, 2, 4)
out, ref = torch.softmax(q @ q.mT, -1) @ q, F.scaled_dot_product_attention(q, q, q)
assert torch.allclose(out, ref), f"{(~torch.isclose(out, ref)).sum()}/{out.numel()} outputs differ"
"""


def test_a_printed_mismatch_count_must_stay_non_zero():
    original = _signature(ATTENTION, "37/36 outputs differ")
    assert original.matches(_signature(KEPT, "3/8 outputs differ"))
    # the count rewritten to a literal: same masked message, meaning lost
    zero = KEPT.replace("{(~torch.isclose(out, ref)).sum()}", "0").replace("{out.numel()}", "1")
    assert not original.matches(_signature(zero, "0/1 outputs differ"))


def test_a_check_with_a_message_keeps_both_sides_computation():
    original = _signature(ATTENTION, "37/36 outputs differ")
    # "a random layer compared with x": the reference and the custom code both gone
    layer = ("import torch\nx = torch.randn(4)\nout, ref = torch.nn.Linear(4, 4)(x), x\n"
             'assert torch.allclose(out, ref), f"{(~torch.isclose(out, ref)).sum()}/{out.numel()} outputs differ"\n')
    assert not original.matches(_signature(layer, "4/4 outputs differ"))


def test_each_side_keeps_an_operation_of_its_own_not_the_shared_projection():
    original = _signature(ATTENTION, "37/36 outputs differ")
    both_layers = KEPT.replace("torch.softmax(q @ q.mT, -1) @ q", "torch.nn.Linear(4, 4)(q)")
    assert not original.matches(_signature(both_layers, "8/8 outputs differ"))
    swapped = KEPT.replace("out, ref = torch.softmax(q @ q.mT, -1) @ q, F.scaled_dot_product_attention(q, q, q)",
                           "out, ref = F.scaled_dot_product_attention(q, q, q), torch.softmax(q @ q.mT, -1) @ q")
    assert original.matches(_signature(swapped, "8/8 outputs differ"))  # sides may swap


MASKED = """\
import torch
v = torch.nn.Linear(2, 2)
scores = torch.zeros(2, 2).masked_fill(padding, float("-inf"))
weights = scores.softmax(-1)
valid = ~padding.all(1)
loss = torch.nn.functional.mse_loss((weights @ v(x))[valid], target[valid])
loss.backward()
assert torch.isfinite(v.weight.grad).all(), "non-finite gradient"
"""


def test_the_gradient_check_follows_backward_to_the_mask_and_the_softmax():
    original = _signature(MASKED, "non-finite gradient")
    assert {"maskedfill", "softmax", "mseloss", "linear"} <= original.operations[0]
    assert original.path == {"maskedfill", "[index]"}


def test_a_nan_gradient_after_masking_does_not_become_a_nan_loss():
    original = _signature(MASKED, "non-finite gradient")
    nan_loss = ("import torch\nw = torch.ones(2, requires_grad=True)\n"
                "loss = (w * float('nan')).sum()\nloss.backward()\n"
                'assert torch.isfinite(w.grad).all(), "non-finite gradient"\n')
    assert not original.matches(_signature(nan_loss, "non-finite gradient"))
    # the mask dropped and the loss with it: the softmax alone survives
    unmasked = ("import torch\nv = torch.nn.Linear(2, 2)\n"
                'weights = (torch.zeros(2, 2) - float("inf")).softmax(-1)\n'
                "(weights @ v(x)).sum().backward()\n"
                'assert torch.isfinite(v.weight.grad).all(), "non-finite gradient"\n')
    assert not original.matches(_signature(unmasked, "non-finite gradient"))
    masked = unmasked.replace('(torch.zeros(2, 2) - float("inf"))', 'torch.zeros(2, 2).masked_fill(p, float("-inf"))')
    masked = masked.replace("(weights @ v(x))", "(weights @ v(x))[valid]")
    assert original.matches(_signature(masked, "non-finite gradient"))  # the same, path kept
    minimum = ("import torch\nv = torch.ones(2, requires_grad=True)\n"
               "padding = torch.tensor([[False, False], [True, True]])\n"
               "w = torch.zeros(2, 2).masked_fill(padding, float('-inf')).softmax(-1)\n"
               "(w @ v)[~padding.all(1)].sum().backward()\n"
               'assert torch.isfinite(v.grad).all(), "non-finite gradient"\n')
    assert original.matches(_signature(minimum, "non-finite gradient"))


def test_a_data_path_step_stays_even_when_everything_else_does():
    """The issue allows dropping a step if "the comparison still involves the original's
    operations"; read statically that let three drifts through in the benchmark (below and
    in the next tests), this one included: without `[valid]` the NaN row enters the loss, the
    NaN-loss drift itself. So the data path always stays."""
    original = _signature(MASKED, "non-finite gradient")
    every_row = MASKED.replace("(weights @ v(x))[valid], target[valid]", "weights @ v(x), target")
    assert not original.matches(_signature(every_row, "non-finite gradient"))


RMSNORM = """\
import torch
import torch.nn.functional as F
x = torch.full((1, 2), 400.0)
h = x.half()
torch.testing.assert_close((h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True))).float(), F.rms_norm(x, (2,)))
"""
CLOSE = "Tensor-likes are not close!\n\nMismatched elements: 2 / 2 (100.0%)\nGreatest absolute difference: 1.0"


def test_assert_close_keeps_its_sides_and_its_cast():
    original = _signature(RMSNORM, CLOSE, line=5, library_frame=True)
    assert original.operations == ({"mean", "pow", "rsqrt"}, {"rmsnorm"}) and original.path == {"cast:half"}
    constants = "import torch\ntorch.testing.assert_close(torch.ones(2), torch.zeros(2))\n"
    assert not original.matches(_signature(constants, CLOSE, line=2, library_frame=True))
    # the square kept, the normalization and the cast to half gone
    uncast = RMSNORM.replace("h = x.half()", "h = x").replace("(h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True)))", "h.pow(2)")
    assert not original.matches(_signature(uncast, CLOSE, line=5, library_frame=True))
    cast = uncast.replace("h = x", "h = x.half()")
    # the cast kept but the RMSNorm written by hand reduced to its square: no longer a
    # hand-written RMSNorm compared with the library's (it used to pass: "a piece suffices")
    assert original.pairs == {("rmsnorm", frozenset({"mean", "pow", "rsqrt"}))}
    assert not original.matches(_signature(cast, CLOSE, line=5, library_frame=True))
    # the cast gone, all the rest kept (the benchmark's run: `pow(2)` shrunk to `pow(1)` on a
    # negative input fails for another reason): rejected
    widened = RMSNORM.replace("h = x.half()", "h = x * 2")
    assert not original.matches(_signature(widened, CLOSE, line=5, library_frame=True))
    assert original.matches(_signature(RMSNORM.replace("400.0", "300.0"), CLOSE, line=5, library_frame=True))


def test_a_nan_the_message_prints_must_stay_a_nan():
    nan = CLOSE.replace("Greatest absolute difference: 1.0", "Greatest absolute difference: nan")
    original = _signature(RMSNORM, nan, line=5, library_frame=True)
    assert not original.matches(_signature(RMSNORM, CLOSE, line=5, library_frame=True))
    assert original.matches(_signature(RMSNORM, nan, line=5, library_frame=True))


def test_a_kept_mask_must_still_feed_the_operation_it_fed():
    """The benchmark's first run found this: the mask kept, the softmax gone, the NaN gradient
    now from `-inf * value`. `masked_fill` fed `softmax` in the original; here it feeds nothing."""
    original = _signature(MASKED, "non-finite gradient")
    assert ("maskedfill", "softmax") in original.consumers
    product = ("import torch\nv = torch.nn.Linear(2, 2)\nvalid = ~padding.all(1)\n"
               'scores = torch.zeros(2, 2).masked_fill(padding, float("-inf"))\n'
               "loss = torch.nn.functional.mse_loss((scores * v(x))[valid], target[valid])\n"
               "loss.backward()\n"
               'assert torch.isfinite(v.weight.grad).all(), "non-finite gradient"\n')
    assert not original.matches(_signature(product, "non-finite gradient"))


GATHER = """\
import torch
import torch.nn.functional as F
model = torch.nn.Sequential(torch.nn.Linear(3, 2))
logits = model(x)
nll = -F.log_softmax(logits, -1)[:, targets].mean()
assert torch.allclose(nll, F.cross_entropy(logits, targets))
"""


def test_a_wrong_index_does_not_shrink_to_a_different_mismatch():
    original = _signature(GATHER)
    assert original.path == {"[index]"}
    # the benchmark's first run: the index gone, log_softmax and cross_entropy kept, the model not
    unindexed = ("import torch\nimport torch.nn.functional as F\nlogits = torch.nn.Linear(1, 2)(x)\n"
                 "assert torch.allclose(F.log_softmax(logits).mean(), F.cross_entropy(logits, y))\n")
    assert not original.matches(_signature(unindexed))
    kept = ("import torch\nimport torch.nn.functional as F\nlogits = torch.ones(2, 2)\n"
            "assert torch.allclose(-F.log_softmax(logits, -1)[:, y].mean(), F.cross_entropy(logits, y))\n")
    assert original.matches(_signature(kept))


def test_a_dropped_index_is_rejected_even_with_every_other_call_kept():
    """The benchmark's second run: the model kept, so every computing operation survived, but
    the `[:, targets]` index went: a different mismatch, rejected."""
    source = GATHER.replace("nll = -F.log_softmax(logits, -1)[:, targets].mean()",
                            "nll = (-F.log_softmax(logits, -1)[:, targets] + u.unsqueeze(1)).mean()")
    original = _signature(source)
    drifted = ("import torch\nimport torch.nn.functional as F\n"
               "logits = torch.nn.Sequential(torch.nn.Linear(1, 2))(x)\n"
               "assert torch.allclose(F.log_softmax(logits).mean(), F.cross_entropy(logits, y))\n")
    assert not original.matches(_signature(drifted))


LAYERNORM = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
def fused_layer_norm_gelu(x, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=True)
    y = (x - mean) / torch.sqrt(var + eps)
    return 0.5 * y * (1.0 + torch.tanh(0.79788 * (y + 0.044715 * y.pow(3))))
x = torch.randn(2, 64)
assert torch.allclose(fused_layer_norm_gelu(x), F.gelu(nn.LayerNorm(64)(x), approximate="tanh"))
"""


def test_a_layer_norm_whose_variance_is_dropped_is_another_bug():
    """Issue #26: the minimizer's result for the fused LayerNorm+GELU case was
    `allclose(x.mean(), nn.LayerNorm([1])(x))`: each side kept one operation of its own, the
    old rule was met, and the variance (the bug: the unbiased estimator) was gone."""
    original = _signature(LAYERNORM)
    assert original.pairs == {("layernorm", frozenset({"sub", "mean", "var", "sqrt"})), ("gelu", frozenset({"tanh"}))}
    drifted = "import torch\nimport torch.nn as nn\nx = torch.randn([1])\nassert torch.allclose(x.mean(), nn.LayerNorm([1])(x))\n"
    assert not original.matches(_signature(drifted))
    no_sqrt = "import torch\nimport torch.nn.functional as F\nx = torch.randn(4)\n" \
              "assert torch.allclose((x - x.mean()) / x.var(), F.layer_norm(x, [4]))\n"
    assert not original.matches(_signature(no_sqrt))
    uncentred = no_sqrt.replace("(x - x.mean()) / x.var()", "x.mean() / x.var().sqrt()")  # a benchmark run's
    assert not original.matches(_signature(uncentred))
    # what a person writes: the GELU tail gone from both sides at once, the norm whole
    hand = "import torch\nimport torch.nn.functional as F\nx = torch.randn(4)\n" \
           "assert torch.allclose((x - x.mean()) / x.var().sqrt(), F.layer_norm(x, [4]))\n"
    assert original.matches(_signature(hand))
    # the GELU kept by hand but gone from the library's side: half a pair
    half_gelu = hand.replace("x.var().sqrt()", "x.var().sqrt() * torch.tanh(x)")
    assert original.matches(_signature(half_gelu))  # element-wise: only the norm's pair must stay whole
    gelu_only = "import torch\nimport torch.nn.functional as F\nx = torch.randn(4)\n" \
                "assert torch.allclose(x * torch.tanh(x), F.gelu(x))\n"
    assert not original.matches(_signature(gelu_only))  # the norm's pair gone: another comparison


def _raised(source: str, message: str, *, line: int, library: tuple[str, str] | None = None, user_line=None):
    code = source.splitlines()[line - 1].strip()
    frames = f'  File "/tmp/repro.py", line {line}, in <module>\n    {code}\n'
    if library:
        frames += f'  File "/usr/lib/python3.11/site-packages/{library[0]}", line 9, in {library[1]}\n    x\n'
    text = f"Traceback (most recent call last):\n{frames}{message}\n"
    if user_line:
        text += f"\nfrom user code:\n   File \"/tmp/repro.py\", line {user_line}, in f\n    {source.splitlines()[user_line - 1]}\n"
    return signature_of(SimpleNamespace(output=SimpleNamespace(head=text.encode(), tail=b""), exit_code=1,
                                        signal=None, timed_out=False), source)


def test_an_exception_must_come_from_the_same_operation():
    index = "IndexError: index out of range in self"
    embedding = _raised("import torch\ntorch.nn.Embedding(1, 1)(torch.tensor([1]))\n", index, line=2,
                        library=("torch/nn/functional.py", "embedding"))
    assert embedding.raiser == "torch/nn/functional.py:embedding"
    select = _raised("import torch\ntorch.ones(1).index_select(0, torch.tensor([1]))\n", index, line=2)
    assert not embedding.matches(select)  # same class and message, another operation
    shape = "RuntimeError: The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"
    residual = _raised("import torch\nout, identity = torch.ones(2), torch.ones(4)\ny = torch.relu(out + identity)\n",
                       shape, line=3)
    assert residual.site_ops >= {"add", "relu"}
    assert residual.matches(_raised("import torch\ntorch.ones(2) + torch.ones(4)\n", shape, line=2))
    assert not residual.matches(_raised("import torch\ntorch.ones(2).expand_as(torch.ones(4))\n", shape, line=2))


def test_a_dynamo_error_is_placed_at_the_users_line_it_names():
    message = "torch._dynamo.exc.UserError: Could not guard on data-dependent expression zuf0 > 1.0"
    source = "import torch\n@torch.compile(fullgraph=True)\ndef f(x):\n    if x.item() > 1.0:\n        pass\nf(torch.ones(1))\n"
    original = _raised(source, message, line=6, library=("torch/_dynamo/eval_frame.py", "compile_wrapper"),
                       user_line=4)
    assert (original.raiser, original.site_ops) == ("", frozenset({"item"}))
    other_line = source.replace("if x.item() > 1.0:", "if x.sum() > 1.0:")
    assert not original.matches(_raised(other_line, message, line=6, user_line=4))


def _probed_run(source: str, message: str, words: str):
    line = max(i for i, text in enumerate(source.splitlines(), 1) if "assert" in text)
    text = (f"[scrub-check] {words}\nTraceback (most recent call last):\n"
            f'  File "/tmp/repro.py", line {line}, in <module>\n    {source.splitlines()[line - 1].strip()}\n'
            f"AssertionError: {message}\n")
    return signature_of(SimpleNamespace(output=SimpleNamespace(head=text.encode(), tail=b""), exit_code=1,
                                        signal=None, timed_out=False), source)


def test_a_nan_gradient_check_that_now_reads_a_missing_grad_is_another_failure():
    """Seen in a benchmark run: `for name, p in model.named_parameters(): assert
    torch.isfinite(p.grad).all(), f"... {name}"` shrank to `assert torch.ones(1).grad, '...'`:
    `.grad` statically flows from every `backward()`, so only the run shows it is None."""
    message = "non-finite gradient in value.weight"
    original = _probed_run(MASKED, message, "nonfinite")
    drifted = MASKED.replace("assert torch.isfinite(v.weight.grad).all()", "assert torch.ones(1).grad")
    assert drifted != MASKED
    assert not original.matches(_probed_run(drifted, message, "none"))
    assert original.matches(_probed_run(MASKED, message, "nonfinite"))


def test_the_line_a_dynamo_error_names_is_the_innermost_failing_line():
    from app.engine.minimize.oracle import failing_lines

    text = ('Traceback (most recent call last):\n  File "/tmp/repro.py", line 9, in <module>\n    f(x)\n'
            '  File "/x/site-packages/torch/_dynamo/eval_frame.py", line 1177, in compile_wrapper\n    raise e\n'
            "torch._dynamo.exc.UserError: Could not guard on data-dependent expression\n\n"
            'from user code:\n   File "/tmp/repro.py", line 4, in f\n    if x.item() > 1.0:\n')
    assert failing_lines(text) == (9, 4)


def test_a_run_failing_with_another_exception_is_rejected_without_analysing_its_source(monkeypatch):
    import app.engine.minimize.oracle as oracle_module

    analysed: list[str] = []
    real = oracle_module.check_dataflow
    monkeypatch.setattr(oracle_module, "check_dataflow", lambda source, *a: analysed.append(source) or real(source, *a))
    expected = _signature(ATTENTION, "37/48 outputs differ")
    shapes = SimpleNamespace(output=SimpleNamespace(
        head=b'Traceback (most recent call last):\n  File "/tmp/repro.py", line 3, in <module>\n'
             b"    q @ k\nRuntimeError: mat1 and mat2 shapes cannot be multiplied\n", tail=b""),
        exit_code=1, signal=None, timed_out=False)

    def run(probed_source: str, timeout_s: float):  # the candidate runs wrapped by the probe
        return _run(KEPT, "5/8 outputs differ") if KEPT.splitlines()[-1] in probed_source else shapes

    oracle = oracle_module.SignatureOracle(run, expected, timeout_s=5)
    analysed.clear()
    assert oracle(["q = 1\nq @ k\n"]) == [False] and analysed == []  # another class: no fingerprint computed
    assert oracle([KEPT]) == [True] and analysed == [KEPT]  # the same class and message: analysed, kept
