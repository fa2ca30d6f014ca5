"""The lock (`constraints.txt`) matches `pyproject.toml`: every requirement is pinned, and the pin
satisfies it. A dependency added or bumped without `scripts/refresh-lock` fails here, so a fresh
clone never installs something nobody tested."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def _pins(text: str) -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"not an exact pin: {line!r}"
        key = canonicalize_name(name)
        assert key not in pins, f"{name} pinned twice"
        pins[key] = Version(version)
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project.get("optional-dependencies", {})
    return [Requirement(r) for r in [*project["dependencies"], *extras.get("dev", []), *extras.get("runner", [])]]


def test_every_requirement_is_pinned_and_the_pin_satisfies_it():
    pins = _pins((ROOT / "constraints.txt").read_text())
    problems = []
    for requirement in _requirements():
        pin = pins.get(canonicalize_name(requirement.name))
        if pin is None:
            problems.append(f"{requirement} is not in constraints.txt")
        elif not requirement.specifier.contains(pin, prereleases=True):
            problems.append(f"{requirement} is pinned at {pin}")
    assert not problems, "run scripts/refresh-lock:\n" + "\n".join(problems)


def test_torch_is_pinned_to_the_release_ci_installs():
    ci = (ROOT / ".ci" / "run").read_text()
    pinned = _pins((ROOT / "constraints.txt").read_text())[canonicalize_name("torch")]
    assert f"TORCH_VERSION={pinned}" in ci  # no local tag (+cpu): the pin must fit any build of it


def test_pins_reject_what_is_not_a_pin():
    import pytest

    with pytest.raises(AssertionError):
        _pins("fastapi>=0.110\n")
    with pytest.raises(AssertionError):
        _pins("a==1\nA==2\n")
