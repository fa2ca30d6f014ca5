"""What a fuzzer run printed: the failing program and its error (seed 000, step 0).

TorchFuzz's runner prints, for a failing seed (learned from its `runner.py`; a repository's
own fuzzer may follow the same layout):

    Running: /abs/path/to/program.py
    === Program Output (Failure) ===
    <the program's stdout, then its stderr: the traceback>
    ===============================
    === Program Source ===
    <the program>
    ======================
    Program exited with code: 1

and for a passing one `=== Program Output ===` with no source. `parse_fuzz_output` reads that
layout; a fuzzer that prints only a traceback still gives its error (with no program, the
pipeline says the fuzzer's output held none).
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from typing import Any

from app.engine.verdict.signature import parse_traceback

_FAILURE_HEADER = "=== Program Output (Failure) ==="
_SOURCE_HEADER = "=== Program Source ==="
_RULE = re.compile(r"^=+\s*$", re.MULTILINE)
_EXIT = re.compile(r"^Program exited with code:\s*(-?\d+)", re.MULTILINE)
_RUNNING = re.compile(r"^Running:\s*(\S+)", re.MULTILINE)


class FuzzOutputError(ValueError):
    """The fuzzer's output cannot be read as a failing program."""


class FuzzerDidNotRun(FuzzOutputError):
    """The fuzzer itself failed (a usage error, a missing file, an import error): the seed
    says nothing, clean or not."""


def check_ran(output: str, exit_code: int | None, script: str | None = None) -> None:
    """Raise `FuzzerDidNotRun` unless the run reached the fuzzer's work: a clean seed is an exit 0
    (a failing one prints its program; `parse_fuzz_output` reads that). TorchFuzz prints
    `Using seed: N` first; a repository's own fuzzer may print anything, but must exit 0."""
    failure_printed = _FAILURE_HEADER in output or _SOURCE_HEADER in output
    if failure_printed:
        return
    tail = "\n".join(output.strip().splitlines()[-6:])
    if exit_code != 0:
        raise FuzzerDidNotRun(f"the fuzzer did not run (exit code {exit_code}, no program printed): {tail}"[:1500])
    if script and script.endswith("torchfuzz/fuzzer.py") and "Using seed:" not in output:
        raise FuzzerDidNotRun(f"TorchFuzz exited 0 without running a seed (no 'Using seed:' line): {tail}"[:1500])


@dataclass(frozen=True)
class FuzzFinding:
    """A failing fuzzed program and how it failed."""

    program: str
    exception: str  # class name as printed (`RuntimeError`), "" when unknown
    message: str  # first line of the message
    failure_output: str  # what the program printed when it failed (tail)
    exit_code: int | None = None
    program_path: str = ""

    @property
    def error_line(self) -> str:
        return f"{self.exception}: {self.message}".strip(": ") or "the program failed"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _between(text: str, header: str) -> str | None:
    """The block after `header` up to the next `====` rule line, or None without the header."""
    start = text.find(header)
    if start < 0:
        return None
    body_start = text.find("\n", start)
    if body_start < 0:
        return ""
    rule = _RULE.search(text, body_start + 1)
    return text[body_start + 1: rule.start() if rule else len(text)]


def error_of(output: str) -> tuple[str, str]:
    """(exception class, first message line) of the last traceback in `output`, or ("", "")."""
    signature = parse_traceback(output)
    if signature is None:
        return "", ""
    return signature.exception.rsplit(".", 1)[-1], signature.message


def parse_fuzz_output(output: str) -> FuzzFinding | None:
    """The failing program in a fuzzer's output; None when the seed ran without failure.

    Raises `FuzzOutputError` when the fuzzer failed but printed no program (the pipeline
    reports that instead of guessing).
    """
    failure = _between(output, _FAILURE_HEADER)
    source = _between(output, _SOURCE_HEADER)
    exit_match = _EXIT.search(output)
    exit_code = int(exit_match.group(1)) if exit_match else None
    if failure is None and source is None:
        return None
    if not source or not source.strip():
        raise FuzzOutputError("the fuzzer reported a failure but printed no program source")
    program = source.strip("\n") + "\n"
    try:
        ast.parse(program)
    except SyntaxError as exc:
        raise FuzzOutputError(f"the program the fuzzer printed is not valid Python: {exc.msg} (line {exc.lineno})")
    exception, message = error_of(failure or "")
    running = _RUNNING.search(output)
    return FuzzFinding(program, exception, message, (failure or "")[-8000:], exit_code,
                       running.group(1) if running else "")
