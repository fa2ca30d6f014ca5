"""The build of the commit under test: which torch runs a PyTorch checkout's tests, and why.

A CI failure at commit X of pytorch/pytorch says something about X only when X's build runs
it. `plan_build` decides, from the mirror and the configured sources, in this order:

1. **release**: a release tag `vX.Y.Z` points at X -> that release (`scrub env` provisions it);
2. **nightly**: the nightly wheel (from `SCRUB_TORCH_NIGHTLY_INDEX_URL`) whose `git_version`
   is X's nearest ancestor; the Python files changed since then are overlaid (the checkout's
   own `torch/` runs against the nightly's compiled parts, as `tools/nightly.py` arranges it);
3. **command**: C++/CUDA sources (or codegen inputs, or the build system) changed since that
   nightly and an operator's build command is configured: it makes the build;
4. **needs-build**: otherwise, with what would be needed. Never a silent run of another build.

A GPU worker only considers accelerator builds (`variants.usable_on`). A repository that is
not PyTorch itself builds no torch: its tests run on the worker's interpreter (`interpreter`).
The plan is plain data; every report states it (`describe`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from app.engine.envs.history import classify, changed_paths, distance, release_tag, source_commit
from app.engine.envs.index import IndexUnavailable, Wheel, torch_wheels
from app.engine.envs.variants import TorchBuild, build_from_version_py, preference, usable_on, variant_of
from app.engine.git.repo import git
from app.engine.git.tree import Checkout

NEARBY_NIGHTLIES = 3  # ancestors compared once found, newest first


@dataclass(frozen=True)
class BuildSources:
    """Where builds come from (the caller reads these from settings)."""

    nightly_index: str = ""
    releases: dict[str, str] = field(default_factory=dict)  # `2.13.0+cpu` -> python, complete envs
    build_command: str = ""
    gpu: bool = False
    max_nightlies: int = 40  # newest nightlies (up to the commit's date) looked at


@dataclass
class BuildPlan:
    outcome: str  # release | nightly | command | needs-build | interpreter
    version: str = ""
    git_version: str = ""
    variant: str = ""
    base: str = ""  # the commit the build was made from
    distance: int = 0  # commits from `base` to the commit under test
    overlay: list[str] = field(default_factory=list)  # Python files changed since `base`
    compiled: list[str] = field(default_factory=list)  # sources a build would need
    wheel: dict | None = None  # {"filename", "url", "version"} of a nightly
    python: str = ""  # the release environment's interpreter, when it exists already
    reason: str = ""

    @property
    def runnable(self) -> bool:
        return self.outcome in ("release", "nightly", "command", "interpreter")

    @property
    def overlaid(self) -> bool:
        return bool(self.overlay)

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """One line for a report: which build, from which commit, overlay or not."""
        if self.outcome == "interpreter":
            own = (f"torch {self.version} (git_version {self.git_version[:12]}, {self.variant})" if self.version
                   else "no torch installed")
            return f"the worker's interpreter, {own}: {self.reason}"
        if self.outcome == "needs-build":
            return f"needs a build: {self.reason}"
        what = f"torch {self.version} (git_version {self.git_version[:12]}, {self.variant}, {self.outcome})"
        if self.overlay:
            return (f"{what}, built from {self.base[:12]}, {self.distance} commits before, + the "
                    f"{len(self.overlay)} Python files changed since (overlay)")
        if self.distance:
            return (f"{what}, built from {self.base[:12]}, {self.distance} commits before; no file the build "
                    "ships changed since (no overlay)")
        return f"{what}, the commit's own build (no overlay)"


def is_pytorch(root: Checkout | Path) -> bool:
    """A checkout of PyTorch itself: its Python package and its C++ sources side by side (read
    through the checkout's door: a link on the way counts as absent)."""
    checkout = Checkout.of(root)
    return checkout.is_file("torch/__init__.py") and checkout.is_dir("torch/csrc")


def _candidates(wheels: list[Wheel], before: str, sources: BuildSources) -> list[Wheel]:
    """Nightlies usable on this worker dated up to a day after `before` (YYYYMMDD), newest first."""
    nightly = [w for w in wheels if w.dev_date and w.dev_date <= before
               and usable_on(variant_of(w.version), gpu=sources.gpu)]
    nightly.sort(key=lambda w: (w.dev_date, -preference(variant_of(w.version), gpu=sources.gpu)), reverse=True)
    return nightly[:sources.max_nightlies]


def _day_after(mirror: Path, commit: str) -> str:
    day = git("log", "-1", "--format=%cd", "--date=format:%Y%m%d", commit, cwd=mirror).strip()
    return str(int(day) + 1)  # a nightly dated the day after may be cut from it (YYYYMM32 sorts fine)


def nearest_nightly(mirror: Path, commit: str, sources: BuildSources,
                    peek: Callable[[Wheel], str]) -> tuple[Wheel, TorchBuild, str, int] | None:
    """(wheel, its build, its source commit, distance) of the nightly nearest below `commit`."""
    found: list[tuple[int, int, Wheel, TorchBuild, str]] = []
    for wheel in _candidates(torch_wheels(sources.nightly_index), _day_after(mirror, commit), sources):
        build = build_from_version_py(peek(wheel))
        base = source_commit(mirror, build.git_version)
        steps = distance(mirror, base, commit) if base else None
        if steps is not None:
            found.append((steps, preference(build.variant, gpu=sources.gpu), wheel, build, base))
            if len(found) >= NEARBY_NIGHTLIES:
                break
    if not found:
        return None
    steps, _, wheel, build, base = min(found, key=lambda item: (item[0], item[1]))
    return wheel, build, base, steps


def _release(version: str, sources: BuildSources) -> tuple[str, str] | None:
    """(label, python) of a provisioned release environment usable here."""
    usable = [(label, python) for label, python in sources.releases.items()
              if label.split("+")[0] == version and usable_on(variant_of(label), gpu=sources.gpu)]
    usable.sort(key=lambda item: preference(variant_of(item[0]), gpu=sources.gpu))
    return usable[0] if usable else None


def plan_build(root: Checkout | Path, mirror: Path, commit: str, sources: BuildSources,
               peek: Callable[[Wheel], str]) -> BuildPlan:
    """The build that runs `commit`'s checkout at `root` (see the module docstring)."""
    if not is_pytorch(root):
        return BuildPlan("interpreter", reason="the repository is not PyTorch itself: it builds no torch")
    tag = release_tag(mirror, commit)
    if tag:
        release = _release(tag, sources)
        if release:
            return BuildPlan("release", version=release[0], git_version=commit, variant=variant_of(release[0]),
                             base=commit, python=release[1], reason=f"v{tag} points at the commit")
    if not sources.nightly_index:
        why = (f"v{tag} is not provisioned here (scrub env add {tag})" if tag else "the commit is not a release")
        return BuildPlan("needs-build", reason=f"{why}, and no nightly index is configured "
                         "(SCRUB_TORCH_NIGHTLY_INDEX_URL)")
    try:
        nearest = nearest_nightly(mirror, commit, sources, peek)
    except IndexUnavailable as exc:
        return BuildPlan("needs-build", reason=str(exc))
    if nearest is None:
        kind = "accelerator" if sources.gpu else "usable"
        return BuildPlan("needs-build", reason=f"no {kind} nightly on {sources.nightly_index} was built from an "
                         "ancestor of the commit")
    wheel, build, base, steps = nearest
    changes = classify(changed_paths(mirror, base, commit))
    plan = BuildPlan("nightly", version=build.version, git_version=build.git_version, variant=build.variant,
                     base=base, distance=steps, overlay=list(changes.python), compiled=list(changes.compiled),
                     wheel={"filename": wheel.filename, "url": wheel.url, "version": wheel.version})
    if changes.compiled:
        shown = ", ".join(changes.compiled[:5]) + (" ..." if len(changes.compiled) > 5 else "")
        need = (f"{len(changes.compiled)} compiled sources changed in the {steps} commits since the nightly "
                f"{build.version} ({base[:12]}): {shown}")
        plan.outcome = "command" if sources.build_command else "needs-build"
        plan.reason = need + ("; the configured build command builds it" if sources.build_command else
                              "; a build of the commit is needed (SCRUB_BUILD_COMMAND)")
    return plan
