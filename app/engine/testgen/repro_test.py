"""Turn a failure into a minimal reproduction test marked as an expected failure.

Two sources, one output shape (`GeneratedTest`), deterministic text for deterministic input:
- a failing test id (pytest node id or unittest id): `node_repro_test` writes
  `tests/scrub/test_<name>_repro.py`, which runs that one test ALONE in a fresh interpreter
  (fixtures, parametrization and unittest classes keep working untouched) and asserts it
  passes, marked `xfail(strict=True)` / `@unittest.expectedFailure`;
- a Python repro (a bug report's script): `source_repro_test` wraps it (minimized first when a
  `minimize` callable is given) in a test function taking `device`.

Device-aware (seed 000): a test may run on several devices while only one fails. Every
device gets its own case; only the failing devices are marked expected-failure, the others
must pass, and an accelerator's case is skipped where that device is absent, so the file is
green on every CI machine until the bug is fixed (then the strict marker turns it red: XPASS).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.engine.git.tree import is_regular_file
from app.engine.testgen.text import docstring_safe

Style = Literal["pytest", "unittest"]
DEVICES = ("cuda", "xpu", "mps", "cpu")
TEST_DIR = "tests/scrub"

_DEVICE_NAMES = "|".join(DEVICES)
_DEVICE_IN_NODE = re.compile(rf"(?:(?<=[\[_\-])|^)({_DEVICE_NAMES})(?::\d+)?(?=[\]_\-]|$)")
_DEVICE_SUFFIX = re.compile(rf"[_\-\[]?({_DEVICE_NAMES})(:\d+)?\]?$")


@dataclass(frozen=True)
class GeneratedTest:
    path: str  # repo-relative path of the new file
    source: str
    node_ids: tuple[str, ...]  # what to hand pytest to run it
    style: Style
    failing_devices: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)


def slug(text: str, limit: int = 48) -> str:
    """A lowercase identifier fragment: `TestNN::test_conv[cuda]` -> `conv_cuda`."""
    name = text.split("::")[-1] if "::" in text else text.split(".")[-1]
    cleaned = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    cleaned = re.sub(r"^test_?", "", cleaned)
    return cleaned[:limit].rstrip("_") or "failure"


def to_node_id(test: str, root: Path | None = None) -> str:
    """A pytest node id for a test id from a CI log.

    Pytest ids are kept. A unittest id `pkg.test_mod.TestCls.test_fn` becomes
    `pkg/test_mod.py::TestCls::test_fn`; with `root`, the module file is looked up there (and
    under `test/` or `tests/`, where PyTorch-style suites put their modules).
    """
    if "::" in test or test.endswith(".py"):
        return test
    parts = test.split(".")
    split = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts) - 1)
    module, rest = parts[:split], parts[split:]
    if not module:
        return test
    path = "/".join(module) + ".py"
    if root is not None:
        for prefix in ("", "test/", "tests/"):
            if is_regular_file(root, prefix + path):
                path = prefix + path
                break
    return "::".join([path, *rest])


def device_of(node_id: str) -> str | None:
    """The device a test id names (`test_add_cuda`, `test_add[cuda:0]`), or None."""
    name = node_id.split("::")[-1]
    found = _DEVICE_IN_NODE.findall(name)
    return found[-1] if found else None


def sibling_node(node_id: str, device: str) -> str:
    """The same test on another device: `...::test_add_cuda` -> `...::test_add_cpu`."""
    head, sep, name = node_id.rpartition("::")
    current = device_of(node_id)
    if current is None:
        return node_id
    index = name.rfind(current)
    return f"{head}{sep}{name[:index]}{device}{name[index + len(current):].replace(':0', '', 1)}"


DEVICE_GUARD = """\
def _device_available(device):
    if device == "cpu":
        return True
    try:
        import torch
    except ImportError:
        return False
    backend = torch.backends.mps if device == "mps" else getattr(torch, device, None)
    return bool(backend is not None and backend.is_available())
"""

RUN_ALONE = """\
def _run_alone(node_id):
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", node_id]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
"""


def _docstring(title: str, lines: list[str]) -> str:
    body = "\n".join(docstring_safe(line.replace('"""', "'''")) for line in lines)
    return f'"""{title}\n\n{body}\n"""\n'


def _repro_path(name: str, kind: str, directory: str) -> str:
    return f"{directory}/test_{name}_{kind}.py"


def _root_expr(path: str) -> str:
    depth = len(Path(path).parent.parts)
    return f"Path(__file__).resolve().parents[{depth}]" if depth else "Path(__file__).resolve().parent"


def node_repro_test(
    node_id: str,
    *,
    reason: str,
    failing_devices: tuple[str, ...] | None = None,
    other_devices: tuple[str, ...] = (),
    style: Style = "pytest",
    directory: str = TEST_DIR,
) -> GeneratedTest:
    """A test that runs `node_id` alone and expects it to fail (only on `failing_devices`).

    `other_devices`: devices the same test also runs on that pass (their sibling ids are
    derived with `sibling_node`); they are run too and must pass.
    """
    device = device_of(node_id)
    failing = failing_devices or ((device,) if device else ())
    cases = {d: sibling_node(node_id, d) for d in (*failing, *other_devices)} if device else {"": node_id}
    name = slug(_DEVICE_SUFFIX.sub("", node_id.split("::")[-1]) or node_id)
    path = _repro_path(name, "repro", directory)
    doc = _docstring(
        "Reproduction of a CI failure, generated by Scrubbot.",
        [
            f"Failing test: {node_id}",
            f"Failure: {reason}",
            f"Run the original alone: python -m pytest {node_id}",
            "",
            "The original test runs alone in a fresh interpreter. The case of each failing device is",
            "an expected failure (strict): once the bug is fixed it XPASSes and fails the suite, and",
            "this file can be deleted.",
        ],
    )
    imports = (
        "import subprocess\nimport sys\nimport unittest\nfrom pathlib import Path\n"
        if style == "unittest"
        else "import subprocess\nimport sys\nfrom pathlib import Path\n\nimport pytest\n"
    )
    blocks = [
        doc + imports,
        f"ROOT = {_root_expr(path)}\nREASON = {reason[:300]!r}\n",
        *([DEVICE_GUARD] if set(cases) - {"", "cpu"} else []),
        RUN_ALONE,
    ]
    body = _unittest_cases(name, cases, failing) if style == "unittest" else _pytest_cases(name, cases, failing)
    nodes = (path,)
    return GeneratedTest(path, "\n\n".join([*blocks, body]), nodes, style, tuple(failing))


def _pytest_marks(device: str, failing: tuple[str, ...]) -> list[str]:
    marks = []
    if device in failing or not device:
        marks.append("pytest.mark.xfail(strict=True, reason=REASON)")
    if device and device != "cpu":
        marks.append(f'pytest.mark.skipif(not _device_available({device!r}), reason="needs {device}")')
    return marks


def _param(value: str, case_id: str, marks: list[str]) -> str:
    """One `pytest.param(...)` entry of a parametrize list, one mark per line."""
    if not marks:
        return f"        pytest.param({value!r}, id={case_id!r}),\n"
    lines = "".join(f"                {mark},\n" for mark in marks)
    return f"        pytest.param(\n            {value!r},\n            marks=[\n{lines}            ],\n" \
           f"            id={case_id!r},\n        ),\n"


def _pytest_cases(name: str, cases: dict[str, str], failing: tuple[str, ...]) -> str:
    check = (
        "    result = _run_alone(node_id)\n"
        "    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]\n"
    )
    if len(cases) == 1:
        (device, node), = cases.items()
        marks = "".join(f"@{m}\n" for m in _pytest_marks(device, failing))
        return f"{marks}def test_{name}_repro():\n    node_id = {node!r}\n{check}"
    params = []
    for device, node in cases.items():
        params.append(_param(node, device, _pytest_marks(device, failing)))
    return (
        '@pytest.mark.parametrize(\n    "node_id",\n    [\n'
        + "".join(params)
        + f"    ],\n)\ndef test_{name}_repro(node_id):\n{check}"
    )


def _unittest_cases(name: str, cases: dict[str, str], failing: tuple[str, ...]) -> str:
    klass = "Test" + "".join(part.capitalize() for part in name.split("_") if part) + "Repro"
    out = [f"class {klass}(unittest.TestCase):\n"]
    for device, node in cases.items():
        if device and device != "cpu":
            out.append(f'    @unittest.skipUnless(_device_available({device!r}), "needs {device}")\n')
        if device in failing or not device:
            out.append("    @unittest.expectedFailure\n")
        out.append(
            f"    def test_{device or 'repro'}(self):\n"
            f"        result = _run_alone({node!r})\n"
            "        self.assertEqual(result.returncode, 0, result.stdout[-4000:])\n\n"
        )
    out[-1] = out[-1].rstrip("\n") + "\n"
    out.append('\n\nif __name__ == "__main__":\n    unittest.main()\n')
    return "".join(out)


def prepare_repro_body(source: str) -> str:
    """The repro as a function body over `device`: `if __name__ == "__main__":` blocks are
    unwrapped, a top-level `device = ...` / `DEVICE = ...` constant is dropped (the test's
    parameter replaces it)."""
    tree = ast.parse(source)
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test):
            body.extend(node.body)
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in ("device", "DEVICE")
        ):
            continue
        else:
            body.append(node)
    text = ast.unparse(ast.Module(body=body, type_ignores=[])) if body else "pass"
    if re.search(r"\bDEVICE\b", text):
        text = "DEVICE = device\n" + text
    return text


def source_repro_test(
    source: str,
    name: str,
    *,
    reason: str,
    devices: tuple[str, ...] = ("cpu",),
    failing_devices: tuple[str, ...] = ("cpu",),
    minimize: Callable[[str], str] | None = None,
    directory: str = TEST_DIR,
) -> GeneratedTest:
    """A pytest file running the (minimized) repro once per device; failing devices xfail."""
    notes: list[str] = []
    if minimize is not None:
        smaller = minimize(source)
        notes.append(f"minimized {len(source.splitlines())} -> {len(smaller.splitlines())} lines")
        source = smaller
    body = prepare_repro_body(source)
    indented = "".join(f"    {line}\n" if line.strip() else "\n" for line in body.splitlines())
    name = slug(name)
    path = _repro_path(name, "repro", directory)
    doc = _docstring(
        "Reproduction of a reported failure, generated by Scrubbot.",
        [f"Failure: {reason}", f"Fails on: {', '.join(failing_devices)}; passes on the other devices."],
    )
    cases = {d: d for d in devices}
    params = []
    for device in devices:
        params.append(_param(device, device, _pytest_marks(device, failing_devices)))
    text = (
        doc
        + "import pytest\n\n"
        + f"REASON = {reason[:300]!r}\n\n\n"
        + (DEVICE_GUARD + "\n\n" if set(cases) - {"cpu"} else "")
        + f"def _repro(device):\n{indented}\n\n"
        + '@pytest.mark.parametrize(\n    "device",\n    [\n'
        + "".join(params)
        + f"    ],\n)\ndef test_{name}_repro(device):\n    _repro(device)\n"
    )
    return GeneratedTest(path, text, (path,), "pytest", tuple(failing_devices), notes)


_XFAIL_MARKS = (
    (re.compile(r"^[ @]*pytest\.mark\.xfail\(strict=True, reason=REASON\),?\n", re.MULTILINE), ""),
    (re.compile(r"^    @unittest\.expectedFailure\n", re.MULTILINE), ""),
    (re.compile(r"\n *marks=\[\n *\],"), ""),  # a marks list left empty
)


def without_expected_failure(source: str) -> str:
    """A generated test with its expected-failure markers removed (for the fix commit)."""
    for pattern, replacement in _XFAIL_MARKS:
        source = pattern.sub(replacement, source)
    return source
