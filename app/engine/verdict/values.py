"""Wrong results printed without an assert: the values a report states, and what a run printed.

Many correctness reports have no `assert`: the script prints a value and the prose says
"prints `tensor([nan, 1.])` but expected `tensor([0., 1.])`", or gives "Output:" and
"Expected output:" blocks, or shows under "Observed:" a check the script prints (`any NaN:
True`) with no expected value (its negation is then the expected one, and only the printed
line with that label is read). `stated_values(text)` finds such a pair (`StatedValues`); the run's
printed output is then compared with both (`compare`): the numbers of a stated value must
appear, in order and contiguous, among the numbers printed (relative tolerance 1e-3, absolute
1e-5 unless either number is written with an exponent: `4.2484e-18` is not `0.`; nan equals
nan; `True`/`False` count as 1/0). When the output shows the stated wrong
value and not the expected one, the bug is there; the expected one and not the wrong one, it
is gone; anything else says nothing.

Pure text work: nothing runs.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import asdict, dataclass
from typing import Any

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)(?![\w.])|\bTrue\b|\bFalse\b",
                     re.IGNORECASE)
_NOISE = re.compile(r"dtype=torch\.\w+|device='[^']*'|grad_fn=<\w+>|requires_grad=\w+|torch\.(?:float|int|bfloat)\d+")
_ACTUAL_CUE = (r"\b(?:prints?|printed|outputs?|returns?|returned|gives?|gave|got|get|yields?|results? (?:is|in)|is)"
               r"\s*:?\s*")
_EXPECTED_CUE = (r"\s*[,;]?\s*(?:but|while|whereas|instead of|when)\s+(?:it\s+|the\s+)?(?:expected(?: result| output| value)?"
                 r"(?: is| was| to be)?|should (?:be|print|return|give)|(?:the )?correct (?:result|value|output) is)\s*:?\s*")
_STOP = re.compile(r"\s*(?:[;\n]|,?\s*\b(?:but|while|whereas|instead|when|got|actual|received)\b|\.\s|\.$|,\s+(?=[a-z]))", re.I)
_LABELLED = re.compile(r"^\W{0,6}(?P<label>expected(?: output| result| value)?|actual(?: output| result| value)?|"
                       r"observed(?: output| result| behaviou?r)?|(?:current |my )?output|result|got)[ \t]*[:=][ \t]*"
                       r"(?P<rest>.*)$", re.IGNORECASE | re.MULTILINE)
# A check the script prints about itself, as the report shows it: `any NaN: True`, `match = False`.
_CHECK_LINE = re.compile(r"^\s*(?P<label>[^\n:=]{2,60}?\s*[:=])\s*(?P<value>True|False)\s*$", re.MULTILINE)
REL_TOL, ABS_TOL = 1e-3, 1e-5


@dataclass(frozen=True)
class StatedValues:
    actual: str  # what the report says the code prints (the wrong value)
    expected: str  # what it should print
    label: str = ""  # when set, only the printed lines that start with it are read (`any NaN:`)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.label:
            del data["label"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StatedValues:
        return cls(str(data.get("actual", "")), str(data.get("expected", "")), str(data.get("label", "")))


class Number(float):
    """A number as written: `scientific` when it carries an exponent (`4.2484e-18`), which
    states its own precision however small it is."""

    scientific: bool = False

    def __new__(cls, value: float, scientific: bool = False) -> Number:
        number = super().__new__(cls, value)
        number.scientific = scientific
        return number


def numbers(text: str) -> list[float]:
    """The numbers in `text` in order (nan and inf included, `True`/`False` as 1/0); dtype and
    device annotations are not values. Each is a `Number` (a float that knows its notation)."""
    found: list[float] = []
    for token in _NUMBER.findall(_NOISE.sub(" ", text or "")):
        lowered = token.lower()
        value = 1.0 if lowered == "true" else 0.0 if lowered == "false" else float(lowered)
        found.append(Number(value, "e" in lowered and lowered not in ("true", "false")))
    return found


def _close(a: float, b: float) -> bool:
    """Equal within the tolerance; the absolute one only between numbers printed in fixed
    notation (where it stands for the digits a print drops), never against an exponent."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    exact = getattr(a, "scientific", False) or getattr(b, "scientific", False)
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0 if exact else ABS_TOL)


def shows(printed: list[float], stated: list[float]) -> bool:
    """`stated` appears in `printed` as a contiguous run (within the tolerance)."""
    if not stated or len(stated) > len(printed):
        return False
    return any(all(_close(printed[i + j], value) for j, value in enumerate(stated))
               for i in range(len(printed) - len(stated) + 1))


def _distinct(values: StatedValues) -> bool:
    actual, expected = numbers(values.actual), numbers(values.expected)
    return bool(actual) and bool(expected) and not (len(actual) == len(expected) and all(map(_close, actual, expected)))


def stated_values(text: str | None, title: str = "") -> StatedValues | None:
    """The wrong value and the expected one a report states, or None (both needed, with numbers
    or booleans in each, and different). An observed check line counts only when its label
    shares a word with the `title` (`any NaN:` for "... returns NaN ..."): an observed block
    prints other flags too (`is_contiguous: True`) that are not the bug."""
    text = text or ""
    for cue in re.finditer(_ACTUAL_CUE, text, re.IGNORECASE):  # "prints X but expected Y"
        actual, at = _value_at(text, cue.end())
        then = re.match(_EXPECTED_CUE, text[at:], re.IGNORECASE)
        if actual and then:
            values = StatedValues(actual, _value_at(text, at + then.end())[0])
            if _distinct(values):
                return values
    for cue in re.finditer(r"\bexpected\s*:?\s*", text, re.IGNORECASE):  # "expected Y, got X"
        expected, at = _value_at(text, cue.end())
        then = re.match(r"\s*[,;]?\s*(?:but\s+)?(?:got|actual|received)\s*:?\s*", text[at:], re.IGNORECASE)
        if expected and then:
            values = StatedValues(_value_at(text, at + then.end())[0], expected)
            if _distinct(values):
                return values
    labelled: dict[str, str] = {}
    prose = _PYTHON_BLOCK.sub("\n", text)  # `actual = f(x)` in the script is code, not a stated value
    for found in _LABELLED.finditer(prose):
        side = "expected" if found.group("label").lower().startswith("expected") else "actual"
        value = found.group("rest").strip() or _next_block(prose, found.end()) or _next_line(prose, found.end())
        labelled.setdefault(side, value)
    if len(labelled) == 2:
        values = StatedValues(labelled["actual"], labelled["expected"])
        if _distinct(values):
            return values
    return _observed_check(labelled.get("actual", ""), title)


_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")


def _observed_check(observed: str, title: str) -> StatedValues | None:
    """The report's observed output shows a check the script prints (`any NaN: True`) about
    what the title reports, and states no expected value: the wrong value is the one shown,
    the expected its negation, and only the printed line with that label is read."""
    checks = [found for found in _CHECK_LINE.finditer(observed)
              if set(_WORD.findall(found.group("label").lower())) & set(_WORD.findall(title.lower()))]
    if len(checks) != 1:
        return None
    found = checks[0]
    value = found.group("value")
    return StatedValues(value, "False" if value == "True" else "True", found.group("label").strip())


def _value_at(text: str, at: int) -> tuple[str, int]:
    """The value starting at `at`: a backtick span, or text up to a clause boundary outside
    brackets (so `tensor([1., 2.])` keeps its commas). Returns (value, where it ends)."""
    if text[at:at + 1] == "`":
        end = text.find("`", at + 1)
        end = end if end >= 0 and "\n" not in text[at:end] else at
        return text[at + 1:end].strip(), end + 1
    depth, i = 0, at
    while i < len(text):
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth <= 0 and _STOP.match(text, i):
            break
        i += 1
    return text[at:i].strip(), i


_PYTHON_BLOCK = re.compile(r"^\s*(`{3,}|~{3,})\s*(?:python|py|python3)\b[^\n]*\n.*?\n\s*\1", re.MULTILINE | re.DOTALL | re.I)


def _next_line(text: str, at: int) -> str:
    """The next non-empty line after a label line ("actual:" then `tensor([inf])`)."""
    line = next((line.strip() for line in text[at:].split("\n") if line.strip()), "")
    return "" if line.startswith(("```", "~~~")) or _LABELLED.match(line) else line


def _next_block(text: str, at: int) -> str:
    """The fenced block right after a label line ("Expected output:" then ``` ... ```)."""
    found = re.match(r"\s*(`{3,}|~{3,})[^\n]*\n(?P<body>.*?)\n\s*\1", text[at:], re.DOTALL)
    return found.group("body") if found else ""


def literals(source: str) -> list[float]:
    """The number literals of a script (what it may print as its own reference)."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError):
        return []
    return [Number(float(node.value), "e" in (ast.get_source_segment(source, node) or "").lower())
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)]


_PLAIN = (0.0, 1.0, -1.0)  # literals every script holds (`manual_seed(0)`, `kernel_size=1`): they tell nothing


def _own_reference(stated: list[float], source_literals: list[float]) -> bool:
    """Every number of a stated value is a literal of the script: printing it proves nothing
    (`expected = torch.tensor([6.7e307]); print(expected)`). A value made only of 0, 1 and -1
    (a boolean, a count) is no such reference: those literals are in almost every script."""
    if all(value in _PLAIN for value in stated):
        return False
    return bool(stated) and all(any(_close(value, literal) for literal in source_literals) for value in stated)


def compare(output: str, values: StatedValues, source: str = "") -> str | None:
    """"actual" when the output shows the stated wrong value and not the expected one,
    "expected" for the reverse, None when it shows both, neither, or cannot tell. A stated value
    the script itself holds as a literal (`source`) does not count as shown."""
    if values.label:  # a labelled check: only the lines that print it
        output = "\n".join(line.strip()[len(values.label):] for line in (output or "").splitlines()
                           if line.strip().startswith(values.label))
    printed, own = numbers(output), literals(source)
    actual, expected = numbers(values.actual), numbers(values.expected)
    wrong = shows(printed, actual) and not _own_reference(actual, own)
    right = shows(printed, expected) and not _own_reference(expected, own)
    if wrong and not right:
        return "actual"
    if right and not wrong:
        return "expected"
    return None


__all__ = ["Number", "StatedValues", "compare", "numbers", "shows", "stated_values"]
