"""A tiny Python project in a local bare git repo, for CI-job tests.

`make_ci_project(tmp)` builds a package `calc` with a pytest suite holding:
- `tests/test_calc.py::test_add` (passes), `::test_divide_by_zero` (fails every time:
  `ZeroDivisionError`),
- `tests/test_cache.py::test_cache_refresh` (flaky: fails with probability `flake_rate`, drawn
  from the OS's entropy so every run is independent),
- `tests/test_slow.py::test_sleeps` (passes after `slow_s` seconds: for phase-limit tests),
- a CODEOWNERS file, and commits by two human authors.
Nothing here needs torch or the network.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

DETERMINISTIC_TEST = "tests/test_calc.py::test_divide_by_zero"
FLAKY_TEST = "tests/test_cache.py::test_cache_refresh"
PASSING_TEST = "tests/test_calc.py::test_add"
SLOW_TEST = "tests/test_slow.py::test_sleeps"

CALC = '''\
def add(a, b):
    return a + b


def safe_divide(a, b):
    """Division that returns inf instead of raising (it does not, yet)."""
    return a / b
'''

TEST_CALC = '''\
from calc import add, safe_divide


def test_add():
    assert add(1, 2) == 3


def test_divide_by_zero():
    assert safe_divide(1, 0) == float("inf")
'''

TEST_CACHE = '''\
import random

FLAKE_RATE = {rate!r}


def test_cache_refresh():
    stale = random.SystemRandom().random() < FLAKE_RATE
    assert not stale, "cache returned a stale entry"
'''

TEST_SLOW = '''\
import time


def test_sleeps():
    time.sleep({slow_s!r})
'''

# The worker's Python has heavy pytest plugins installed (hypothesis alone costs 0.5 s per
# start); a project that does not use them turns them off, as real projects do.
PYTEST_INI = """\
[pytest]
addopts = -p no:cacheprovider -p no:hypothesispytest -p no:benchmark -p no:anyio
"""

CODEOWNERS = """\
# default owners
*                       @acme/core
/tests/                 @acme/qa
tests/test_cache.py     @cache-keeper @acme/qa
"""


@dataclass(frozen=True)
class CIProject:
    bare: Path  # the "remote": push target and clone source
    head_sha: str
    repo: str = "acme/calc"


def _git(cwd: Path, *args: str, author: str | None = None) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    if author:
        name, email = author.split("|")
        env |= {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_ci_project(tmp: Path, *, flake_rate: float = 0.2, slow_s: float = 30.0) -> CIProject:
    """Build the project in `tmp/src`, push it to the bare repo `tmp/calc.git`."""
    src, bare = tmp / "src", tmp / "calc.git"
    (src / "calc").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / ".github").mkdir()
    _git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    _git(tmp, "init", "--quiet", "--initial-branch=main", str(src))
    files = {
        "calc/__init__.py": CALC,
        "tests/__init__.py": "",
        "tests/test_calc.py": TEST_CALC,
        ".github/CODEOWNERS": CODEOWNERS,
        "pytest.ini": PYTEST_INI,
    }
    for rel, text in files.items():
        (src / rel).write_text(text)
    _git(src, "add", ".")
    _git(src, "commit", "--quiet", "-m", "calc: add and divide", author="Ada Lovelace|ada@example.com")
    (src / "tests/test_cache.py").write_text(TEST_CACHE.format(rate=flake_rate))
    (src / "tests/test_slow.py").write_text(TEST_SLOW.format(slow_s=slow_s))
    _git(src, "add", ".")
    _git(src, "commit", "--quiet", "-m", "tests: cache refresh", author="Grace Hopper|grace@example.com")
    _git(src, "push", "--quiet", str(bare), "main")
    return CIProject(bare=bare, head_sha=_git(src, "rev-parse", "HEAD"))
