"""Where a fuzz bug's test goes: the test file that covers the operation (seed 000, step 1).

The repository's test files (`test/` and `tests/` trees, `test_*.py`) are scored by how often
they name the program's operations (each operation weighs by its rank in the program), with a
bonus when the file's name names one, and, for a program that compiles, when the file is a
compiler's (`inductor`, `dynamo`, `compile`). A compiler bug goes first to the file the
repository keeps for its fuzzer's compiler bugs, when it has one (`is_fuzz_repro_file`: PyTorch
keeps TorchFuzz's eager/compile divergences in a `TestFuzzerCompileIssues` file). Otherwise the
best file wins; with no match, a PyTorch
checkout gets `test/inductor/test_torchinductor.py` (compiling programs) or
`test/test_ops.py`, any other repository a new `tests/test_fuzz_repros.py`. Files are read
without following symlinks (the tree is untrusted).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

_COMPILER_WORDS = ("inductor", "dynamo", "compile")
_MAX_BYTES = 2 << 20
PYTORCH_DEFAULTS = ("test/inductor/test_torchinductor.py", "test/test_ops.py")
NEW_FILE = "tests/test_fuzz_repros.py"


@dataclass(frozen=True)
class Placement:
    path: str
    exists: bool
    reason: str


def test_files(root: Path) -> list[str]:
    """Repo-relative test modules under `test/` or `tests/`, regular files only."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", "test", "tests"], cwd=root,
                            capture_output=True, text=True)
    names = [n for n in listed.stdout.split("\0") if n] if listed.returncode == 0 else [
        str(p.relative_to(root)) for top in ("test", "tests") for p in (root / top).rglob("*.py")]
    out = []
    for name in sorted(set(names)):
        path = root / name
        if Path(name).name.startswith("test_") and name.endswith(".py") and not path.is_symlink() \
                and path.is_file() and not any(p.is_symlink() for p in path.parents if root in p.parents):
            out.append(name)
    return out


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


def is_fuzz_repro_file(path: Path) -> bool:
    """A test file the repository keeps for its fuzzer's compiler bugs: `fuzz` in its name, and
    its text about the fuzzer's eager-vs-compiled findings (PyTorch's "Fuzzer-discovered
    eager/compile divergence test cases", `TestFuzzerCompileIssues`)."""
    if "fuzz" not in path.name.lower() or path.stat().st_size > _MAX_BYTES:
        return False
    text = path.read_text(errors="replace").lower()
    return "fuzz" in text and "compile" in text


def choose_test_file(root: Path, ops: tuple[str, ...], *, compiles: bool, style: str,
                     configured: str = "") -> Placement:
    if configured:
        return Placement(configured, (root / configured).is_file(), "configured in .github/scrub.yml")
    files = test_files(root)
    if compiles:
        home = next((name for name in files if is_fuzz_repro_file(root / name)), None)
        if home:
            return Placement(home, True, "the repository's file of fuzzer-found compiler bugs")
    best: tuple[float, str] | None = None
    for name in files:
        path = root / name
        if path.stat().st_size > _MAX_BYTES:
            continue
        value = score(path.read_text(errors="replace"), name, ops, compiles)
        if value > 0 and (best is None or value > best[0]):
            best = (value, name)
    if best:
        named = ", ".join(ops[:3])
        return Placement(best[1], True, f"the test file that covers {named} most")
    if style == "pytorch":
        for default in PYTORCH_DEFAULTS[0 if compiles else 1:]:
            if (root / default).is_file():
                return Placement(default, True, "PyTorch's default file for this kind of program")
        return Placement("test/test_fuzz_repros.py", False, "no test file names the operations")
    return Placement(NEW_FILE, (root / NEW_FILE).is_file(), "no test file names the operations")
