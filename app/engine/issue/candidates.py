"""Every piece of runnable code in one post, with what the post presents it as.

A post (the issue body or a comment) may carry several pieces of code: the crashing script,
a working variant under "Expected behavior", a workaround, a `>>>` session, two lines pasted
without a fence. Each is a `Block`:

- `kind`: `fenced` (a fenced or indented block, also inside `<details>` and `>` quotes),
  `method` (a pasted `def test_...(self)` method, run inside a `unittest.TestCase`),
  `repl` (a `>>>` or IPython `In [n]:` transcript: its input lines, the printed output dropped,
  each bare expression echoed through `sys.displayhook` as the REPL did), `unfenced`
  (lines pasted as prose, `loose`) or `inline` (a single-backtick script);
- `role`: `repro`; `control` when the post presents it as the expected behaviour, a
  workaround, or a working variant for comparison (its heading or the line before it says so,
  unless that line also states the bug); `output` when it sits under an "Output" / "Result" /
  "Error" heading or label (printed output tagged ```python, not code); `why` quotes that text;
- `line`: where it starts in the post (for the report: "the block at line 12").

Pure text work: nothing runs.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from app.engine.issue import loose
from app.engine.issue.python_names import parse_python

REPRO, CONTROL, OUTPUT = "repro", "control", "output"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(?P<title>.+?)\s*#*\s*$|^\s*\*\*(?P<bold>[^*]{3,60})\*\*:?\s*$")
_CONTROL_HEADING = re.compile(r"\bexpect(?:ed|ations?)?\b|workaround|work-around|alternatives?|solution|fix\b|additional context|versions?|"
                              r"environment|system info", re.I)
_REPRO_HEADING = re.compile(r"reproduc|describe the bug|bug|repro|steps|code|example|minimal|error|to reproduce", re.I)
_CONTROL_LEAD = re.compile(
    r"\bexpected (?:behaviou?r|output|result)|\bworkaround\b|work[- ]around|\b(?:this|which|that|it) works\b|\bworks (?:fine|correctly|"
    r"as expected|well|ok)|\bworking (?:version|example|code|variant)|for comparison|as a (?:control|reference)|"
    r"\b(?:correct|expected) (?:version|output|result)|without the (?:bug|issue|problem)|\bfixed version\b|"
    r"(?:this|which) (?:passes|is fine|is correct|does not (?:crash|fail|hang))|does not (?:crash|fail|hang|reproduce)|"
    r"doesn't (?:crash|fail|hang|reproduce)|no (?:error|crash|problem|issue)s? (?:with|when|if|here)|"
    r"(?:avoid|avoids|fixes|solves) (?:the|this) (?:bug|issue|problem|error)", re.I)
_TRAILING_CONTROL = re.compile(
    r"^\W*(?:(?:it|this|that|which)\s+)?(?:is|are|works?|runs?|passes)\s+(?:well|fine|ok(?:ay)?|correctly|as expected|"
    r"normally|without (?:any )?(?:error|problem|issue)s?)\b|^\W*(?:works(?: fine| well)?|no (?:error|problem|issue)s?)\W*$",
    re.I)
# A lead-in that states the bug ("X behaves like a linear function, however Y works as expected")
# describes the repro that follows, whatever working variant it also names.
_BUG_LEAD = re.compile(r"\b(?:bug|wrong|incorrect|crash\w*|segfault\w*|fails?|failing|failed|error|hangs?|nan|behaves|"
                       r"not (?:work\w*|as expected|correct\w*)|(?:doesn't|does not|don't|do not) work|broken|unexpected\w*)\b", re.I)
_NEGATED_BUG = re.compile(r"\b(?:no|not|without|never|n't|doesn't|does not|don't|do not|didn't|did not)\s+(?:\w+\s+){0,2}?"
                         r"(?:bugs?|errors?|crash\w*|segfault\w*|fail\w*|hang\w*|nan|issues?|problems?)\b", re.I)
# A block under these headings or labels is printed output (often tagged ```python), not code.
_OUTPUT_TITLE = re.compile(r"^\W*(?:the\s+|my\s+)?(?:actual|observed|current|console|program|script|full)?\s*(?:outputs?|"
                           r"results?|logs?|stdout|stderr|prints?|printed|error(?:\s+(?:message|log|output))?s?|"
                           r"trace ?back|stack ?trace)\s*(?:\([^)]*\))?\W*$", re.I)
# Transcript prompts: `>>>` / `...` (the Python REPL) and `In [3]:` / `   ...:` (IPython).
_REPL = re.compile(r"^\s*(?:>>>|\.\.\.|In \[\d*\]:|\.\.\.+:)(?: |$)")
_PROMPT = re.compile(r"^\s*(?P<prompt>>>>|In \[\d*\]:)(?: |$)")
_CONTINUATION = re.compile(r"^\s*(?:\.\.\.|\.\.\.+:)(?: |$)")


@dataclass(frozen=True)
class Block:
    source: str
    kind: str  # fenced, repl, unfenced, inline
    role: str = REPRO
    why: str = ""  # the heading or lead-in that made it a control
    line: int = 0  # 1-based line of the post where it starts

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in self.source.splitlines() if line.strip()), "")


def repl_source(text: str) -> str | None:
    """The code of a `>>>` or IPython `In [n]:` transcript (its prompt and continuation lines),
    each bare expression echoed through `sys.displayhook` as the REPL did (so the run prints
    what the transcript shows; `import sys` goes first), or None when it has none or they do not parse together.
    IPython magics and shell escapes (`%timeit`, `!pip`) are not Python and are left out."""
    chunks: list[list[str]] = []
    for line in text.splitlines():
        if _PROMPT.match(line):
            chunks.append([_strip_prompt(line)])
        elif _CONTINUATION.match(line) and chunks:
            chunks[-1].append(_strip_prompt(line))
    code = [_echoed("\n".join(chunk).rstrip()) for chunk in chunks
            if chunk[0].strip() and not chunk[0].lstrip().startswith(("%", "!"))]
    if not code:
        return None
    source = "\n".join(code).strip("\n")
    if any(_ECHO in line for line in code):
        source = "import sys\n" + source
    return source if parse_python(source) is not None else None


def _strip_prompt(line: str) -> str:
    return re.sub(r"^\s*(?:>>>|In \[\d*\]:|\.\.\.+:|\.\.\.) ?", "", line)


def _echoed(chunk: str) -> str:
    """One transcript input: a lone expression (not a `print(...)`) is wrapped in
    `sys.displayhook(...)`, which prints its repr unless it is None, as the REPL
    did; its trailing comment is kept. Anything else is unchanged."""
    tree = parse_python(chunk)
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return chunk
    node = tree.body[0].value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
        return chunk
    segment = ast.get_source_segment(chunk, node, padded=False)
    if segment is None or "\n" in segment:
        return chunk
    line = chunk.splitlines()[node.end_lineno - 1].encode()  # ast offsets count UTF-8 bytes
    head, rest = line[:node.col_offset].decode(), line[node.end_col_offset:].decode().rstrip()
    return f"{head}{_ECHO}({segment}){rest}"


_ECHO = "sys.displayhook"


_TEST_HARNESS = "import unittest\n\n\nclass ReproTest(unittest.TestCase):\n{body}\n\nunittest.main(argv=['repro'])\n"


def method_script(text: str) -> str | None:
    """A pasted test method (`def test_x(self): ... self.assertFalse(...)`, indented as in its
    class) as a runnable script: the method inside a `unittest.TestCase`, run by `unittest.main`."""
    source = textwrap.dedent(text).strip("\n")
    tree = parse_python(source)
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    method = tree.body[0]
    if not method.name.startswith("test") or not method.args.args or method.args.args[0].arg != "self":
        return None
    return _TEST_HARNESS.format(body=textwrap.indent(source, "    "))


def _role(lines: list[str], start: int, floor: int, end: int | None = None) -> tuple[str, str]:
    """`control` when the nearest heading above `start`, the lead-in lines between the
    previous block (`floor`) and it, or the line right after it (`end`: "is well", "works
    fine") present the block as expected behaviour / a workaround / a working variant; a
    lead-in that also states the bug is the bug's description, not a control's. `output`
    when that heading or the label line right above it names printed output ("Output",
    "Result", "Error")."""
    if end is not None:
        after = next((line.strip() for line in lines[end + 1:end + 3] if line.strip()), "")
        if found := _TRAILING_CONTROL.search(after):
            return CONTROL, found.group(0).strip()
    lead = [line.strip() for line in lines[max(floor, start - 3):start] if line.strip()]
    if lead and _OUTPUT_TITLE.match(_title(lead[-1])):
        return OUTPUT, f"under '{_title(lead[-1]).strip()}'"
    for text in reversed(lead[-2:]):
        if _HEADING.match(text):
            break
        if (found := _CONTROL_LEAD.search(text)) and not _states_the_bug(text[:found.start()] + text[found.end():]):
            return CONTROL, found.group(0)
    for text in reversed(lines[:start]):
        heading = _HEADING.match(text)
        if heading:
            title = heading.group("title") or heading.group("bold") or ""
            if _OUTPUT_TITLE.match(title):
                return OUTPUT, f"under '{title.strip()}'"
            if _CONTROL_HEADING.search(title) and not _REPRO_HEADING.search(title.replace("expected", "")):
                return CONTROL, f"under '{title.strip()}'"
            return REPRO, ""
    return REPRO, ""


def _states_the_bug(text: str) -> bool:
    """The text (a lead-in without its control phrase) says something is wrong; "no error",
    "does not crash" say the opposite."""
    return bool(_BUG_LEAD.search(_NEGATED_BUG.sub(" ", text)))


def _title(text: str) -> str:
    """A heading's or bold label's text, else the line itself."""
    heading = _HEADING.match(text)
    return (heading.group("title") or heading.group("bold") or "") if heading else text


def post_blocks(body: str | None) -> list[Block]:
    """Every runnable piece of code in `body`, in order (see the module docstring)."""
    from app.engine.issue.markdown import code_blocks, is_python_block  # (markdown uses this module)

    text = loose.plain_text(body)
    lines = text.split("\n")
    found: list[Block] = []
    outside = list(lines)  # the text with every block blanked out, for unfenced code
    floor = 0
    for block in code_blocks(text):
        role, why = _role(lines, block.start, floor, block.end)
        floor = block.end + 1
        for i in range(block.start, min(block.end + 1, len(lines))):
            outside[i] = ""
        if is_python_block(block):
            found.append(Block(block.text, "fenced", role, why, block.start + 1))
        elif block.lang in ("", "python", "py", "python3") and (source := method_script(block.text)):
            found.append(Block(source, "method", role, why, block.start + 1))
        elif block.lang in ("", "python", "py", "pycon", "python3", "ipython", "text", "console") and (
                source := repl_source(block.text)):
            found.append(Block(source, "repl", role, why, block.start + 1))
    rest = "\n".join(outside)
    if source := repl_source(rest):
        at = next(i for i, line in enumerate(outside) if _REPL.match(line))
        found.append(Block(source, "repl", *_role(lines, at, 0), at + 1))
    prose = "\n".join("" if _REPL.match(line) else line for line in outside)
    for kind, sources in (("unfenced", loose.unfenced_scripts(prose)), ("inline", loose.inline_scripts(prose))):
        for source in sources:
            if any(source.strip() in other.source for other in found):
                continue
            at = _line_of(lines, source)
            found.append(Block(source, kind, *_role(lines, at, 0, _last_line(lines, source, at)), at + 1))
    return sorted(found, key=lambda b: b.line)


def _last_line(lines: list[str], source: str, at: int) -> int:
    """The line of `lines` where `source` (found starting at `at`) ends."""
    last = next((line.strip() for line in reversed(source.splitlines()) if line.strip()), "")
    return next((i for i in range(at, min(len(lines), at + 400)) if last and last in lines[i]), at)


def _line_of(lines: list[str], source: str) -> int:
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return next((i for i, line in enumerate(lines) if first and first in line), 0)


__all__ = ["CONTROL", "OUTPUT", "REPRO", "Block", "post_blocks", "repl_source"]
