"""Code and errors that real reports carry outside fenced blocks.

Fenced blocks (`markdown.code_blocks`) are the easy case. Real issues also paste:

- a script after "Code:" with no fence, or inside `<details>` / `<pre>` HTML;
- a whole script in one single-backtick span (`import torch; x = ...; print(x)`);
- a traceback with no fence, or quoted with `>`;
- the error on a prose line: `result: RuntimeError: "addmm_cpu" not implemented for 'Half'`.

Everything here is pure text work: no code runs.
"""

from __future__ import annotations

import ast
import re

from app.engine.issue.python_names import parse_python, undefined_names

_HTML_LINE = re.compile(r"^\s*</?(?:details|summary|pre|code|p|br|div|blockquote)\b[^>]*>\s*$", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?(?:details|summary|pre|code|p|br|div|blockquote)\b[^>]*>", re.IGNORECASE)
_SUMMARY = re.compile(r"<summary\b[^>]*>.*?</summary>", re.IGNORECASE | re.DOTALL)
_QUOTE = re.compile(r"^[ \t]{0,3}>(?!>>)[ \t]?", re.MULTILINE)  # not a `>>>` prompt
_CODE_START = re.compile(r"^\s*(?:import [A-Za-z_]|from [A-Za-z_][\w.]* import |"
                         r"(?:[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*=\s*)?(?:torch|F|nn)\.\w)")
_INLINE_SPAN = re.compile(r"(?<!`)`([^`\n]{20,}(?:\n[^`\n]+){0,40})`(?!`)")
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&amp;": "&"}


def plain_text(markdown: str | None) -> str:
    """The text with `>` quote markers, HTML wrappers (`<details>`, `<summary>...</summary>`,
    `<pre>`, `<code>`) and their entities removed; line structure kept."""
    text = (markdown or "").replace("\r\n", "\n")
    text = _SUMMARY.sub("", text)
    text = _QUOTE.sub("", text)
    lines = ["" if _HTML_LINE.match(line) else _HTML_TAG.sub("", line) for line in text.split("\n")]
    text = "\n".join(lines)
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    return text


def _statements(tree: ast.Module) -> int:
    return sum(1 for _ in ast.walk(tree) if isinstance(_, ast.stmt))


_STANDARD_NAMES = {"torch", "F", "nn", "np", "numpy"}  # a snippet's usual missing imports: code, not output


def _trim_output(lines: list[str]) -> list[str]:
    """Drop trailing lines that are printed output, not code: a bare expression naming
    something the block never defines (`tensor([nan, nan])`), and trailing comment lines
    (a `## Heading` after an unfenced script parses as one). `F.interpolate(x)` stays: `F`
    and `torch` are imports a snippet leaves out, not output."""
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines = lines[:-1]
    while lines:
        tree = parse_python("\n".join(lines))
        last = tree.body[-1] if tree and tree.body else None
        if last is None or not isinstance(last, ast.Expr):
            break
        without = "\n".join(lines[: last.lineno - 1])
        if not set(undefined_names("\n".join(lines))) - set(undefined_names(without)) - _STANDARD_NAMES:
            break
        lines = lines[: last.lineno - 1]
        while lines and not lines[-1].strip():
            lines.pop()
    return lines


def unfenced_scripts(markdown: str | None) -> list[str]:
    """Python scripts pasted without a fence: each starts at an `import` / `from ... import`
    line or a torch statement (`x = torch.randn(3)`, `torch.exp(x)`) and runs as far as the
    lines still parse together (prose ends it); at least two statements."""
    lines = plain_text(markdown).split("\n")
    found: list[str] = []
    i = 0
    while i < len(lines):
        if not _CODE_START.match(lines[i]):
            i += 1
            continue
        best_end = None
        for end in range(i + 1, min(len(lines), i + 400) + 1):
            if lines[end - 1].strip() and parse_python(_dedent("\n".join(lines[i:end]))) is not None:
                best_end = end
        if best_end is None:
            i += 1
            continue
        block = _trim_output(_dedent("\n".join(lines[i:best_end])).split("\n"))
        tree = parse_python("\n".join(block))
        if tree is not None and _statements(tree) >= 2:
            found.append("\n".join(block))
        i = best_end
    return found


def _dedent(source: str) -> str:
    rows = [row for row in source.split("\n") if row.strip()]
    margin = min((len(row) - len(row.lstrip(" ")) for row in rows), default=0)
    return "\n".join(row[margin:] for row in source.split("\n"))


def inline_scripts(markdown: str | None) -> list[str]:
    """Whole scripts in single-backtick spans: `import torch; x = torch.ones(2); print(x @ x)`."""
    found = []
    for match in _INLINE_SPAN.finditer(plain_text(markdown)):
        source = match.group(1).strip()
        tree = parse_python(source)
        if tree is None:
            continue
        script = _statements(tree) >= 2 and any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)
        if script or (_alone_on_its_line(markdown or "", match.group(0)) and _torch_call(source)):
            found.append(source)
    return found


def _alone_on_its_line(markdown: str, span: str) -> bool:
    return any(line.strip() == span for line in plain_text(markdown).split("\n"))


def _torch_call(source: str) -> bool:
    """`torch.exp(torch.tensor([1.0]))`: one call into torch (a repro a reader runs as it is)."""
    tree = parse_python(source)
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return False
    call = tree.body[0].value
    return isinstance(call, ast.Call) and ast.unparse(call.func).startswith("torch.")


def loose_scripts(markdown: str | None) -> list[str]:
    """Scripts outside fences, longest first: unfenced pastes, then single-backtick spans."""
    return sorted(unfenced_scripts(markdown) + inline_scripts(markdown), key=len, reverse=True)


_TRACEBACK = "Traceback (most recent call last)"
_INLINE_EXCEPTION = re.compile(
    r"(?:^|(?<=[\s`'\"(:>]))(?P<name>(?:[A-Za-z_]\w*\.)*_?[A-Z]\w*(?:Error|Exception|Failure|Failed))"
    r"[ \t]*:[ \t]*(?P<message>[^\n]*)"
)


def traceback_tail(text: str) -> str | None:
    """The lines after the last unfenced `Traceback (most recent call last)` up to the
    exception line, or None."""
    plain = plain_text(text)
    at = plain.rfind(_TRACEBACK)
    return plain[at:] if at >= 0 else None


def errors_in_prose(text: str) -> list[tuple[str, str]]:
    """`(Class, message)` for every `Class: message` named anywhere in a line, in order.

    The message is cut at closing backticks; a class that is only mentioned ("a RuntimeError
    is raised") has no colon after it and is not taken."""
    found = []
    for match in _INLINE_EXCEPTION.finditer(plain_text(text)):
        message = match.group("message").strip()
        message = message.split("`")[0].strip() if match.group(0) and "`" in message else message
        found.append((match.group("name"), message))
    return found


_EXPECTED_SECTION = re.compile(r"^#+\s*expected behaviou?r\s*$(?P<body>.*?)(?=^#+\s|\Z)", re.IGNORECASE | re.MULTILINE | re.DOTALL)
_EXPECTED_RAISE = re.compile(r"\b(?:an?\s+)?(?P<name>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))\b[^.\n]{0,30}?"
                             r"\b(?:to be |should be |is )?(?:thrown|raised)\b", re.IGNORECASE)


def expected_exception(markdown: str | None) -> str | None:
    """The exception the report's "Expected behavior" section asks for ("Graceful termination
    or a RuntimeError to be thrown", as fuzzer reports say), or None."""
    section = _EXPECTED_SECTION.search(plain_text(markdown))
    found = _EXPECTED_RAISE.search(section.group("body")) if section else None
    return found.group("name") if found else None


_MISSING_ERROR = re.compile(r"\b(?:does(?:n't| not)|do(?:n't| not)|never|fails? to|without)\s+(?:raise|raising|throw|throwing|"
                            r"error(?:ing)?)\b|\binstead of (?:raising|throwing|erroring|an? (?:error|exception))\b", re.I)
_FAILURE_WORD = re.compile(r"\b(?:rais\w*|throw\w*|errors?|exceptions?|crash\w*|segfault\w*|segmentation|abort\w*|"
                           r"assert\w*|fails?|failed|hangs?|SIG[A-Z]+)\b", re.I)


def asks_for_error(title: str | None) -> bool:
    """The title reports a MISSING error ("silently wraps ... instead of raising", "does not
    raise for ..."): an error the report quotes (what sibling ops or the other code path raise)
    is then what it asks for, not the failure it saw. Not when the title names an error or a
    crash that happens ("raises INTERNAL ASSERT instead of raising a proper error")."""
    title = title or ""
    found = _MISSING_ERROR.search(title)
    return bool(found) and not _FAILURE_WORD.search(title[:found.start()])
