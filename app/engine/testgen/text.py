"""Untrusted words in a generated file's comments and docstrings stay words.

A generated test quotes things a repository or a CI log chose: the fuzzer's command from
`.github/scrub.yml`, an error message, a test id, a repository's name. In a `#` comment a line
break ends the comment and the rest becomes code; in a docstring `\"\"\"` ends the string. So:

- `one_line(text)`: every control character and every line or paragraph separator (what
  Python or an editor may take as the end of a line: `\\n`, `\\r`, `\\x0b`, `\\x0c`, `\\x1c`..`\\x1f`,
  `\\x85`, U+2028, U+2029) becomes a space;
- `comment_lines(lines)`: `# line\\n` per line, each made one line;
- `docstring_safe(text)`: safe between triple double quotes (backslashes doubled; quotes that
  could close the string escaped); line breaks are kept, other control characters become spaces.
"""

from __future__ import annotations

from collections.abc import Iterable


def _is_break(char: str) -> bool:
    return not char.isprintable() and char not in " "


def one_line(text: str) -> str:
    """`text` with every control character and line separator replaced by a space."""
    return "".join(" " if _is_break(c) else c for c in str(text))


def comment_lines(lines: Iterable[str]) -> str:
    """A `#` comment of one line per item; nothing in an item can end its comment line."""
    return "".join(f"# {one_line(line)}\n" for line in lines)


def docstring_safe(text: str) -> str:
    """`text` as it can sit inside a `\"\"\"...\"\"\"` docstring without ending it or escaping."""
    kept = "".join(c if c == "\n" or not _is_break(c) else " " for c in str(text))
    escaped = kept.replace("\\", "\\\\")
    if '""' in escaped:  # quotes that could close the docstring: all escaped
        return escaped.replace('"', '\\"')
    return escaped[:-1] + '\\"' if escaped.endswith('"') else escaped  # one that could touch its end
