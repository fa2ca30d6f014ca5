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
- `compare`: both ran and the comparison failed: a torch bug (a wrong result), unless the
  compiled function draws random numbers (`torch.randint` in TorchFuzz's index_select): eager
  and compiled then compute on different values, a generator bug.

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


_EXIT = re.compile(r"\b(?:sys\.exit|exit|quit|os\._exit)\s*\(|\bSystemExit\b")


def exit_phase(program: str) -> str:
    """Where a program that ended without a traceback stopped, from its text alone: "compare"
    when every exit it can take comes after it compiled (a minimized program no longer prints
    TorchFuzz's progress lines), else "unknown"."""
    try:
        statements = _flatten_main(ast.parse(program))
    except SyntaxError:
        return "unknown"
    compile_at = next((n.lineno for n in statements if re.search(r"\bcompile\s*\(", ast.unparse(n))), None)
    exits = [n.lineno for n in statements if _EXIT.search(ast.unparse(n))]
    return "compare" if compile_at is not None and exits and min(exits) > compile_at else "unknown"


# Random draws: inside a compiled function they differ from eager's (other RNG consumption order),
# so a compare failure of such a program is the generator's (TorchFuzz's gather.py says as much).
_RANDOM = {"rand", "randn", "randint", "randperm", "bernoulli", "multinomial", "normal", "rand_like", "randn_like",
           "randint_like"}
# Index plumbing the generator writes around an operator (gather's `x.size(0)` and
# `torch.remainder(index, size)`), never the operator under test.
_INDEX_PLUMBING = {"size", "remainder"}


def _function_bodies(program: str) -> str:
    """The bodies of the program's top-level functions (`fuzzed_program`, `foo`): its operators."""
    return "\n".join(ast.unparse(stmt) for node in ast.parse(program).body if isinstance(node, ast.FunctionDef)
                     for stmt in node.body)


def _bound_names(program: str) -> set[str]:
    """Names the program assigns at top level (`compiled_program = torch.compile(...)`): calling
    one is calling the program, not an operator."""
    return {target.id for node in ast.parse(program).body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name)}


def _called(text: str) -> set[str]:
    """Every function name `text` calls (`torch.randint(...)` -> `randint`), plumbing included."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    return {ast.unparse(n.func).rsplit(".", 1)[-1] for n in ast.walk(tree) if isinstance(n, ast.Call)}


def _ops(text: str, skip: set[str]) -> list[str]:
    try:
        return [op for op in operations(text) if op not in skip]
    except SyntaxError:
        return []


def failing_operators(program: str, inner_line: int | None, error: str = "") -> tuple[str, ...]:
    """The operators that fail, first: those of the failing statement in the program, then those
    the error names (`aten.cumsum`, `cumsum()`), then the rest of the program's own functions
    by use. Never the input boilerplate (`rand`, `as_strided`), the index plumbing (`size`,
    `remainder`) or the program's own callables (`compiled_program`)."""
    skip = _INDEX_PLUMBING | _bound_names(program)
    lines = program.splitlines()
    first: list[str] = []
    if inner_line and 0 < inner_line <= len(lines):
        first = _ops(lines[inner_line - 1].strip(), skip)
    body = _function_bodies(program)
    rest = _ops(body, skip) if body else _ops(program, skip)
    named = [op for op in rest if re.search(rf"(?<![\w.])(?:aten\.|torch\.|\.)?{re.escape(op)}\b(?:\.default)?", error)]
    return tuple(dict.fromkeys([*first, *named, *rest]))


def triage(program: str, output: str, program_file: str = "repro.py") -> Triage:
    """Read a failing run of `program` (its output, the file name it ran as)."""
    signature = parse_traceback(output)
    tail = [line for line in output.strip().splitlines() if line.strip()]
    error = f"{signature.exception}: {signature.message}" if signature else (tail[-1] if tail else "no output")
    frames = _program_lines(output, program_file)
    outer, inner = (frames[0], frames[-1]) if frames else (None, None)
    phase = phase_of(program, outer)
    if phase == "unknown":  # no traceback into the program: TorchFuzz's own progress lines tell
        said = output.lower()  # "Eager Success! ✅" (numerics template), "✅ eager success" (default)
        phase = "compare" if "compile success" in said else "compiled" if "eager success" in said else \
            exit_phase(program) if "Traceback" not in output else "unknown"
    lines = program.splitlines()
    failing = lines[inner - 1].strip() if inner and 0 < inner <= len(lines) else ""
    ops = failing_operators(program, inner if phase != "compare" else None, error)
    if any(text in output for text in _DEVICE_MISSING):
        return Triage(phase, "device-unavailable", f"this worker cannot run the program's device: {error}",
                      failing, ops)
    internal = any(text in output for text in _INTERNAL) or (signature is None and "Traceback" not in output)
    exception = (signature.exception.rsplit(".", 1)[-1] if signature else "")
    if phase == "eager" and not internal and exception in _USAGE:
        return Triage(phase, "invalid-program", f"the generated program is invalid in eager mode ({error}): a "
                      "generator bug of the fuzzer, not a torch bug; no test is filed", failing, ops)
    drawn = sorted(_RANDOM & _called(_function_bodies(program)))
    if phase == "compare" and drawn:
        return Triage(phase, "invalid-program", f"compiled and eager results differ, but the program draws random "
                      f"numbers inside the function it compiles ({', '.join(drawn)}): eager and compiled runs draw "
                      "different values, so their results differ without a torch bug: a generator bug of the "
                      "fuzzer; no test is filed", failing, ops)
    where = {"eager": "in eager mode", "compiled": "in the compiled program (eager ran)",
             "compare": "compiled and eager results differ", "unknown": "where the traceback does not say"}[phase]
    return Triage(phase, "torch-bug", f"{error} {where}{_unbacked_caveat(phase, error, output)}".strip(), failing, ops)


# An unbacked (data-dependent) size: `u0` in a size, or Dynamo's own words for a guard on one.
_UNBACKED = re.compile(r"\(u\d+\)|\bu\d+\b(?=[^\n]*\b(?:size|shape|dimension)\b)|GuardOnDataDependentSymNode|"
                       r"[Dd]ata-dependent")


def _unbacked_caveat(phase: str, error: str, output: str) -> str:
    """What PyTorch said of such failures: a compiled-only error on an unbacked size (pytorch/pytorch
    #164875, a TorchFuzz program broadcasting `u0` against `s67`) was closed as expected
    behaviour that the program causes (the fix is a `torch._check` in the program, or another
    program from the fuzzer), not as a compiler bug; a maintainer decides."""
    if phase != "compiled":
        return ""
    found = _UNBACKED.search(error) or _UNBACKED.search(output)
    if not found:
        return ""
    return (f"; caveat: it involves an unbacked (data-dependent) size ({found.group(0).strip('()')}): PyTorch has "
            "closed such compiled-only errors as expected behaviour of tracing (the program should say "
            "torch._check(...) about the size), so a maintainer should confirm it is a bug")


def plan_devices(configured: tuple[str, ...], program_device: str | None, *, gpu: bool) -> tuple[list[str], dict]:
    """(devices to run the program on here, {device: why not}) for a worker with or without a GPU.
    A program that names no device runs once ([""])."""
    if program_device is None:
        return [""], {}
    wanted = list(dict.fromkeys([*configured, program_device]))
    here = [d for d in wanted if gpu or d not in ACCELERATORS]
    skipped = {d: "this worker has no GPU (route the run to a repro-gpu worker)" for d in wanted if d not in here}
    return here, skipped
