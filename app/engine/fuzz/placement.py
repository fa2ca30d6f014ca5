"""Where a fuzz bug's test goes: the test file that covers the operation (seed 000, step 1).

The repository's test files (`test/` and `tests/` trees, `test_*.py`) are scored by how often
they name the program's operations (each operation weighs by its rank in the program), with a
bonus when the file's name names one, and, for a program that compiles, when the file is a
compiler's (`inductor`, `dynamo`, `compile`). A compiler bug goes first to the file the
repository keeps for its fuzzer's compiler bugs, when it has one (`is_fuzz_repro_file`: PyTorch
keeps TorchFuzz's eager/compile divergences in a `TestFuzzerCompileIssues` file). Otherwise the
best file wins; with no match, a PyTorch
checkout gets `test/inductor/test_torchinductor.py` (compiling programs) or
`test/test_ops.py`, any other repository a new `tests/test_fuzz_repros.py`. Files are listed,
checked and read through the checkout's door (`app.engine.git.tree.Checkout`): a file reached
through a link, anywhere in its path, is not a file here (the tree is untrusted).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from app.engine.git.tree import Checkout

_COMPILER_WORDS = ("inductor", "dynamo", "compile")
_MAX_BYTES = 2 << 20
PYTORCH_DEFAULTS = ("test/inductor/test_torchinductor.py", "test/test_ops.py")
NEW_FILE = "tests/test_fuzz_repros.py"


@dataclass(frozen=True)
class Placement:
    path: str
    exists: bool
    reason: str


def test_files(root: Checkout | Path) -> list[str]:
    """Repo-relative test modules under `test/` or `tests/`, regular files only."""
    checkout = Checkout.of(root)
    listed = subprocess.run(["git", "ls-files", "-z", "--", "test", "tests"], cwd=checkout,
                            capture_output=True, text=True)
    names = [n for n in listed.stdout.split("\0") if n] if listed.returncode == 0 else [
        name for top in ("test", "tests") for name in checkout.files(top, suffix=".py")]
    return [name for name in sorted(set(names))
            if PurePosixPath(name).name.startswith("test_") and name.endswith(".py") and checkout.is_file(name)]


def score(text: str, name: str, ops: tuple[str, ...], compiles: bool) -> float:
    total = 0.0
    for rank, op in enumerate(ops[:5]):
        weight = 1.0 / (rank + 1)
        total += weight * len(re.findall(rf"\b{re.escape(op)}\b", text))
        if op in Path(name).stem:
            total += 10 * weight
    if total and compiles and any(word in name for word in _COMPILER_WORDS):
        total *= 3
    return total


def is_fuzz_repro_file(root: Checkout | Path, name: str) -> bool:
    """A test file the repository keeps for its fuzzer's compiler bugs: `fuzz` in its name, and
    its text about the fuzzer's eager-vs-compiled findings (PyTorch's "Fuzzer-discovered
    eager/compile divergence test cases", `TestFuzzerCompileIssues`). Read through the door."""
    root = Checkout.of(root)
    size = root.size(name)
    if "fuzz" not in name.rsplit("/", 1)[-1].lower() or size is None or size > _MAX_BYTES:
        return False
    text = root.read_text(name).lower()
    return "fuzz" in text and "compile" in text


def choose_test_file(root: Checkout | Path, ops: tuple[str, ...], *, compiles: bool, style: str,
                     configured: str = "") -> Placement:
    root = Checkout.of(root)
    if configured:
        return Placement(configured, root.is_file(configured), "configured in .github/scrub.yml")
    files = test_files(root)
    if compiles:
        home = next((name for name in files if is_fuzz_repro_file(root, name)), None)
        if home:
            return Placement(home, True, "the repository's file of fuzzer-found compiler bugs")
    best: tuple[float, str] | None = None
    for name in files:
        size = root.size(name)
        if size is None or size > _MAX_BYTES:
            continue
        value = score(root.read_text(name), name, ops, compiles)
        if value > 0 and (best is None or value > best[0]):
            best = (value, name)
    if best:
        named = ", ".join(ops[:3])
        return Placement(best[1], True, f"the test file that covers {named} most")
    if style == "pytorch":
        for default in PYTORCH_DEFAULTS[0 if compiles else 1:]:
            if root.is_file(default):
                return Placement(default, True, "PyTorch's default file for this kind of program")
        return Placement("test/test_fuzz_repros.py", False, "no test file names the operations")
    return Placement(NEW_FILE, root.is_file(NEW_FILE), "no test file names the operations")
