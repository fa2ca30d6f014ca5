"""Run a fuzzed program, or a command that edits the checkout, in the sandbox over a checkout.

`ProgramRunner.run(source, timeout_s)`: a `TreeRunner` over the checkout (bound read-only)
whose command is always `python repro.py`, the program being placed into the tree as
`repro.py`; it runs with the checkout as its working directory (so it imports the repository's
own code). The result is a `ProcessResult`, the shape the minimizer's oracle reads.

`run_in_copy(sandbox, root, command, ...)`: a shell command (a fix agent, a linter) that may
edit any file runs over a COPY: the checkout is bound read-only at /tmp/src, copied (`cp -a`,
links as links) to /tmp/work on the sandbox's tmpfs (sized to the checkout, in bytes and in
files), and the command runs there. Afterwards the bootstrap lists what changed (size and
mtime first, then bytes) and
prints those files, zipped, after a marker line. `apply_changes` writes them into the real
worktree, refusing any path that leaves it, goes into `.git` or passes through a symlink. So the
command's only lasting effect is on the worktree's files; it has no `.git` (no history rewriting).
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from app.engine.git.tree import Checkout, UnsafePath
from app.engine.sandbox.layer import WORK, TreeLayer, tree_bytes
from app.engine.sandbox.runner import ProcessResult, Sandbox
from app.engine.sandbox.tmpfs import FILES_PER_MB
from app.engine.sandbox.treerun import TreeRunner

PROGRAM_FILE = "repro.py"
CHANGES_MARKER = "@@scrub-changes@@ "
SOURCE = "/tmp/src"

_COMMAND_BOOT = '''\
import base64, io, json, os, subprocess, sys, zipfile
SRC, WORK = {src!r}, {work!r}
copied = subprocess.call(["cp", "-a", "--no-preserve=ownership", SRC + "/.", WORK])
if copied != 0:
    print("scrub: could not copy the checkout onto the sandbox's tmpfs", flush=True)
    sys.exit(copied)
SKIP = (".git", "__pycache__", ".pytest_cache", ".ruff_cache")

def files(top_dir):
    out = {{}}
    for top, dirs, names in os.walk(top_dir):
        dirs[:] = [d for d in dirs if d not in SKIP]
        for name in names:
            path = os.path.join(top, name)
            if not os.path.islink(path) and os.path.isfile(path):
                out[os.path.relpath(path, top_dir)] = os.stat(path)
    return out

def same(rel, mine, theirs):
    if theirs is None or mine.st_size != theirs.st_size:
        return False
    if mine.st_mtime_ns == theirs.st_mtime_ns:
        return True
    with open(os.path.join(WORK, rel), "rb") as a, open(os.path.join(SRC, rel), "rb") as b:
        return a.read() == b.read()

code = subprocess.call(["bash", "-c", COMMAND], cwd=WORK, stdin=subprocess.DEVNULL)
before, after = files(SRC), files(WORK)
changed = sorted(p for p in after if not same(p, after[p], before.get(p)))
deleted = sorted(p for p in before if p not in after)
buffer = io.BytesIO()
with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
    for rel in changed:
        archive.write(os.path.join(WORK, rel), rel)
sys.stdout.flush()
print("\\n" + {marker!r} + base64.b64encode(buffer.getvalue()).decode() + " "
      + json.dumps({{"exit": code, "deleted": deleted}}), flush=True)
'''


class ChangesRefused(ValueError):
    """A sandboxed command produced a change outside the worktree's plain files."""


@dataclass
class ProgramRunner:
    """Runs fuzzed programs over a checkout; callable as the minimizer's `run(source, timeout)`.

    The minimizer's oracle takes a program, not an argv, so this adapts a `TreeRunner` (which
    binds the checkout, and a build's binaries when it has them) rather than repeating it."""

    sandbox: Sandbox
    root: Path
    binds: dict[str, str] = field(default_factory=dict)
    _tree: TreeRunner = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._tree = TreeRunner(self.sandbox, self.root, self.binds)

    @classmethod
    def over(cls, tree: TreeRunner) -> ProgramRunner:
        """A program runner with `tree`'s sandbox, checkout and build."""
        return cls(tree.sandbox, Path(tree.root), dict(tree.binds))

    def run(self, source: str, timeout_s: float) -> ProcessResult:
        return self._tree.run([PROGRAM_FILE], timeout_s, files={PROGRAM_FILE: source})

    __call__ = run


@dataclass(frozen=True)
class CommandRun:
    exit_code: int | None  # the command's exit code (None: killed, timed out, or no report)
    timed_out: bool
    output: str  # what the command printed (tail), without the changes line
    changed: dict[str, bytes]
    deleted: tuple[str, ...]


def run_in_copy(sandbox: Sandbox, root: Path, command: str, timeout_s: float,
                binds: dict[str, str] | None = None) -> CommandRun:
    """Run `bash -c command` over a copy of `root` in `sandbox`; what it changed comes back.
    The sandbox's `tail_bytes` must hold the changes line (`app.pipelines.kit.sandbox.editing_sandbox` sizes it); its /tmp
    is grown to hold the copy twice over (the copy, and what the command writes)."""
    limits = sandbox.spec.limits
    placed = sum(tree_bytes(Path(host), hidden=()) if Path(host).is_dir() else Path(host).stat().st_size
                 for host in (binds or {}).values())  # a build's compiled parts are copied too
    needed_mb = 2 * ((tree_bytes(root) + placed) >> 20) + 512
    needed_files = 2 * _entries(root) + (needed_mb * FILES_PER_MB)  # the copy's, and what the command makes
    if needed_mb > limits.tmpfs_mb:
        limits = replace(limits, tmpfs_mb=needed_mb)
    if needed_files > (limits.tmpfs_files or limits.tmpfs_mb * FILES_PER_MB):
        limits = replace(limits, tmpfs_files=needed_files)
    if limits != sandbox.spec.limits:
        sandbox = Sandbox(replace(sandbox.spec, limits=limits), sandbox._uids)
    script = f"COMMAND = {command!r}\n" + _COMMAND_BOOT.format(src=SOURCE, work=WORK, marker=CHANGES_MARKER)
    layer = TreeLayer(Path(root), binds=dict(binds or {}), dest=SOURCE)
    result = sandbox.run(script, timeout_s=timeout_s, filename="scrub_boot.py", layer=layer)
    text = result.output.text()  # head + tail: the changes line is the last one
    at = text.rfind("\n" + CHANGES_MARKER)
    if at < 0 or result.timed_out:
        return CommandRun(None, result.timed_out, result.output.tail_text(6000), {}, ())
    payload, _, header = text[at + 1 + len(CHANGES_MARKER):].strip().partition(" ")
    report = json.loads(header)
    changed: dict[str, bytes] = {}
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(payload))) as archive:
        for name in archive.namelist():
            changed[name] = archive.read(name)
    shown = text[:at]
    return CommandRun(report["exit"], False, shown[-6000:], changed, tuple(report["deleted"]))


def _entries(root: Checkout | Path) -> int:
    """Files and directories under `root` (without `.git`, through the checkout's door): the
    inodes a copy takes."""
    folders: set[str] = set()
    count = 0
    for rel in Checkout.of(root).files():
        count += 1
        parent = rel.rpartition("/")[0]
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    return count + len(folders)


def _check_target(checkout: Checkout, rel: str) -> None:
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts or pure.parts[0] == ".git":
        raise ChangesRefused(f"refusing a change to {rel!r}: outside the worktree's files")
    if checkout.is_link(rel):
        raise ChangesRefused(f"refusing a change to {rel!r}: it goes through a symlink")


def apply_changes(root: Checkout | Path, run: CommandRun, keep: set[str] | None = None) -> list[str]:
    """Write what a sandboxed command changed into the worktree; the paths touched, sorted.
    `keep`: paths to leave as they are whatever the command did (the generated test). Every
    write goes through the checkout's door: a link anywhere on the way refuses the change."""
    checkout = Checkout.of(root)
    keep = keep or set()
    touched = []
    try:
        for rel, content in run.changed.items():
            if rel in keep:
                continue
            _check_target(checkout, rel)
            checkout.write_bytes(rel, content)
            touched.append(rel)
        for rel in run.deleted:
            if rel in keep:
                continue
            _check_target(checkout, rel)
            if checkout.is_file(rel):
                checkout.remove(rel)
                touched.append(rel)
    except UnsafePath as exc:
        raise ChangesRefused(f"refusing a change: {exc} (it goes through a symlink)") from None
    return sorted(touched)
