"""What a failing fuzzed program says: where it failed, whether that is a torch bug, which
operators failed, and which devices this worker can run it on.

A TorchFuzz program (`tools/experimental/torchfuzz/codegen.py`'s templates) defines
`foo(arg0, ...)` from the generated operators, builds its inputs (`torch.rand`, `as_strided`:
boilerplate), runs it eagerly (`out_eager = foo(...)`, `.sum().backward()`), compiles it
(`compiled_foo = torch.compile(foo, ...)`), runs that, and compares. The outermost frame of
the traceback inside the program names the top-level statement that failed, so:

- `eager`: the program failed before anything was compiled. TorchFuzz exists to find
  eager-vs-compiled bugs; an eager failure with a user-facing error (a float used as an index,
  a shape mismatch, a dtype the op does not take) is an INVALID PROGRAM (a generator bug), not
  a torch bug; an eager failure with an internal assert, a signal or "please report a bug" is
  a torch bug all the same;
- `compiled`: eager ran, the compiled program failed: a torch bug (a compiler crash);
- `compare`: both ran and the comparison failed: a torch bug (a wrong result).

"Torch not compiled with CUDA enabled" and its kin mean the worker lacks the device: no bug,
and the program is run on the devices the worker has instead (`plan_devices`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass

from app.engine.fuzz.program import operations
from app.engine.verdict.signature import parse_traceback, traceback_frames

_DEVICE_MISSING = ("Torch not compiled with CUDA enabled", "Found no NVIDIA driver", "No CUDA GPUs are available",
                   "CUDA driver initialization failed", "no kernel image is available", "Torch not compiled with")
_INTERNAL = ("INTERNAL ASSERT FAILED", "please report a bug", "Please report a bug", "InductorError",
             "BackendCompilerFailed", "Internal error", "Segmentation fault", "illegal memory access",
             "device-side assert")
_USAGE = ("TypeError", "IndexError", "ValueError", "NotImplementedError", "RuntimeError")
_COMPARE = re.compile(r"\b(assert|allclose|assert_close|assertEqual|sys\.exit|exit|raise)\b")
ACCELERATORS = ("cuda", "xpu", "mps", "hpu", "rocm")


@dataclass(frozen=True)
class Triage:
    phase: str  # eager | compiled | compare | unknown
    verdict: str  # torch-bug | invalid-program | device-unavailable
    reason: str
    failing_line: str = ""  # the program's statement that raised (innermost frame in the program)
    operators: tuple[str, ...] = ()  # the failing operators first, then the rest of the program's own

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def is_bug(self) -> bool:
        return self.verdict == "torch-bug"


def _program_lines(output: str, program_file: str) -> list[int]:
    """Line numbers of the traceback's frames inside the program, outermost first."""
    return [f.line for f in traceback_frames(output) if f.path.endswith("/" + program_file) or f.path == program_file]


def _top_statement(tree: ast.Module, line: int) -> tuple[int, ast.stmt] | None:
    for index, node in enumerate(tree.body):
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            return index, node
    return None


def _flatten_main(tree: ast.Module) -> list[ast.stmt]:
    """Top-level statements, with an `if __name__ == "__main__":` block's body in its place."""
    out: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            out.extend(node.body)
        else:
            out.append(node)
    return out


def phase_of(program: str, line: int | None) -> str:
    """eager / compiled / compare for the top-level statement at `line` (None: unknown)."""
    if line is None:
        return "unknown"
    statements = _flatten_main(ast.parse(program))
    found = next((n for n in statements if n.lineno <= line <= (n.end_lineno or n.lineno)), None)
    if found is None:
        return "unknown"
    compile_at = next((n.lineno for n in statements if re.search(r"\bcompile\s*\(", ast.unparse(n))), None)
    if compile_at is None or found.lineno < compile_at:
        return "eager"
    return "compare" if _COMPARE.search(ast.unparse(found)) else "compiled"


def _function_body(program: str, name: str = "foo") -> str:
    for node in ast.walk(ast.parse(program)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return "\n".join(ast.unparse(stmt) for stmt in node.body)
    return ""


def failing_operators(program: str, inner_line: int | None) -> tuple[str, ...]:
    """Operators of the failing statement first, then those of the program's own function
    (`foo`): never the input boilerplate (`rand`, `as_strided`, `size`) that frames it."""
    lines = program.splitlines()
    first: list[str] = []
    if inner_line and 0 < inner_line <= len(lines):
        try:
            first = operations(lines[inner_line - 1].strip())
        except SyntaxError:
            first = []
    body = _function_body(program)
    rest = operations(body) if body else operations(program)
    return tuple(dict.fromkeys([*first, *rest]))


def triage(program: str, output: str, program_file: str = "repro.py") -> Triage:
    """Read a failing run of `program` (its output, the file name it ran as)."""
    signature = parse_traceback(output)
    tail = [line for line in output.strip().splitlines() if line.strip()]
    error = f"{signature.exception}: {signature.message}" if signature else (tail[-1] if tail else "no output")
    frames = _program_lines(output, program_file)
    outer, inner = (frames[0], frames[-1]) if frames else (None, None)
    phase = phase_of(program, outer)
    if phase == "unknown":  # no traceback into the program: TorchFuzz's own progress lines tell
        phase = "compare" if "Compile Success" in output else "compiled" if "Eager Success" in output else "unknown"
    lines = program.splitlines()
    failing = lines[inner - 1].strip() if inner and 0 < inner <= len(lines) else ""
    ops = failing_operators(program, inner if phase != "compare" else None)
    if any(text in output for text in _DEVICE_MISSING):
        return Triage(phase, "device-unavailable", f"this worker cannot run the program's device: {error}",
                      failing, ops)
    internal = any(text in output for text in _INTERNAL) or (signature is None and "Traceback" not in output)
    exception = (signature.exception.rsplit(".", 1)[-1] if signature else "")
    if phase == "eager" and not internal and exception in _USAGE:
        return Triage(phase, "invalid-program", f"the generated program is invalid in eager mode ({error}): a "
                      "generator bug of the fuzzer, not a torch bug; no test is filed", failing, ops)
    where = {"eager": "in eager mode", "compiled": "in the compiled program (eager ran)",
             "compare": "compiled and eager results differ", "unknown": "where the traceback does not say"}[phase]
    return Triage(phase, "torch-bug", f"{error} {where}".strip(), failing, ops)


def plan_devices(configured: tuple[str, ...], program_device: str | None, *, gpu: bool) -> tuple[list[str], dict]:
    """(devices to run the program on here, {device: why not}) for a worker with or without a GPU.
    A program that names no device runs once ([""])."""
    if program_device is None:
        return [""], {}
    wanted = list(dict.fromkeys([*configured, program_device]))
    here = [d for d in wanted if gpu or d not in ACCELERATORS]
    skipped = {d: "this worker has no GPU (route the run to a repro-gpu worker)" for d in wanted if d not in here}
    return here, skipped
