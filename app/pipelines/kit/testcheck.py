"""Does a generated test fail for the bug's reason without its marker, and xfail with it?

`check_test` runs one version of a test file (placed over the checkout for that run only: the
worktree is not written) with `pytest -v -rA -k <name>` in the sandbox, reads each device's
status (`app.engine.fuzz.results`) and compares it with what it must be: without the marker the
failing devices FAIL (and with the bug's exception and message, digits masked), the others
PASS; with it the failing devices XFAIL. `standalone_runner` gives a runner over a directory
holding only the test file, for a repro that has no checkout (an issue's); there pytest loads no
plugin from entry points (`PYTEST_DISABLE_PLUGIN_AUTOLOAD`): the file needs none, and the
worker's own plugins cost ~13 s per run here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.engine.fuzz.results import device_results, expected
from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec
from app.engine.sandbox.treerun import TreeRunner, pytest_argv
from app.engine.verdict.signature import mask_digits

Json = dict[str, Any]


@dataclass(frozen=True)
class TestCheck:
    ok: bool
    marked: bool
    summary: str
    problems: list[str] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)
    output: str = ""

    __test__ = False  # not a pytest class

    def to_dict(self) -> Json:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Json) -> TestCheck:
        return cls(**{k: data[k] for k in ("ok", "marked", "summary", "problems", "statuses", "output") if k in data})


def check_test(runner: TreeRunner, path: str, text: str, name: str, *, marked: bool, devices: list[str],
               failing: list[str], style: str, exception: str, message: str, timeout_s: float,
               rewrote_assertion: bool = False) -> TestCheck:
    result = runner.run(pytest_argv(path, extra=["-v", "-rA", "-k", name]), timeout_s, files={path: text})
    failing = failing or ([""] if not devices else [])  # no devices: the test itself fails
    return judge(result.output.text(), name, marked=marked, devices=devices, failing=failing, style=style,
                 exception=exception, message=message, rewrote_assertion=rewrote_assertion,
                 timed_out=result.timed_out, timeout_s=timeout_s)


def judge(output: str, name: str, *, marked: bool, devices: list[str], failing: list[str], style: str,
          exception: str, message: str, timed_out: bool, timeout_s: float,
          rewrote_assertion: bool = False) -> TestCheck:
    """Each device's status in pytest's `output` against what it must be; a failing device must
    fail with the bug's error (its first line, digits masked; only the class when the assertion
    was rewritten to `assertEqual`, which prints other words). `failing` empty: every device
    passes (a fixed tree's check)."""
    seen = device_results(output, devices, name)
    wanted = expected(devices, failing, marked=marked, style=style)
    problems = [f"{device or 'the test'}: {seen.get(device, 'not run')}, expected {status}"
                for device, status in wanted.items() if seen.get(device) != status]
    if not marked and failing and exception and not problems:
        line = f"{exception}: {message}" if message and not rewrote_assertion else exception
        # as raised (`RuntimeError: msg`), or wrapped in another error's message as its repr
        # (Dynamo's `got RuntimeError('msg')`)
        spellings = [line] + ([f"{exception}('{message}", f'{exception}("{message}'] if line != exception else [])
        seen_text = mask_digits(output)
        if not any(mask_digits((text.strip().splitlines() or [""])[0][:120]) in seen_text for text in spellings):
            problems.append(f"the test fails, but not with {line[:200]}")
    if timed_out:
        problems.append(f"the test run timed out after {timeout_s:.0f} s")
    label = "with the marker" if marked else "without the marker"
    summary = f"{label}: " + (", ".join(f"{d or 'test'} {s}" for d, s in seen.items()) or "no result")
    return TestCheck(ok=not problems, marked=marked, summary=summary, problems=problems, statuses=seen,
                     output=output[-4000:])


@contextmanager
def standalone_runner(kind: str, python: str, memory_mb: int, gpu: bool) -> Iterator[TreeRunner]:
    """A sandboxed runner over an empty directory (the test file comes as a `files` overlay)."""
    with tempfile.TemporaryDirectory(prefix="scrub-test-") as root:
        (Path(root) / "conftest.py").write_text("")  # the directory is pytest's rootdir
        spec = SandboxSpec(kind=kind, python=python, limits=Limits(memory_mb=memory_mb), gpu=gpu,
                           env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
        yield TreeRunner(Sandbox(spec), Path(root))
