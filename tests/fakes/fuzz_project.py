'''A tiny tensor library with its own fuzzer, in a local bare git repo: the fuzz job's target.

`make_fuzz_project(tmp)` builds `acme/tlib`:
- `tlib/` (plain Python, no torch): tensors on a fake device list `("cpu", "accel")` (the
  second device kind is simulated), ops `add`, `mean`, `softplus`, and `tlib.compile`, whose
  "accel" lowering of softplus is wrong;
- `tools/fuzz.py --seed N`, a fuzzer printing TorchFuzz's layout: seed 1 -> a program that
  fails on every device (`ZeroDivisionError` in `mean` of an empty tensor), seed 2 -> an
  eager-vs-compiled mismatch only on `accel` (tolerances rtol=0.05, atol=1.0), any other seed
  -> a passing program;
- tests: `tests/test_ops.py` (add, mean, softplus), `tests/test_compile.py` (compile);
- `.github/scrub.yml` (fuzz command, devices cpu + accel, ruff), `ruff.toml`, `pytest.ini`.

FIX_MEAN / FIX_SOFTPLUS are fix commands that patch the bugs (and write a fix summary);
BREAKING_FIX_MEAN fixes the fuzz test but breaks `test_mean`; NON_FIX changes a comment only.
'''

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.fakes.ci_project import PYTEST_INI, _git

TLIB_INIT = """\
from tlib.ops import DEVICES, Tensor, add, assert_close, mean, softplus, tensor
from tlib.compiler import compile

__all__ = ["DEVICES", "Tensor", "add", "assert_close", "compile", "mean", "softplus", "tensor"]
"""

TLIB_OPS = """\
import math

DEVICES = ("cpu", "accel")


class Tensor:
    def __init__(self, values, device="cpu"):
        if device not in DEVICES:
            raise RuntimeError(f"unknown device {device}")
        self.values = [float(v) for v in values]
        self.device = device


def tensor(values, device="cpu"):
    return Tensor(values, device)


def add(a, b):
    return Tensor([x + y for x, y in zip(a.values, b.values)], a.device)


def mean(t):
    return sum(t.values) / len(t.values)


def softplus(t):
    return Tensor([math.log1p(math.exp(v)) for v in t.values], t.device)


def assert_close(actual, expected, rtol, atol):
    for a, e in zip(actual.values, expected.values):
        if abs(a - e) > atol + rtol * abs(e):
            raise AssertionError(f"eager and compiled differ: {a:.3f} vs {e:.3f}")
"""

TLIB_COMPILER = """\
import math

from tlib import ops

# Device-specific lowerings of ops; the rest run as in eager mode.
LOWERINGS = {
    ("softplus", "accel"): lambda v: math.exp(v),  # fast path
}


def _lowered(name, eager):
    def run(t):
        fast = LOWERINGS.get((name, t.device))
        return ops.Tensor([fast(v) for v in t.values], t.device) if fast else eager(t)

    return run


def compile(fn):
    def compiled(*args):
        saved = ops.softplus
        ops.softplus = _lowered("softplus", saved)
        try:
            import tlib

            tlib.softplus = ops.softplus
            return fn(*args)
        finally:
            ops.softplus = saved
            tlib.softplus = saved

    return compiled
"""

FUZZER = '''\
"""A fuzzer for tlib, printing the TorchFuzz layout."""
import argparse
import os
import subprocess
import sys
import tempfile

FAILING_MEAN = """import tlib
DEVICE = "cpu"
x = tlib.tensor([1.0, 2.0], device=DEVICE)
y = tlib.add(x, x)
print("sum", sum(y.values))
empty = tlib.tensor([], device=DEVICE)
print("mean", tlib.mean(empty))
"""

MISMATCH = """import tlib
DEVICE = "accel"
x = tlib.tensor([3.0, -1.0, 2.5], device=DEVICE)


def fuzzed_program(x):
    return tlib.softplus(tlib.add(x, x))


eager = fuzzed_program(x)
compiled = tlib.compile(fuzzed_program)(x)
tlib.assert_close(compiled, eager, rtol=0.05, atol=1.0)
print("Compile Success!")
"""

PASSING = """import tlib
DEVICE = "cpu"
print(tlib.add(tlib.tensor([1.0], device=DEVICE), tlib.tensor([2.0], device=DEVICE)).values)
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, required=True)
    seed = parser.parse_args().seed
    program = {1: FAILING_MEAN, 2: MISMATCH}.get(seed, PASSING)
    path = os.path.join(tempfile.mkdtemp(), f"fuzz_{seed}.py")
    with open(path, "w") as handle:
        handle.write(program)
    print(f"Running: {path}")
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    done = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env)
    if done.returncode == 0:
        print("=== Program Output ===")
        print(done.stdout)
        return 0
    print("=== Program Output (Failure) ===")
    print(done.stdout)
    print(done.stderr)
    print("===============================")
    print("=== Program Source ===")
    print(program)
    print("======================")
    print(f"Program exited with code: {done.returncode}")
    return 1


sys.exit(main())
'''

TEST_OPS = """\
import math

import tlib


def test_add():
    assert tlib.add(tlib.tensor([1.0]), tlib.tensor([2.0])).values == [3.0]


def test_mean():
    assert tlib.mean(tlib.tensor([1.0, 3.0])) == 2.0


def test_mean_single():
    assert tlib.mean(tlib.tensor([5.0])) == 5.0


def test_softplus():
    assert math.isclose(tlib.softplus(tlib.tensor([0.0])).values[0], math.log(2))
"""

TEST_COMPILE = """\
import tlib


def test_compile_add():
    x = tlib.tensor([1.0, 2.0])
    assert tlib.compile(tlib.add)(x, x).values == [2.0, 4.0]


def test_compile_softplus_cpu():
    x = tlib.tensor([1.0, 2.0])
    tlib.assert_close(tlib.compile(tlib.softplus)(x), tlib.softplus(x), rtol=0.05, atol=1.0)
"""

SCRUB_YML = """\
fuzz:
  command: python tools/fuzz.py --seed {seed}
  devices: [cpu, accel]
"""

RUFF_TOML = 'line-length = 120\n'

SUMMARY = r"""printf '%s\n' '# Return nan for the mean of an empty tensor' '' \
  'tlib.mean divided by the length of its input, which is zero for an empty tensor.' '' \
  '## Root cause' 'No guard for an empty input.' '## Complexity' 'O(1) extra work.' \
  '## Similar operations' 'Other reductions (sum is fine).' > "$SCRUBBOT_SUMMARY_FILE" """

FIX_MEAN = ("sed -i 's|return sum(t.values) / len(t.values)|return sum(t.values) / len(t.values) "
            "if t.values else float(\"nan\")|' tlib/ops.py && " + SUMMARY)
BREAKING_FIX_MEAN = "sed -i 's|return sum(t.values) / len(t.values)|return 0.0|' tlib/ops.py"
FIX_SOFTPLUS = "sed -i '/fast path/d' tlib/compiler.py"
NON_FIX = "sed -i 's|# Device-specific lowerings|# Device lowerings|' tlib/compiler.py"


@dataclass(frozen=True)
class FuzzProject:
    bare: Path
    head_sha: str
    repo: str = "acme/tlib"


def make_fuzz_project(tmp: Path) -> FuzzProject:
    src, bare = tmp / "src", tmp / "tlib.git"
    files = {
        "tlib/__init__.py": TLIB_INIT, "tlib/ops.py": TLIB_OPS, "tlib/compiler.py": TLIB_COMPILER,
        "tools/fuzz.py": FUZZER, "tests/__init__.py": "", "tests/test_ops.py": TEST_OPS,
        "tests/test_compile.py": TEST_COMPILE, ".github/scrub.yml": SCRUB_YML, "ruff.toml": RUFF_TOML,
        "pytest.ini": PYTEST_INI,
    }
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    _git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    _git(tmp, "init", "--quiet", "--initial-branch=main", str(src))
    _git(src, "add", ".")
    _git(src, "commit", "--quiet", "-m", "tlib: ops, compiler, fuzzer", author="Ada Lovelace|ada@example.com")
    _git(src, "push", "--quiet", str(bare), "main")
    return FuzzProject(bare=bare, head_sha=_git(src, "rev-parse", "HEAD"))
