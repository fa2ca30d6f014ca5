"""CODEOWNERS: who owns a path, by GitHub's rules.

GitHub reads the first of `.github/CODEOWNERS`, `CODEOWNERS`, `docs/CODEOWNERS`. Each line is
a gitignore-style pattern followed by owners (`@user`, `@org/team`, or an email); the LAST
matching line wins, and a matching line without owners means "nobody owns this".

Pattern rules implemented (gitignore, with GitHub's deviations):
- `/a/b` is anchored at the root; a pattern with a slash in the middle (`a/b`) is too; a
  pattern without one (`*.py`, `docs/`) matches at any depth;
- `*` and `?` do not cross `/`; `**/` matches any leading directories, `/**` everything below;
- a pattern names a file or a directory (then it owns everything below); a trailing `/`
  matches directories only; `dir/*` matches the direct children of `dir` only (GitHub);
- `!negation` and `[ranges]` are not supported by GitHub CODEOWNERS: `!` lines are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from app.engine.git.tree import is_regular_file, read_text

CODEOWNERS_LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")


@dataclass(frozen=True)
class Rule:
    pattern: str
    owners: tuple[str, ...]
    regex: re.Pattern[str]


def _translate(pattern: str) -> re.Pattern[str]:
    """A gitignore-style CODEOWNERS pattern -> a regex over slash-separated relative paths."""
    directory_only = pattern.endswith("/")
    body = pattern.strip("/") if pattern.startswith("/") else pattern.rstrip("/")
    anchored = pattern.startswith("/") or "/" in body
    children_only = body.endswith("/*")
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if body.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i + 1 < len(body):
            i += 1
            out.append(re.escape(body[i]))
        else:
            out.append(re.escape(char))
        i += 1
    prefix = "" if anchored else "(?:.*/)?"
    if directory_only:
        suffix = "/.*"  # the directory's contents (a file is never a directory)
    elif children_only:
        suffix = ""
    else:
        suffix = "(?:/.*)?"  # the file itself, or everything below a directory of that name
    return re.compile(f"^{prefix}{''.join(out)}{suffix}$")


def parse_codeowners(text: str) -> list[Rule]:
    """The rules of a CODEOWNERS file, in file order (comments and `!` lines dropped)."""
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line or line.startswith("!"):
            continue
        pattern, *owners = line.split()
        rules.append(Rule(pattern, tuple(owners), _translate(pattern)))
    return rules


def owners_for(rules: list[Rule], path: str) -> tuple[str, ...]:
    """Owners of `path` (repo-relative, `/`-separated): the last matching rule's, or ()."""
    rel = path.lstrip("/")
    for rule in reversed(rules):
        if rule.regex.match(rel):
            return rule.owners
    return ()


def read_codeowners(root: Path) -> list[Rule]:
    """The rules of the CODEOWNERS file GitHub would use in checkout `root` ([] if none)."""
    for location in CODEOWNERS_LOCATIONS:
        if is_regular_file(root, location):  # a link is never read: it may point at a secret
            return parse_codeowners(read_text(root, location, limit=1 << 20))
    return []
