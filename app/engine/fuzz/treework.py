"""Run a fuzzed program, or a command that edits the checkout, in the sandbox over a checkout.

`ProgramRunner.run(source, timeout_s)`: a `TreeRunner` over the checkout (packed once) whose
command is always `python repro.py`, the program being written into the copy as `repro.py`;
it runs with the checkout as its working directory (so it imports the repository's own code).
The result is a `ProcessResult`, the shape the minimizer's oracle reads.

`run_in_copy(sandbox, root, command, ...)`: a shell command (a fix agent, a linter) runs in
the sandbox over a copy of the checkout; afterwards the bootstrap lists what the command
changed (file digests before and after) and prints those files, zipped, after a marker line.
`apply_changes` writes them into the real worktree, refusing any path that leaves it, goes
into `.git` or passes through a symlink. So the command's only lasting effect is on the
worktree's files, whatever it does in the sandbox; it has no `.git` (no history rewriting).
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from app.engine.sandbox.runner import ProcessResult, Sandbox
from app.engine.sandbox.treerun import DEFAULT_MAX_BYTES, WORK, TreeRunner, pack_tree

PROGRAM_FILE = "repro.py"
CHANGES_MARKER = "@@scrub-changes@@ "

_COMMAND_BOOT = '''\
import base64, hashlib, io, json, os, subprocess, sys, zipfile
WORK = {work!r}
zipfile.ZipFile(io.BytesIO(base64.b64decode(DATA))).extractall(WORK)

def digests():
    out = {{}}
    for top, dirs, files in os.walk(WORK):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__", ".pytest_cache", ".ruff_cache")]
        for name in files:
            path = os.path.join(top, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                out[os.path.relpath(path, WORK)] = hashlib.sha256(handle.read()).hexdigest()
    return out

before = digests()
code = subprocess.call(["bash", "-c", COMMAND], cwd=WORK, stdin=subprocess.DEVNULL)
after = digests()
changed = sorted(p for p in after if before.get(p) != after[p])
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
    ships the checkout) rather than repeating it."""

    sandbox: Sandbox
    root: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    _tree: TreeRunner = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._tree = TreeRunner(self.sandbox, self.root, self.max_bytes)

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
                max_bytes: int = DEFAULT_MAX_BYTES) -> CommandRun:
    """Run `bash -c command` over a copy of `root` in `sandbox`; what it changed comes back.
    The sandbox's `tail_bytes` must hold the changes line (`fix_sandbox` sizes it)."""
    data = base64.b64encode(pack_tree(root, max_bytes)).decode()
    script = (f"DATA = {data!r}\nCOMMAND = {command!r}\n"
              + _COMMAND_BOOT.format(work=WORK, marker=CHANGES_MARKER))
    result = sandbox.run(script, timeout_s=timeout_s, filename="scrub_boot.py")
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


def _safe_target(root: Path, rel: str) -> Path:
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts or pure.parts[0] == ".git":
        raise ChangesRefused(f"refusing a change to {rel!r}: outside the worktree's files")
    path = root
    for part in pure.parts:
        path = path / part
        if path.is_symlink():
            raise ChangesRefused(f"refusing a change to {rel!r}: it goes through a symlink")
    return path


def apply_changes(root: Path, run: CommandRun, keep: set[str] | None = None) -> list[str]:
    """Write what a sandboxed command changed into the worktree; the paths touched, sorted.
    `keep`: paths to leave as they are whatever the command did (the generated test)."""
    keep = keep or set()
    touched = []
    for rel, content in run.changed.items():
        if rel in keep:
            continue
        target = _safe_target(root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        touched.append(rel)
    for rel in run.deleted:
        if rel in keep:
            continue
        target = _safe_target(root, rel)
        if target.is_file():
            target.unlink()
            touched.append(rel)
    return sorted(touched)
