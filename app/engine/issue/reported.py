"""The failure a report describes: read from every place people put it.

`reported_error(*texts, title=...)` returns a `ReportedError` or None. Per text, in order:

1. a crash, with the signals it may die of: a segfault (`Segmentation fault`, `SIGSEGV`, `core
   dumped`: kind `segfault`), or (kind `crash`) an abort (`Aborted`, `terminate called after
   throwing`), a floating point exception, a bus error, an illegal instruction, or glibc's heap
   checks (`free(): invalid pointer`, `double free or corruption`: an abort, or a segfault or
   bus error when the corruption goes unnoticed); or a hang (`hangs`, `deadlock`);
2. the last exception of a traceback: fenced, quoted, inside `<details>`, pasted bare, or
   IPython's form (`RuntimeError    Traceback (most recent call last)` ... `RuntimeError: msg`;
   terminal colour codes removed); or one the repro names in a comment line
   (`# RuntimeError: ... INTERNAL ASSERT FAILED ...` under the call);
3. an exception named in prose with its message (`result: RuntimeError: ...`);
4. `INTERNAL ASSERT FAILED at "file.cpp":N` in prose (PyTorch's internal asserts are
   `RuntimeError`s; they match by that phrase and the source file, not by line numbers);
5. an exit code the report gives on purpose ("exits with code 1", "exit status 3").

Failing all texts and the title (below), a message the repro quotes without its class, as a
comment under its last call (`res.sum().backward()` then `# Subtraction, the - operator, with a
bool tensor is not supported...`): an `exception` with no class, matched by its message.

Then, when no text names one, an exception class named in the title alone
("BackendCompilerFailed when compiling ...") is the reported class, with no message.

A traceback also gives `line`: the user's own statement the error surfaced at (the last frame
outside site-packages), so a generic error seen at another statement is not taken as the same.

Pure text work: nothing runs.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from app.engine.issue import loose
from app.engine.issue.python_names import parse_python

Json = dict[str, Any]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXCEPTION_LINE = re.compile(
    r"^\s*((?:[A-Za-z_][\w]*\.)*(?:_?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Unsupported|Failure)|"
    r"Unsupported|InternalTorchDynamoError|BackendCompilerFailed))(?::[ \t]*(.*))?$",
    re.MULTILINE,
)
_IPYTHON_HEADER = re.compile(r"^\s*(?P<name>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Failed|Unsupported))"
                             r"\s{2,}Traceback \(most recent call last\)", re.MULTILINE)
_SEGFAULT = re.compile(r"segmentation fault|segfault|sigsegv|core dumped", re.IGNORECASE)
_NAMED_SEGFAULT = re.compile(r"segmentation fault|segfault|sigsegv", re.IGNORECASE)
# Crashes other than a segfault, and the signals each may die of (checked before `_SEGFAULT`,
# whose "core dumped" ends "Aborted (core dumped)" and "Floating point exception (core dumped)").
_CRASHES = (
    (re.compile(r"floating point exception|\bSIGFPE\b", re.I), ("SIGFPE",)),
    (re.compile(r"free\(\): invalid|double free or corruption|corrupted (?:size|double-linked|top size)|"
                r"malloc\(\): (?:corrupted|invalid|memory corruption)|munmap_chunk\(\): invalid|malloc_consolidate\(\)",
                re.I), ("SIGABRT", "SIGSEGV", "SIGBUS")),
    (re.compile(r"^\s*Aborted\b|\bAborted \(core dumped\)|terminate called after throwing|\bSIGABRT\b", re.M),
     ("SIGABRT",)),
    (re.compile(r"\bbus error\b|\bSIGBUS\b", re.I), ("SIGBUS",)),
    (re.compile(r"illegal instruction|\bSIGILL\b", re.I), ("SIGILL",)),
)
_HANG = re.compile(r"\b(?:hangs?|hanging|hung|deadlocks?|deadlocked|stuck|freezes?|never (?:returns|finishes))\b", re.IGNORECASE)
_INTERNAL_ASSERT = re.compile(r"INTERNAL ASSERT FAILED(?: at \"?(?P<file>[^\s\":]+)\"?(?::\d+)?)?[^\n]*")
_EXIT_CODE = re.compile(r"\b(?:exit(?:s|ed)?|returns?|terminates?)\s+(?:with\s+)?(?:an?\s+)?(?:exit\s+)?"
                        r"(?:code|status)\s*(?:of\s+)?[:=]?\s*`?(?P<code>-?\d{1,3})\b", re.IGNORECASE)
_TITLE_CLASS = re.compile(r"\b(?P<name>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure)|BackendCompilerFailed|Unsupported)\b")
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+')
_LIBRARY = re.compile(r"site-packages|dist-packages|/lib/python\d|[\\/]torch[\\/]|<frozen |\\Lib\\")
_TRACEBACK = "Traceback (most recent call last)"


@dataclass(frozen=True)
class ReportedError:
    kind: str  # "exception", "segfault", "crash", "hang" or "exit"
    exception: str = ""  # "" for a message quoted without its class
    message: str = ""
    line: str = ""  # the user's statement the reported traceback ends at ("" when not shown)
    exit_code: int | None = None  # kind "exit": the code the report says the script gives
    signals: tuple[str, ...] = ()  # kind "crash": the signals it may die of ("SIGABRT", "SIGFPE")

    @property
    def expect(self) -> str:
        """The `--expect` form the reproduce engine matches on ("Class: message")."""
        if self.kind == "exit":
            return f"exit code {self.exit_code}"
        if self.kind == "crash":
            return f"crash ({', '.join(self.signals)})"
        if self.kind != "exception":
            return self.kind
        if not self.exception:
            return self.message
        return f"{self.exception}: {self.message}" if self.message else self.exception

    def to_dict(self) -> Json:
        data = asdict(self)
        if not data["line"]:
            del data["line"]
        if data["exit_code"] is None:
            del data["exit_code"]
        if data["signals"]:
            data["signals"] = list(self.signals)
        else:
            del data["signals"]
        return data | {"expect": self.expect}

    @classmethod
    def from_dict(cls, data: Json) -> ReportedError:
        """From `to_dict()` (`expect` is derived)."""
        found = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        if "signals" in found:
            found["signals"] = tuple(found["signals"] or ())
        return cls(**found)


def last_exception(text: str) -> ReportedError | None:
    """The last `Class: message` line of `text` (a traceback's final line), with the user's
    statement the traceback ends at."""
    text = _ANSI.sub("", text)
    matches = list(_EXCEPTION_LINE.finditer(text))
    if not matches:
        header = list(_IPYTHON_HEADER.finditer(text))
        return ReportedError("exception", header[-1].group("name")) if header else None
    last = matches[-1]
    return ReportedError("exception", last.group(1), (last.group(2) or "").strip(), user_line(text[:last.start()]))


def user_line(traceback: str) -> str:
    """The code shown under the last frame that is not library code (site-packages, torch)."""
    lines = traceback.splitlines()
    found = ""
    for i, text in enumerate(lines):
        frame = _FRAME.match(text)
        if frame and not _LIBRARY.search(frame.group("path")) and i + 1 < len(lines):
            code = lines[i + 1].strip()
            found = code if code and not _FRAME.match(lines[i + 1]) else found
    return found


_COMMENTED_ERROR = re.compile(r"^\s*#\s*(?:raises\s*:?\s*|error\s*:\s*|output\s*:\s*)?(?P<line>(?:[A-Za-z_]\w*\.)*[A-Z]\w*"
                              r"(?:Error|Exception|Failure)\s*:.*)$", re.MULTILINE | re.IGNORECASE)


def _from_blocks(text: str) -> ReportedError | None:
    """The last exception of the first traceback or output block; failing those, an error the
    code names in a comment (`res = f(x)  # RuntimeError: ...` on its own line)."""
    from app.engine.issue.markdown import code_blocks, is_python_block  # (markdown re-exports this module)

    commented = None
    for block in code_blocks(loose.plain_text(text)):
        if _TRACEBACK in block.text or not is_python_block(block):
            found = last_exception(block.text)
            if found:
                return found
        elif commented is None and (named := list(_COMMENTED_ERROR.finditer(block.text))):
            commented = last_exception(named[-1].group("line"))
    return commented


def _crash(text: str) -> ReportedError | None:
    """The crash `text` describes: its signals (kind `crash`), or a plain segfault."""
    signals = [signal for pattern, names in _CRASHES if pattern.search(text) for signal in names]
    if signals and _NAMED_SEGFAULT.search(text):
        signals.append("SIGSEGV")
    if signals:
        return ReportedError("crash", signals=tuple(dict.fromkeys(signals)))
    return ReportedError("segfault") if _SEGFAULT.search(text) else None


def _one_text(text: str) -> ReportedError | None:
    text = _ANSI.sub("", text)
    if crash := _crash(text):
        return crash
    if found := _from_blocks(text):
        return found
    bare = loose.traceback_tail(text)
    if bare and (found := last_exception(bare)):
        return found
    if _HANG.search(text):
        return ReportedError("hang")
    prose = "\n".join(line for line in loose.plain_text(text).splitlines() if not line.startswith(("    ", "\t")))
    assert_failed = _INTERNAL_ASSERT.search(prose)
    found = last_exception(prose)
    if found and not (assert_failed and "INTERNAL ASSERT FAILED" not in found.message):
        return found
    if assert_failed:
        return ReportedError("exception", "RuntimeError", assert_failed.group(0).strip().rstrip("`'\"."))
    named = loose.errors_in_prose(prose)
    if named:
        return ReportedError("exception", named[-1][0], named[-1][1])
    code = _EXIT_CODE.search(prose)
    if code and int(code.group("code")) != 0:
        return ReportedError("exit", exit_code=int(code.group("code")))
    return None


def reported_error(*texts: str | None, title: str | None = None) -> ReportedError | None:
    """The error the reporter saw, from the first text that names one; failing that, an
    exception class the title names; failing that, a message a repro quotes in a comment
    under its last call."""
    for text in filter(None, texts):
        if found := _one_text(text):
            return found
    named = _TITLE_CLASS.search(_ANSI.sub("", title or ""))
    if named:
        return ReportedError("exception", named.group("name"))
    for text in filter(None, texts):
        if found := _quoted_message(text):
            return found
    return None


# An error message, not a remark or a printed value: PyTorch's messages say what is wrong.
_ERROR_CUE = re.compile(r"\b(?:not supported|unsupported|must(?: not| be)?|invalid|cannot|can't|unable to|error|failed|"
                        r"not implemented|out of (?:range|bounds)|mismatch|does not match|no attribute|is not defined|"
                        r"illegal|expected .{1,60}\bbut (?:got|found|received))\b", re.I)
_NOT_A_MESSAGE = re.compile(r"^\W*(?:output|outputs|prints?|printed|returns?|result|gives?|got|expected|should|correct|"
                            r"works?|ok|todo|note|this|here|see|->|=>)\b|tensor\(|^\W*$", re.I)
_QUOTED_MIN = 20  # characters: shorter comments are remarks, not a message to match


def _quoted_message(text: str) -> ReportedError | None:
    """A message the last python block quotes without its class: the comment lines after its
    last statement, or that statement's own trailing comment."""
    from app.engine.issue.markdown import code_blocks, is_python_block  # (markdown re-exports this module)

    blocks = [b for b in code_blocks(loose.plain_text(text)) if is_python_block(b)]
    for block in reversed(blocks):
        comment = _trailing_comment(block.text)
        if comment and len(comment) >= _QUOTED_MIN and _ERROR_CUE.search(comment) and not _NOT_A_MESSAGE.search(comment):
            return ReportedError("exception", "", comment)
    return None


def _trailing_comment(code: str) -> str:
    lines = [line.rstrip() for line in code.splitlines() if line.strip()]
    tail: list[str] = []
    while lines and lines[-1].lstrip().startswith("#"):
        tail.insert(0, lines.pop().lstrip().lstrip("#").strip())
    if not tail and lines and (inline := _INLINE_COMMENT.match(lines[-1])) and parse_python(inline.group("code").strip()):
        tail = [inline.group("comment").strip()]
    return " ".join(part for part in tail if part)


_INLINE_COMMENT = re.compile(r"^(?P<code>.*?\S)\s+#\s*(?P<comment>\S.*)$")


_VERSION = re.compile(r"(?:PyTorch version|torch(?:\s*version)?|torch==|torch\.__version__\W*)\s*:?\s*"
                      r"v?(?P<version>\d+\.\d+\.\d+)", re.IGNORECASE)


def reported_version(text: str | None) -> str | None:
    """`2.1.0` from "PyTorch version: 2.1.0+cu121", "torch==2.1.0", "torch 2.1.0"."""
    found = _VERSION.search(text or "")
    return found.group("version") if found else None


__all__ = ["ReportedError", "last_exception", "reported_error", "reported_version", "user_line"]
