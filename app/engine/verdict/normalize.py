"""Masking of the volatile parts of error text, shared by repro signatures and CI fingerprints.

Two runs of the same bug differ in addresses, temp paths, object ids, PIDs and timings; the
normalized text keeps the words and the structure and replaces those with placeholders.
"""

from __future__ import annotations

import re

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x<addr>"),
    (re.compile(r"\bat 0x<addr>"), "at <addr>"),
    (re.compile(r"(?:/tmp|/var/tmp|/private/var/folders)/[^\s'\":,)]+"), "<tmp>"),
    (re.compile(r"\b(?:pid|PID)[ =:]+\d+"), "pid <n>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b"), "<time>"),
]
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])")
_PATH = re.compile(r"(?:(?<=\s)|^|(?<=[\"'(]))/(?:[\w.+-]+/)+[\w.+-]+")
_SPACE = re.compile(r"\s+")


def normalize_text(text: str, *, numbers: bool = False, paths: bool = False) -> str:
    """Mask addresses, temp paths, uuids, pids and durations; optionally every number and path.

    Repro signatures keep numbers (a shape `[4, 8]` is part of the bug); CI fingerprints mask
    them too (`numbers=True`) because shard sizes and counts vary between runs.
    """
    out = text
    for pattern, replacement in _RULES:
        out = pattern.sub(replacement, out)
    if paths:
        out = _PATH.sub("<path>", out)
    if numbers:
        out = _NUMBER.sub("<n>", out)
    return _SPACE.sub(" ", out).strip()
