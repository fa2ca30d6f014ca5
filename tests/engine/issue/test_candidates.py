"""Every runnable piece of a post is a candidate, with what the post presents it as."""

from __future__ import annotations

import pytest

from app.engine.issue.candidates import CONTROL, OUTPUT, REPRO, post_blocks, repl_source
from app.engine.issue.review import scan
from app.engine.issue.triage import needs_cuda

FENCE = "```"
CRASH = "import torch\nx = torch.ones(3, dtype=torch.float16)\ntorch.special.zeta(x, x)"
CONTROL_CODE = "import torch\nx = torch.ones(3, dtype=torch.float32)\nprint(torch.special.zeta(x, x))"


def py(code: str) -> str:
    return f"{FENCE}python\n{code}\n{FENCE}"


def test_a_working_variant_under_expected_behavior_is_a_control():
    body = (f"### 🐛 Describe the bug\n\nThis crashes:\n{py(CRASH)}\n\n### Expected behavior\n\n"
            f"The same with float32 works:\n{py(CONTROL_CODE + chr(10) + '# a longer control block' + chr(10) + 'y = 1')}\n")
    repro, control = post_blocks(body)
    assert (repro.role, repro.source) == (REPRO, CRASH)
    assert control.role == CONTROL and control.why


def test_a_workaround_lead_in_makes_a_control():
    body = f"Repro:\n{py(CRASH)}\n\nAs a workaround, this works:\n{py(CONTROL_CODE)}"
    assert [b.role for b in post_blocks(body)] == [REPRO, CONTROL]


def test_a_repl_transcript_is_extracted_without_its_output():
    body = (f"{FENCE}\n>>> import scipy.special\n>>> import torch\n>>> torch.tensor([1.0]).exp()\n"
            f"tensor([2.7183])\n>>> for i in range(2):\n...     print(i)\n...\n0\n1\n{FENCE}")
    (block,) = post_blocks(body)
    assert block.kind == "repl"
    assert block.source == ('import sys\nimport scipy.special\nimport torch\nsys.displayhook(torch.tensor([1.0]).exp())\n'
                            'for i in range(2):\n    print(i)')
    assert repl_source("no prompts here") is None


def test_two_unfenced_torch_lines_without_an_import_are_found():
    body = "To reproduce:\n\nx = torch.randn(2, 3)\ntorch.linalg.svd(x, full_matrices=None)\n\nthen it fails."
    (block,) = post_blocks(body)
    assert block.kind == "unfenced" and block.source.startswith("x = torch.randn(2, 3)")


def test_code_inside_details_is_a_candidate_with_its_line():
    body = f"Intro\n\n<details>\n<summary>repro</summary>\n\n{py(CRASH)}\n\n</details>"
    (block,) = post_blocks(body)
    assert block.source == CRASH and block.line == 6 and block.first_line == "import torch"


def test_a_commented_out_cuda_device_does_not_need_cuda():
    assert not needs_cuda('import torch\n# device = "cuda"\ndevice = "cpu"\nx = torch.ones(2, device=device)')
    assert needs_cuda('import torch\nx = torch.ones(2).cuda()  # on the GPU')


def test_a_pasted_test_method_runs_inside_a_test_case():
    body = py("    def test_zero_tolerance(self):\n        self.assertFalse(1 == 1)")
    (block,) = post_blocks(body)
    assert block.kind == "method" and "class ReproTest(unittest.TestCase):" in block.source
    assert "    def test_zero_tolerance(self):" in block.source and block.source.rstrip().endswith("unittest.main(argv=['repro'])")


def test_code_followed_by_it_works_is_a_control_and_keeps_its_torch_call():
    body = "prev = torch.ones((2, 22, 22, 4))\nF.interpolate(prev, scale_factor=2)\nis well\nSo it must be a cuda() problem"
    (block,) = post_blocks(body)
    assert block.role == CONTROL and block.why == "is well"
    assert block.source.endswith("F.interpolate(prev, scale_factor=2)")  # a call on F is code, not output


def test_an_unfenced_script_ends_before_the_next_heading():
    body = "## To Reproduce\nimport torch\nx = torch.ones(2)\nprint(x.sum())\n\n## Environment\nPyTorch version: 2.1.0"
    (block,) = post_blocks(body)
    assert block.source == "import torch\nx = torch.ones(2)\nprint(x.sum())"


def test_an_ipython_transcript_runs_its_inputs_and_echoes_bare_expressions():
    # `In [3]: x = ...` parses as an annotated assignment: it must not run as a script.
    body = (f"## Bug\n{FENCE}\nIn [1]: import torch\n\nIn [2]: x = torch.ones(2)\n\nIn [3]: x.sum()  # the sum\n"
            f"Out[3]: tensor(2.)\n\nIn [4]: for i in range(2):\n   ...:     print(i)\n   ...:\n0\n1\n\nIn [5]: %timeit x.sum()\n"
            f"1.2 us +- 3 ns per loop\n{FENCE}")
    (block,) = post_blocks(body)
    assert block.kind == "repl" and block.role == REPRO
    assert block.source == ('import sys\nimport torch\nx = torch.ones(2)\nsys.displayhook(x.sum())  # the sum\n'
                            'for i in range(2):\n    print(i)')
    assert scan(block.source) == []  # echoing adds nothing the security scan holds for approval


def test_a_repl_transcript_echoes_what_the_repl_showed_but_not_prints():
    assert repl_source(">>> import torch\n>>> print(1)\n1\n>>> torch.ones(1)\ntensor([1.])") == (
        'import sys\nimport torch\nprint(1)\nsys.displayhook(torch.ones(1))')
    assert repl_source(">>> import torch\n>>> x = torch.ones(1)") == "import torch\nx = torch.ones(1)"  # nothing echoed


def test_the_same_transcript_under_expect_is_a_control():
    session = f"{FENCE}\nIn [1]: x = torch.eye(512).div(500000)\n\nIn [2]: x.logdet()\nOut[2]: tensor(-inf)\n{FENCE}"
    repro, control = post_blocks(f"## 🐛 Bug\n{session}\n\n## Expect\n\n{session.replace('-inf', '-6718.6489')}")
    assert (repro.role, control.role) == (REPRO, CONTROL)


def test_an_unexpected_result_lead_in_is_not_a_control():
    body = f"When I check the result, I found that pytorch output a unexpected result.\n\n{py(CRASH)}"
    (block,) = post_blocks(body)
    assert block.role == REPRO


def test_a_lead_in_that_states_the_bug_is_not_a_control_even_when_it_names_a_working_call():
    body = (f"### 🐛 Describe the bug\n\n`torch.nn.RReLU` behaves like a linear function, however `torch.rrelu` works as "
            f"expected\n\n{py(CRASH)}")
    assert [b.role for b in post_blocks(body)] == [REPRO]
    assert [b.role for b in post_blocks(f"This works as expected:\n{py(CONTROL_CODE)}")] == [CONTROL]


def test_printed_output_tagged_python_under_an_output_heading_is_output_not_code():
    printed = "y_1 = RReLU(\n  lower=tensor([-10.0, -9.5]), upper=0.33\n)"
    body = f"### 🐛 Describe the bug\n\n{py(CRASH)}\n\n#### Output\n\n{py(printed)}\n\nOutput:\n{py('y = f(x)')}"
    assert [b.role for b in post_blocks(body)] == [REPRO, OUTPUT, OUTPUT]


@pytest.mark.parametrize("lead", ["With float32 there is no error here:", "This works fine and does not crash:",
                                  "Without the compile call it works without any errors:"])
def test_a_control_lead_in_that_says_no_error_is_still_a_control(lead):
    assert [b.role for b in post_blocks(f"{lead}\n{py(CONTROL_CODE)}")] == [CONTROL]
