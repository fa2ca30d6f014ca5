"""CI failure fingerprints: the same failure in two workflow runs gets the same fingerprint.

What varies between two runs of one failure, and is masked: the shard a test landed in
(`test (default, 1, 5)` vs `(default, 3, 5)`), numbers, addresses, temp and absolute paths in
the message. What identifies it, and is kept: the repository, the job's configuration, the
test id, the exception class and the words of the message.
"""

from __future__ import annotations

import hashlib
import re

from app.engine.verdict.normalize import normalize_text

SHORT_LENGTH = 12

# "(default, 1, 5, linux.2xlarge)": the integers in a parenthesised matrix are shard numbers.
_PAREN_GROUP = re.compile(r"\(([^()]*)\)")
_SHARD_FRACTION = re.compile(r"(?<![\w.])\d+\s*/\s*\d+(?![\w.])")
_SHARD_WORDS = re.compile(r"\b(?:shard|part|chunk)[-_ ]?\d+(?:[-_ ]?(?:of|/)[-_ ]?\d+)?\b", re.IGNORECASE)
_EMPTY_PARENS = re.compile(r"\(\s*\)")


def _drop_integer_items(match: re.Match[str]) -> str:
    items = [item.strip() for item in match.group(1).split(",")]
    kept = [item for item in items if not item.isdigit()]
    return f"({', '.join(kept)})" if kept else ""


def normalize_job_name(job: str) -> str:
    """Remove shard markers: `"linux / test (default, 1, 5, linux.2xlarge)"` ->
    `"linux / test (default, linux.2xlarge)"`; `"tests 2/4"` -> `"tests"`; `"shard-3"` -> ``."""
    out = _PAREN_GROUP.sub(_drop_integer_items, job)
    out = _SHARD_FRACTION.sub("", out)
    out = _SHARD_WORDS.sub("", out)
    out = _EMPTY_PARENS.sub("", out)
    return re.sub(r"\s+", " ", out).strip(" -_/,")


def normalize_message(message: str) -> str:
    """The words of an error message with numbers, addresses and paths masked."""
    return normalize_text(message, numbers=True, paths=True)


def ci_fingerprint(repo: str, job: str, test: str, exception: str, message: str) -> str:
    """sha256 (hex, 64 chars) of repo, normalized job, test id, exception class, normalized message."""
    parts = (repo.lower(), normalize_job_name(job), test, exception, normalize_message(message))
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def short_fingerprint(fingerprint: str) -> str:
    """The first 12 hex digits: enough to tell failures apart in a branch name or a title."""
    return fingerprint[:SHORT_LENGTH]
