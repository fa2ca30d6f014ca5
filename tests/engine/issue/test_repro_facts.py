"""What a repro says about itself: self-checks, and the CPU part of a CPU-vs-CUDA comparison."""

from __future__ import annotations

import ast

from app.engine.issue.markdown import Repro
from app.engine.issue.repro_facts import checks_itself, cpu_is_the_wrong_side, cpu_part
from app.engine.issue.triage import triage

# pytorch/pytorch#18948, as posted (the CPU result is wrong; the .cuda() line is the reference).
CONV_18948 = """import torch
import torch.nn.functional as F

x = torch.Tensor([[[[0., 2., 2.],
                    [0., 0., 1.],
                    [2., 0., 0.]]]])
w = torch.Tensor([[[[1., 1., 0.],
                    [1., 0., 3.],
                    [0., 3., 1.]]]])

x1 = x[:,:,:,2:] # Using only the last column from x, containing [2,1,0]
w1 = w[:,:,:,2:] # Using only the last column from w, containing [0,3,1]
#The result should be ((2*0) + (1*3) + (0*1)) = 3

print(F.conv2d(x1, w1, None, padding=0, stride=1)) # tensor([[[[1.]]]]) WRONG!!!!
print(F.conv2d(x1.cuda(), w1.cuda(), None, padding=0, stride=1)) # tensor([[[[3.]]]], device='cuda:0') as expected
"""
TITLE_18948 = "Wrong results in a very basic convolution on CPU (results are correct on GPU)!"


def test_asserts_and_assert_calls_make_a_repro_self_checking():
    assert checks_itself("import torch\nx = torch.ones(2)\nassert torch.allclose(x, x * 1)\n")
    assert checks_itself("import torch\ntorch.testing.assert_close(torch.ones(2), torch.zeros(2))\n")
    assert checks_itself("import numpy as np\nnp.testing.assert_allclose(1, 2)\n")
    assert checks_itself("if bad:\n    raise RuntimeError('mismatch')\n")
    assert not checks_itself("import torch\nprint(torch.ones(2))\n")
    assert not checks_itself("this is not python")


def test_the_cpu_part_drops_cuda_lines_and_what_only_they_feed():
    source = "import torch\nx = torch.ones(3)\ny = x.cuda() * 2\nprint(x.sum())\nprint(y)\nz = torch.zeros(2, device='cuda')\n"
    kept = cpu_part(source)
    assert kept is not None
    assert [ast.unparse(s) for s in ast.parse(kept).body] == ["import torch", "x = torch.ones(3)", "print(x.sum())"]


def test_the_cpu_part_of_18948_keeps_the_cpu_convolution():
    kept = cpu_part(CONV_18948)
    assert "F.conv2d(x1, w1, None, padding=0, stride=1)" in kept and "cuda" not in kept


def test_no_cpu_part_without_cuda_or_without_torch_work_left():
    assert cpu_part("import torch\nprint(torch.ones(2))\n") is None
    assert cpu_part("import torch\nx = torch.ones(2).cuda()\nprint(x)\n") is None


def test_who_the_report_blames():
    assert cpu_is_the_wrong_side(TITLE_18948)
    assert not cpu_is_the_wrong_side("torch.bmm returns zeros on CUDA 11.1; the CPU result is correct")
    assert not cpu_is_the_wrong_side("cosine_similarity gives NaN on GPU")


def issue(title: str, body: str = "") -> dict:
    return {"title": title, "body": body, "state": "open", "labels": [], "user": {"login": "a"}}


def repro(source: str) -> Repro:
    return Repro(source=source, author="a", url="u", created_at="t", by_original_poster=True)


def test_triage_runs_the_cpu_part_of_a_cpu_bug_instead_of_asking_for_a_gpu():
    decision = triage(issue(TITLE_18948), repro(CONV_18948))
    assert decision.decision == "actionable" and not decision.needs_cuda
    assert decision.cpu_source is not None and "cuda" not in decision.cpu_source


def test_triage_still_sends_a_cuda_bug_to_a_gpu():
    source = "import torch\na = torch.randn(2, 3, 4).cuda()\nprint(torch.bmm(a, a.transpose(1, 2)))\n"
    decision = triage(issue("bmm gives zeros on CUDA"), repro(source))
    assert decision.needs_cuda and decision.cpu_source is None


def test_the_platform_a_report_comes_from():
    from app.engine.issue.repro_facts import reported_platform

    # pytorch/pytorch#154127: a Windows traceback (the snippet compiles fine on Linux).
    assert reported_platform(r"File [~\AppData\Local\anaconda3\envs\FU_TAML\Lib\site-packages\torch\_dynamo") == "windows"
    assert reported_platform("OS: Microsoft Windows 11 Pro") == "windows"
    assert reported_platform("OS: macOS 14.2 (arm64)") == "macos"
    assert reported_platform("OS: Ubuntu 22.04.4 LTS (x86_64)\nPython platform: Linux-6.5") is None


def test_a_report_from_another_architecture_is_named_unless_it_names_this_one_too():
    from app.engine.issue.repro_facts import reported_platform

    # pytorch/pytorch#167309: a Jetson wheel on aarch64; `import torch` passing on x86_64 says nothing.
    jetson = "torch-2.8.0-cp310-cp310-linux_aarch64.whl\nOS: Ubuntu 22.04.5 LTS (aarch64)\nPython platform: Linux-5.15-tegra"
    assert reported_platform(jetson, machine="x86_64") == "linux-aarch64"
    assert reported_platform(jetson, machine="aarch64") is None
    assert reported_platform(jetson) is None  # the worker's machine unknown: nothing to compare with
    assert reported_platform("fails on aarch64 and on x86_64 alike", machine="x86_64") is None
    assert reported_platform("OS: Ubuntu 22.04 (x86_64)", machine="AMD64") is None
