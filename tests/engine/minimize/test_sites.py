"""Where an exception was raised: the library function it left, or what the program's line calls."""

from __future__ import annotations

from app.engine.minimize.sites import failing_site, site_operations

TORCH = "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch"
EMBEDDING = f"""Traceback (most recent call last):
  File "/tmp/work/repro.py", line 2, in <module>
    torch.nn.Embedding(1, 1)(torch.tensor([1]))
  File "{TORCH}/nn/modules/module.py", line 1778, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
  File "{TORCH}/nn/functional.py", line 2560, in embedding
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
IndexError: index out of range in self
"""


def test_the_raiser_is_the_innermost_library_function_without_its_line():
    assert failing_site(EMBEDDING, "repro.py") == ("torch/nn/functional.py:embedding", 2)
    stdlib = EMBEDDING.replace(f"{TORCH}/nn/functional.py", "/usr/lib/python3.11/json/decoder.py")
    assert failing_site(stdlib, "repro.py")[0] == "json/decoder.py:embedding"


def test_an_error_raised_on_the_programs_own_line_has_no_raiser():
    text = ('Traceback (most recent call last):\n  File "/tmp/repro.py", line 3, in <module>\n    a + b\n'
            "RuntimeError: The size of tensor a (2) must match the size of tensor b (4)\n")
    assert failing_site(text, "repro.py") == ("", 3)
    assert failing_site("no traceback here", "repro.py") == ("", None)


def test_a_dynamo_error_is_blamed_on_the_user_line_its_message_names():
    text = (f'Traceback (most recent call last):\n  File "/tmp/repro.py", line 9, in <module>\n    f(x)\n'
            f'  File "{TORCH}/_dynamo/eval_frame.py", line 1177, in compile_wrapper\n    raise e\n'
            "torch._dynamo.exc.UserError: Could not guard on data-dependent expression\n\n"
            'from user code:\n   File "/tmp/repro.py", line 4, in f\n    if x.item() > 1.0:\n')
    assert failing_site(text, "repro.py") == ("", 4)


def test_site_operations_are_what_the_line_calls_itself():
    source = ("import torch\nimport torch.nn as nn\nclass Block(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.emb = nn.Embedding(4, 2)\n"
              "    def forward(self, x, y):\n        return torch.relu(self.emb(x) + y)\n"
              "if torch.ones(1).item() > 0:\n    pass\n")
    assert site_operations(source, 8) == {"relu", "embedding", "add"}
    assert site_operations(source, 9) == {"ones", "item"}  # a compound statement: its header only
    assert site_operations("def f(:\n", 1) == frozenset()
