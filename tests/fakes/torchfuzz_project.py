'''A PyTorch-shaped repository whose fuzzer replays programs the real TorchFuzz printed.

`make_torchfuzz_project(tmp)` builds `acme/pytorch-like` in a local bare repo:

- `tools/experimental/torchfuzz/fuzzer.py --seed N [--template T]`: a stand-in for PyTorch's
  TorchFuzz (whose code stays out of this project). It takes TorchFuzz's flags, prints
  `Using seed: N, ...`, writes the program TorchFuzz printed for that seed
  (`tests/fixtures/torchfuzz/seed_<N>_<T>.py`, copied into the repository as data) to
  `/tmp/torchfuzz/fuzz_<hash>.py`, runs it and reports in TorchFuzz's runner layout
  (`=== Program Output (Failure) ===`, `=== Program Source ===`, exit 1). A seed without a
  stored program runs a passing one (exit 0);
- `test/test_ops.py`, `test/test_nn.py`, `test/inductor/test_torchinductor.py`: PyTorch-style
  test files (`TestCase`, `instantiate_device_type_tests`) naming a few operators each, for the
  placement;
- `.github/scrub.yml`: the default TorchFuzz command, PyTorch style, ruff (PyTorch's lintrunner
  is not installed here); `ruff.toml`.

There is no `torch/` package: the programs run on the worker's real torch (a checkout of
PyTorch itself would get its own build; see tests/fakes/torch_nightlies.py).
'''

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.fakes.ci_project import PYTEST_INI, _git

PROGRAMS = Path(__file__).resolve().parents[1] / "fixtures" / "torchfuzz"

FUZZER = '''\
"""Scrubbot's test stand-in for PyTorch's TorchFuzz: replays programs TorchFuzz printed."""
import argparse
import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PASSING = "import torch\\nprint(torch.ones(2).sum().item())\\n"

parser = argparse.ArgumentParser(description="PyTorch Fuzzer - Generate and test random PyTorch operations")
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--template", default="default")
parser.add_argument("--max-depth", type=int)
args = parser.parse_args()
print(f"Using seed: {args.seed}, max_depth: {args.max_depth or 3}")
stored = os.path.join(HERE, "programs", f"seed_{args.seed}_{args.template}.py")
source = open(stored).read() if os.path.exists(stored) else PASSING
os.makedirs("/tmp/torchfuzz", exist_ok=True)
program = f"/tmp/torchfuzz/fuzz_{hashlib.md5(source.encode()).hexdigest()[:8]}.py"
with open(program, "w") as handle:
    handle.write(source)
print(f"Running: {program}")
done = subprocess.run([sys.executable, program], capture_output=True, text=True)
if done.returncode == 0:
    print("=== Program Output ===")
    print(done.stdout)
    print(done.stderr)
    sys.exit(0)
print("=== Program Output (Failure) ===")
print(done.stdout)
print(done.stderr)
print("===============================")
print("=== Program Source ===")
print(source)
print("======================")
print(f"Program exited with code: {done.returncode}")
sys.exit(1)
'''

TEST_OPS = '''\
"""Operator tests (PyTorch style)."""

import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_utils import TestCase, run_tests


class TestOps(TestCase):
    def test_gather(self, device):
        x = torch.arange(6, device=device)
        self.assertEqual(torch.gather(x, 0, torch.tensor([1, 0], device=device)), torch.tensor([1, 0]))

    def test_argsort(self, device):
        x = torch.tensor([3.0, 1.0, 2.0], device=device)
        self.assertEqual(torch.argsort(x), torch.tensor([1, 2, 0]))

    def test_stack(self, device):
        self.assertEqual(torch.stack([torch.ones(2, device=device)] * 2).shape, (2, 2))


instantiate_device_type_tests(TestOps, globals())

if __name__ == "__main__":
    run_tests()
'''

TEST_NN = '''\
"""torch.nn.functional tests (PyTorch style)."""

import torch
import torch.nn.functional as F
from torch.testing._internal.common_utils import TestCase, run_tests


class TestNN(TestCase):
    def test_silu(self):
        self.assertEqual(F.silu(torch.zeros(2)), torch.zeros(2))

    def test_layer_norm(self):
        self.assertEqual(F.layer_norm(torch.ones(2, 4), (4,)), torch.zeros(2, 4))


if __name__ == "__main__":
    run_tests()
'''

TEST_INDUCTOR = '''\
"""Inductor tests (PyTorch style)."""

import torch
from torch.testing._internal.common_utils import TestCase, run_tests


class TestInductor(TestCase):
    def test_add_compiled(self):
        self.assertEqual(torch.compile(torch.add)(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))


if __name__ == "__main__":
    run_tests()
'''

SCRUB_YML = "fuzz:\n  style: pytorch\n  lint: ruff\n"


@dataclass
class TorchFuzzProject:
    repo: str
    bare: Path
    src: Path
    head_sha: str


def make_torchfuzz_project(tmp: Path, seeds: tuple[str, ...] = ("seed_9_default",), *,
                           scrub_yml: str = SCRUB_YML) -> TorchFuzzProject:
    src, bare = tmp / "pytorch-like-src", tmp / "pytorch-like.git"
    files = {
        "tools/experimental/torchfuzz/fuzzer.py": FUZZER,
        "test/test_ops.py": TEST_OPS,
        "test/test_nn.py": TEST_NN,
        "test/inductor/test_torchinductor.py": TEST_INDUCTOR,
        ".github/scrub.yml": scrub_yml,
        "ruff.toml": "line-length = 120\n",
        "pytest.ini": PYTEST_INI,
    }
    files |= {f"tools/experimental/torchfuzz/programs/{name}.py": (PROGRAMS / f"{name}.py").read_text()
              for name in seeds}
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    _git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    _git(src, "init", "--quiet", "--initial-branch=main")
    _git(src, "add", "-A")
    _git(src, "commit", "--quiet", "-m", "a pytorch-like tree with a TorchFuzz stand-in", author="Ada Lovelace|ada@example.com")
    _git(src, "push", "--quiet", str(bare), "main")
    return TorchFuzzProject("acme/pytorch-like", bare, src, _git(src, "rev-parse", "HEAD"))
