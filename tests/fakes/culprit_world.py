"""PyTorch's main branch in miniature, a nightly a day, two releases, and the PRs behind each commit.

`make_culprit_world(tmp, ...)` builds a bare `pytorch/pytorch` whose main branch has `per_day`
commits a day for `days` days, each landed the way PyTorch's merge bot lands a PR (title
` (#N)`, `Pull Request resolved: https://github.com/pytorch/pytorch/pull/N`). One commit
(`change_at`) changes `torch/ops.py`'s `scale` (2x -> 3x: a regression, or back: a fix); the
others touch a shipped Python file, the docs, or (`compiled`) a C++ source. The `nightly`
branch gets one commit a day, `YYYY-MM-DD nightly release (<sha>)`, naming the day's last main
commit, as PyTorch's nightly branch does.

`world.wheels(dest)` writes a PEP 503 tree: a `2.12.0.devYYYYMMDD+cpu` wheel per day (its
`git_version` the nightly branch commit, its Python as of the day's source), and releases
`2.11.0+cpu` (before the first day) and `2.12.0+cpu` (after the last): versions no real torch
installed here has, so pip never takes one for the other. `broken_day`'s wheel
requires a package no index has, so it cannot be installed. `world.seed(fake)` serves the
repository on the fake GitHub and records the PRs (`merged_pulls`: merged through GitHub, found
by `commits/{sha}/pulls`; the others only in their message, as the merge bot leaves them).

`REPRO` fails (AssertionError) where `scale` triples.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.fakes.ci_project import _git
from tests.fakes.fake_github_commits import add_merged_pull
from tests.fakes.torch_nightlies import OPS_V1, OPS_V2, _commit, fake_torch_wheel

REPO = "pytorch/pytorch"
REPRO = "import torch\n\nassert torch.scale(1) == 2, f'scale(1) is {torch.scale(1)}'\n"
REPORTED = {"kind": "exception", "exception": "AssertionError", "message": "scale(1) is 3",
            "expect": "AssertionError: scale(1) is 3"}
FIRST_PR = 2000
# Versions no real torch here has (pip would take an installed torch of the same version as done).
OLD_RELEASE, NEW_RELEASE, NIGHTLY = "2.11.0+cpu", "2.12.0+cpu", "2.12.0.dev{date}+cpu"


@dataclass
class CulpritWorld:
    bare: Path
    days: list[str]  # 2026-03-01 ...
    by_day: dict[str, list[str]]  # day -> its main commits, in order
    nightly: dict[str, str]  # day -> the nightly branch commit naming its last main commit
    pulls: dict[str, int]  # main commit -> the PR it landed
    culprit: str  # the commit that changed `scale`
    ops_at: dict[str, str]  # main commit -> torch/ops.py there
    broken_day: str | None = None
    merged: set[str] = field(default_factory=set)  # commits whose PR GitHub lists as merged by them

    @property
    def commits(self) -> list[str]:
        return [sha for day in self.days for sha in self.by_day[day]]

    def wheels(self, root: Path) -> Path:
        folder = root / "simple" / "torch"
        names = []
        first, last = self.commits[0], self.commits[-1]
        names.append(fake_torch_wheel(folder, OLD_RELEASE, first, self.ops_at[first]).name)
        for day in self.days:
            source = self.by_day[day][-1]
            version = NIGHTLY.format(date=day.replace("-", ""))
            wheel = fake_torch_wheel(folder, version, self.nightly[day], self.ops_at[source])
            if day == self.broken_day:
                _require_missing_package(wheel, version)
            names.append(wheel.name)
        names.append(fake_torch_wheel(folder, NEW_RELEASE, last, self.ops_at[last]).name)
        links = "".join(f'<a href="{n.replace("+", "%2B")}#sha256=0">{n}</a><br>\n' for n in names)
        (folder / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
        return root

    def seed(self, fake) -> None:
        fake.add_repo(REPO)
        fake.serve_git(REPO, self.bare)
        for sha in self.merged:
            add_merged_pull(fake, REPO, self.pulls[sha], sha, title=f"PR {self.pulls[sha]}")


def _require_missing_package(wheel: Path, version: str) -> None:
    """Rewrite the wheel's METADATA to require a package no index has (an install failure)."""
    info = f"torch-{version}.dist-info/METADATA"
    with zipfile.ZipFile(wheel) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members[info] = members[info] + b"Requires-Dist: scrub-missing-dependency==1.0\n"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def make_culprit_world(tmp: Path, *, days: int = 6, per_day: int = 3, change_at: tuple[int, int] = (3, 1),
                       fix: bool = False, compiled: set[tuple[int, int]] = frozenset(), broken_day: int | None = None,
                       merged_every: int = 2) -> CulpritWorld:
    """See the module docstring. `change_at`: (day index, commit index) of the change; `fix`: the
    bug is there first and the change fixes it; `compiled`: commits that change a C++ source."""
    src, bare = tmp / "pytorch-src", tmp / "pytorch.git"
    tmp.mkdir(parents=True, exist_ok=True)
    _git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    _git(tmp, "init", "--quiet", "--initial-branch=main", str(src))
    before, after = (OPS_V2, OPS_V1) if fix else (OPS_V1, OPS_V2)
    ops = before
    base = _commit(src, {"torch/__init__.py": _init(), "torch/ops.py": ops, "torch/csrc/README.md": "C++\n",
                         "aten/src/scale.cpp": "int scale(int x) { return 2 * x; }\n", "setup.py": "# PyTorch\n"},
                   "Initial import", "2026-02-27")
    names = [f"2026-03-{d + 1:02d}" for d in range(days)]
    by_day: dict[str, list[str]] = {}
    pulls, ops_at, culprit = {}, {base: ops}, ""
    number = FIRST_PR
    for d, day in enumerate(names):
        by_day[day] = []
        for i in range(per_day):
            number += 1
            if (d, i) == change_at:
                ops, files, title = after, {"torch/ops.py": after}, "Change how scale multiplies"
            elif (d, i) in compiled:
                files, title = {f"aten/src/kernel_{d}_{i}.cpp": f"// kernel {d} {i}\n"}, "Vectorize a kernel"
            elif i % 2:
                files, title = {f"docs/note_{d}_{i}.md": "words\n"}, "Document things"
            else:
                files, title = {f"torch/utils_{d}_{i}.py": f"VALUE = {d * 10 + i}\n"}, "Add a helper"
            message = (f"{title} (#{number})\n\nA change.\n\nPull Request resolved: "
                       f"https://github.com/{REPO}/pull/{number}\nApproved by: https://github.com/reviewer\n")
            sha = _commit(src, files, message, f"{day}")
            by_day[day].append(sha)
            pulls[sha], ops_at[sha] = number, ops
            if (d, i) == change_at:
                culprit = sha
    nightly = {}
    _git(src, "checkout", "--quiet", "--orphan", "nightly")
    for day in names:
        nightly[day] = _commit(src, {"NIGHTLY": f"{day}\n"}, f"{day} nightly release ({by_day[day][-1]})", day)
    _git(src, "checkout", "--quiet", "main")
    _git(src, "push", "--quiet", str(bare), "main", "nightly")
    merged = {sha for k, sha in enumerate(pulls) if k % merged_every == 0}
    return CulpritWorld(bare, names, by_day, nightly, pulls, culprit, ops_at,
                        names[broken_day] if broken_day is not None else None, merged)


def _init() -> str:
    from tests.fakes.torch_nightlies import INIT

    return INIT
