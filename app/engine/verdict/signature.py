"""Traceback -> the error that matters: exception class + distinctive message, as a signature.

What "the error" is, as seed 001 step 5 uses it: the exception of the LAST traceback in the
output. Python prints a chain cause-first, so the last block is the outermost exception; when
that one is only a wrapper (`torch._dynamo.exc.TorchRuntimeError`, `BackendCompilerFailed`,
`InductorError`, ...), the innermost meaningful error is taken instead: the `Name: message`
the wrapper quotes, else the previous exception of the chain. A crash without a traceback is
`Fatal Python error: Segmentation fault` (faulthandler's line), or the signal alone.

The signature is `ShortClass: first message line`, normalized (addresses, temp paths, pids,
durations masked; numbers kept, since a shape is part of a bug), so two runs of one bug
produce the same string.

`match(observed, expected)` is the seed's three-way outcome: `same` (same class AND the
expected message is a substring), `different`, or `passes` (no error at all).
"""

from __future__ import annotations

import re
import signal as signal_module
from dataclasses import dataclass, field
from typing import Literal

from app.engine.verdict.normalize import normalize_text

MatchOutcome = Literal["same", "different", "passes"]

WRAPPER_CLASSES = frozenset({
    "TorchRuntimeError", "BackendCompilerFailed", "InternalTorchDynamoError", "InductorError",
    "LoweringException", "TorchDynamoException", "UncapturedHigherOrderOpError",
})
_TRACEBACK = "Traceback (most recent call last):"
_CHAIN_SEPARATORS = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
_HEADER = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::[ \t]?(?P<message>.*))?$")
_NAMED_ERROR = re.compile(r"(?:^|[\s('\"])(?P<name>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure))"
                          r"(?::\s*|\(['\"])(?P<message>[^\n]+)")
_FATAL = re.compile(r"^Fatal Python error: (?P<message>.+)$", re.MULTILINE)
_CPP_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<name>[^']+)'\s*\n\s*what\(\):\s*(?P<message>.+)")
_MESSAGE_LIMIT = 300
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_DIGIT_RUN = re.compile(r"\d+")


def short_class(name: str) -> str:
    """`torch._dynamo.exc.Unsupported` -> `Unsupported`: classes compare without their module."""
    return name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class ExceptionInfo:
    """One exception as printed: its class name (dotted as printed) and full message."""

    name: str
    message: str

    @property
    def short_name(self) -> str:
        return short_class(self.name)


@dataclass(frozen=True)
class Signature:
    """The error a run ended with, plus the whole chain of the last traceback (cause first)."""

    exception: str
    message: str
    text: str
    kind: Literal["exception", "fatal", "signal"] = "exception"
    chain: tuple[ExceptionInfo, ...] = field(default=(), compare=False)
    signal: str | None = None


@dataclass(frozen=True)
class ExpectedError:
    """What a report says the error is: a class (or None: any) and a message substring."""

    exception: str | None
    message: str


def first_line(message: str) -> str:
    line = next((part.strip() for part in message.splitlines() if part.strip()), "")
    return line[:_MESSAGE_LIMIT]


def make_signature(name: str, message: str, *, kind: str = "exception",
                   chain: tuple[ExceptionInfo, ...] = (), signal: str | None = None) -> Signature:
    short = short_class(name)
    distinctive = first_line(message)
    text = normalize_text(f"{short}: {distinctive}" if distinctive else short)
    return Signature(name, distinctive, text, kind, chain, signal)  # type: ignore[arg-type]


def signal_signature(signum: int) -> Signature:
    """For a process killed by a signal with no traceback or fatal error printed."""
    name = signal_name(signum)
    return Signature("Signal", name, f"Signal: {name}", "signal", (), name)


def signal_name(signum: int) -> str:
    try:
        return signal_module.Signals(signum).name
    except ValueError:
        return f"SIG{signum}"


def parse_chain(output: str) -> tuple[ExceptionInfo, ...]:
    """The exceptions of the last traceback chain in `output`, cause first."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.rstrip() == _TRACEBACK]
    if not starts:
        found = _exception_after(lines, 0)
        return (found,) if found else ()
    chain: list[ExceptionInfo] = []
    for index in reversed(starts):
        found = _exception_after(lines, index + 1)
        if found:
            chain.insert(0, found)
        previous = [line.strip() for line in lines[max(0, index - 3):index] if line.strip()]
        if not previous or previous[-1] not in _CHAIN_SEPARATORS:
            break
    return tuple(chain)


def _exception_after(lines: list[str], start: int) -> ExceptionInfo | None:
    """The `Name: message` header after the frames starting at `start` (message up to a blank line)."""
    for index in range(start, len(lines)):
        line = lines[index]
        if not line.strip() or line[0].isspace():
            continue
        match = _HEADER.match(line.rstrip())
        if not match or not _looks_like_exception(match.group("name")):
            continue
        body = [match.group("message") or ""]
        for follow in lines[index + 1:]:
            if not follow.strip() or follow.strip() in _CHAIN_SEPARATORS or follow.rstrip() == _TRACEBACK:
                break
            body.append(follow)
        return ExceptionInfo(match.group("name"), "\n".join(body).strip())
    return None


def _looks_like_exception(name: str) -> bool:
    short = short_class(name)
    return bool(re.search(r"(Error|Exception|Exit|Interrupt|Failed|Failure|Unsupported|Warning)$", short)) \
        or short in {"StopIteration", "GeneratorExit", "KeyboardInterrupt"}


def innermost_meaningful(chain: tuple[ExceptionInfo, ...]) -> ExceptionInfo | None:
    """The last exception, unwrapped through Dynamo/Inductor wrappers."""
    for info in reversed(chain):
        if info.short_name not in WRAPPER_CLASSES:
            return info
        quoted = _NAMED_ERROR.search(info.message)
        if quoted:
            inner = quoted.group("message").rstrip()
            if quoted.group(0).rstrip().endswith(("'", '"')) or inner.endswith(("')", '")')):
                inner = inner.rstrip(")").rstrip("'\"")
            return ExceptionInfo(quoted.group("name"), inner)
    return chain[-1] if chain else None


def parse_traceback(output: str) -> Signature | None:
    """The signature of the error `output` ends with; None when it shows no error."""
    chain = parse_chain(output)
    chosen = innermost_meaningful(chain)
    if chosen is not None:
        return make_signature(chosen.name, chosen.message, chain=chain)
    fatal = list(_FATAL.finditer(output))
    if fatal:
        return make_signature("Fatal Python error", fatal[-1].group("message"), kind="fatal")
    terminate = _CPP_TERMINATE.search(output)
    if terminate:
        return make_signature(terminate.group("name"), terminate.group("message"), kind="fatal")
    return None


@dataclass(frozen=True)
class Frame:
    """One frame of a printed traceback: file, line number and the source line shown (if any)."""

    path: str
    line: int
    code: str = ""


def traceback_frames(output: str) -> tuple[Frame, ...]:
    """The frames of the last traceback block in `output`, outermost first.

    Only the last block: in a chain that is the outermost exception's stack, which runs
    through the program's own frames down to where the error surfaced.
    """
    start = output.rfind(_TRACEBACK)
    if start < 0:
        return ()
    frames: list[Frame] = []
    for text in output[start:].splitlines()[1:]:
        found = _FRAME.match(text)
        if found:
            frames.append(Frame(found.group("path"), int(found.group("line"))))
        elif frames and text.startswith("    ") and not frames[-1].code \
                and not text.lstrip().startswith(("^", "~")):
            frames[-1] = Frame(frames[-1].path, frames[-1].line, text.strip())
        elif text and not text[0].isspace():
            break  # the exception header: the frames are over
    return tuple(frames)


def mask_digits(text: str) -> str:
    """Every digit run as `<n>`: a message that survives literals shrinking (`(32x128)` ~ `(1x2)`)."""
    return _DIGIT_RUN.sub("<n>", text)


def parse_expected(text: str) -> ExpectedError:
    """`"RuntimeError: must match the size"` -> class + substring; bare text -> substring only."""
    stripped = text.strip()
    match = _HEADER.match(stripped.splitlines()[0] if stripped else "")
    if match and match.group("message") is not None and _looks_like_exception(match.group("name")):
        return ExpectedError(short_class(match.group("name")), match.group("message").strip())
    if match and match.group("message") is None and _looks_like_exception(match.group("name")):
        return ExpectedError(short_class(match.group("name")), "")
    return ExpectedError(None, stripped)


def _squash(text: str) -> str:
    return normalize_text(text)


def match(observed: Signature | None, expected: ExpectedError | str) -> MatchOutcome:
    """`same` if the observed error (or one of its chain) has the class and the substring."""
    if isinstance(expected, str):
        expected = parse_expected(expected)
    if observed is None:
        return "passes"
    wanted = _squash(expected.message)
    candidates = [ExceptionInfo(observed.exception, observed.message), *reversed(observed.chain)]
    for info in candidates:
        class_ok = expected.exception is None or info.short_name == expected.exception
        if class_ok and wanted in _squash(info.message):
            return "same"
    if expected.exception is None:
        haystack = _squash(" ".join(filter(None, [observed.text, observed.signal or ""])))
        if wanted in haystack:
            return "same"
    return "different"
