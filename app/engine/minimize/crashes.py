"""Crashes that are one failure though their signal differs.

A heap corruption ends in a segfault or in an abort from glibc's heap checks, depending on the
heap's layout: a real report (pytorch/pytorch#143485, `mkldnn_rnn_layer`) segfaults 4 of 4
times in a fresh interpreter and aborts with `free(): invalid pointer` in 8 of 12 fork-server
children. A minimizer that asked for the same signal number could not even start on it.
"""

from __future__ import annotations

import re
from signal import SIGABRT, SIGBUS, SIGSEGV

MEMORY = "memory"  # a crash of the memory-corruption family: see `crash_family`
_HEAP_CHECK = re.compile(r"free\(\): invalid|double free or corruption|malloc\(\): |munmap_chunk\(\): invalid|"
                         r"corrupted size vs\. prev_size|malloc_consolidate\(\)|realloc\(\): invalid")


def crash_family(signal: int, text: str) -> str:
    """`MEMORY` for a segfault, a bus error, or an abort from glibc's heap checks
    (`free(): invalid pointer`); else "" (a signal that means only itself)."""
    if signal in (SIGSEGV, SIGBUS) or (signal == SIGABRT and _HEAP_CHECK.search(text)):
        return MEMORY
    return ""
