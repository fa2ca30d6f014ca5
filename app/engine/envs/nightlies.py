"""Nightly builds as a range: one wheel per day between two builds, named by their date.

PyTorch publishes one nightly a day on its nightly index, versioned `X.Y.0.devYYYYMMDD`
(`2.14.0.dev20260305+cpu`): the development version of the *next* release, so in PEP 440
order every nightly cut from main after the 2.13 branch point sorts between `2.13.0` and
`2.14.0` (`2.13.0 < 2.14.0.dev20260305 < 2.14.0`). That order is what places nightlies
between two releases, or between a release and a nightly, without reading any git history.
A nightly's `torch.version.git_version` is a commit of the `nightly` branch whose subject names
the main commit it was cut from (`2026-03-05 nightly release (<sha>)`, what PyTorch's
`tools/nightly.py` reads): `source_of_subject` returns that commit.

A day may have several wheels (cpu, cu126, ...): `daily` keeps the one this worker prefers
(`app.torch_releases.preference`), and only those it may run (`usable_on`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from packaging.version import InvalidVersion, Version

from app.engine.envs.index import Wheel
from app.torch_releases import preference, usable_on, variant_of

NIGHTLY_SUBJECT = re.compile(r"nightly release \(([0-9a-f]{40})\)")


@dataclass(frozen=True)
class Nightly:
    """One day's nightly: its wheel and the date it is known by."""

    date: str  # 2026-03-05
    version: str  # 2.14.0.dev20260305+cpu
    filename: str
    url: str

    @property
    def label(self) -> str:
        """How people name it: `nightly 2026-03-05`."""
        return f"nightly {self.date}"

    @property
    def wheel(self) -> Wheel:
        return Wheel(self.filename, self.url, self.version)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Nightly:
        return cls(str(data["date"]), str(data["version"]), str(data["filename"]), str(data["url"]))

    @classmethod
    def of(cls, wheel: Wheel) -> Nightly:
        day = wheel.dev_date or ""
        return cls(f"{day[:4]}-{day[4:6]}-{day[6:]}", wheel.version, wheel.filename, wheel.url)


def public(version: str) -> Version | None:
    """The PEP 440 version without its local tag (`2.14.0.dev20260305`), None when not one."""
    try:
        return Version(version.split("+", 1)[0])
    except InvalidVersion:
        return None


def daily(wheels: list[Wheel], *, gpu: bool = False) -> list[Nightly]:
    """One nightly per day (the variant this worker prefers among those it may run), oldest first."""
    best: dict[str, Wheel] = {}
    for wheel in wheels:
        variant = variant_of(wheel.version)
        if not wheel.dev_date or not usable_on(variant, gpu=gpu):
            continue
        held = best.get(wheel.dev_date)
        if held is None or preference(variant, gpu=gpu) < preference(variant_of(held.version), gpu=gpu):
            best[wheel.dev_date] = wheel
    return [Nightly.of(best[day]) for day in sorted(best)]


def between(nightlies: list[Nightly], older: str, newer: str) -> list[Nightly]:
    """The nightlies strictly after the build `older` and before the build `newer` (torch
    versions: releases `2.13.0`, nightlies `2.14.0.dev20260305`, local tags ignored), oldest
    first. Empty when either version cannot be read or they are not in order."""
    low, high = public(older), public(newer)
    if low is None or high is None or not low < high:
        return []
    return [n for n in nightlies if (v := public(n.version)) is not None and low < v < high]


def source_of_subject(subject: str) -> str | None:
    """The main-branch commit a `nightly` branch commit's subject names, or None."""
    found = NIGHTLY_SUBJECT.search(subject or "")
    return found.group(1) if found else None


__all__ = ["Nightly", "between", "daily", "public", "source_of_subject"]
