"""What a repro says about its own result, read from its code and its output.

Many repros decide for themselves whether the bug is there: an `assert`, `assert_close`, a
`sys.exit(1)` on a mismatch, a `print("BUG: ...")` / `print("OK")`. The verdict must read that
decision rather than guess from the exit code: a script may exit 1 on purpose when the bug
is *gone*, or print `BUG` and exit 0.

- `ScriptFacts.read(source)`: the checks the code makes (`self_checking`), the exit codes it
  gives on purpose (`sys.exit(1)`, `raise SystemExit(2)`, `os._exit(3)`), and the literal
  strings it prints that mean "the bug is there" or "it works".
- `says(facts, output)`: "bug", "ok" or None, from those strings in what the run printed.
- `own_check_failed(output)`: the run failed at the script's own check (its last frame in
  `repro.py` is an `assert` statement or an `assert*` call), not somewhere inside the library.

Pure: nothing runs.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from app.engine.verdict.signature import traceback_frames

_ASSERT_CALL = re.compile(r"^(?:assert\w*|assert_\w+|fail\w*)$")
_BUG_WORDS = re.compile(r"\b(?:bug|fail(?:s|ed|ure)?|mismatch(?:es)?|wrong|incorrect|reproduced|broken)\b|✗|❌", re.I)
_OK_WORDS = re.compile(r"\b(?:ok|pass(?:es|ed)?|fixed|success(?:ful)?|works?|correct|as expected)\b|✓|✅", re.I)
_NEGATED = re.compile(r"\b(?:no|not|n't|without)\s+(?:\w+\s+){0,2}?(?:bug|fail\w*|mismatch\w*|error|reproduced|wrong|"
                      r"incorrect|broken|ok|pass\w*|fixed|works?|correct|match\w*)\b", re.I)
_EXIT_CALLS = {"exit", "_exit", "quit"}
_OWN_CHECK_LINE = re.compile(r"^(?:assert\b|self\.(?:assert|fail)\w*\(|(?:[\w.]+\.)?assert\w*\(|raise\b)")


@dataclass(frozen=True)
class ScriptFacts:
    self_checking: bool = False  # an assert, an assert_* call, a raise, an exit code or a verdict print
    exit_codes: tuple[int, ...] = ()  # non-zero literal exit codes the script gives on purpose
    bug_says: tuple[str, ...] = ()  # printed literals meaning "the bug is there"
    ok_says: tuple[str, ...] = ()  # printed literals meaning "it works"

    @classmethod
    def read(cls, source: str) -> ScriptFacts:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return cls()
        checks, codes, bug, ok = False, set(), [], []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assert, ast.Raise)):
                checks = True
                if isinstance(node, ast.Raise) and (code := _exit_code_of_raise(node)) is not None:
                    codes.add(code)
            elif isinstance(node, ast.Call):
                name = _call_name(node)
                if _ASSERT_CALL.match(name):
                    checks = True
                elif name in _EXIT_CALLS and node.args and (code := _literal_int(node.args[0])) is not None:
                    codes.add(code)
                elif name == "print":
                    for text in _literal_texts(node):
                        meaning = verdict_of_text(text)
                        (bug if meaning == "bug" else ok if meaning == "ok" else []).append(text)
        codes.discard(0)
        return cls(checks or bool(codes) or bool(bug), tuple(sorted(codes)), tuple(bug), tuple(ok))


def verdict_of_text(text: str) -> str | None:
    """"bug" / "ok" for a verdict string a script prints ("BUG: mismatch", "not reproduced",
    "results do not match"): a negated bug word means ok, a negated ok word means bug."""
    stripped = text.strip()
    if not stripped or len(stripped) > 120:
        return None
    negated = _NEGATED.search(stripped)
    if negated:
        return "ok" if _BUG_WORDS.search(negated.group(0)) else "bug"
    if _BUG_WORDS.search(stripped):
        return "bug"
    return "ok" if _OK_WORDS.search(stripped) else None


def says(facts: ScriptFacts, output: str) -> str | None:
    """What the script's own verdict print says in `output`: the last one printed wins."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    for line in reversed(lines[-40:]):
        if any(text and line.startswith(text) for text in facts.bug_says):
            return "bug"
        if any(text and line.startswith(text) for text in facts.ok_says):
            return "ok"
    return None


def own_check_failed(output: str) -> bool:
    """The traceback's last frame in the repro is the script's own check (an `assert`, an
    `assert*(...)` call or a `raise`), so the script itself decided it failed."""
    frames = [f for f in traceback_frames(output or "") if f.path.endswith("repro.py")]
    return bool(frames) and bool(_OWN_CHECK_LINE.match(frames[-1].code))


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _literal_int(node: ast.AST) -> int | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, int) else None


def _exit_code_of_raise(node: ast.Raise) -> int | None:
    exc = node.exc
    if isinstance(exc, ast.Call) and _call_name(exc) == "SystemExit":
        return _literal_int(exc.args[0]) if exc.args else 0
    return None


def _literal_texts(node: ast.Call) -> list[str]:
    """The constant text at the start of the first printed argument (an f-string's leading
    part); a label before a value (`print("mismatch:", diff)`) is not a verdict."""
    if not node.args:
        return []
    arg, more = node.args[0], len(node.args) > 1
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        text = arg.value
    elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        text, more = str(arg.values[0].value), more or len(arg.values) > 1
    else:
        return []
    if not text.strip() or (more and text.rstrip().endswith((":", "="))):
        return []
    return [text]


__all__ = ["ScriptFacts", "own_check_failed", "says", "verdict_of_text"]
