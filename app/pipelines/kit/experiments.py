"""The sandbox side of the diagnosis experiments: a variant in, judged observations out.

`app.engine.diagnosis.diagnose_repro` takes a runner `(variant, timeout_s) -> [Observation]`;
the kinds build one here over their own sandbox and their own judge of "the same failure":

- `ScriptRunner` (an issue's repro, a fuzzed program without a checkout): variants run warm in a
  fork server that imported torch once (one zygote per repro, never shared across repros), and
  cold when a variant sets environment variables (they must be there when Python starts) or
  runs several times to measure a rate: forked children share the zygote's hash seed and
  numpy's global random state, so their runs are not independent draws of a flaky repro;
- `TreeVariantRunner` (a CI test, a fuzzed program in its repository): each variant replaces one
  file of the checkout for that run only (`TreeRunner` files) and runs the same argv.

`judge(process, variant)` says whether a run failed the way the repro does; every run is also
described for the report (`RuntimeError: ...`, `killed by SIGSEGV`, `timed out after 30 s`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from app.engine.diagnosis.model import Observation, Variant
from app.engine.sandbox.forkserver import ForkServer
from app.engine.sandbox.runner import ProcessResult, Sandbox, SandboxSpec, run_sandboxed
from app.engine.sandbox.treerun import TreeRunner
from app.engine.verdict.classify import describe
from app.engine.verdict.reproduce import read_process
from app.engine.verdict.rerun import failure_line

Judge = Callable[[ProcessResult, Variant], bool]
Describe = Callable[[ProcessResult, float], str]
OUTPUT_KEEP = 6000


def run_dict(process: ProcessResult, timeout_s: float) -> dict[str, Any]:
    """How the issue pipeline reads a run (`app.engine.verdict.reproduce.read_process`)."""
    return read_process(process, python="", torch_version=None).to_dict() | {"timeout_s": round(timeout_s)}


def script_description(process: ProcessResult, timeout_s: float) -> str:
    return describe(run_dict(process, timeout_s))


def pytest_description(process: ProcessResult, timeout_s: float) -> str:
    """What a `pytest <node>` run did: pytest's own failure line when it printed one."""
    if process.exit_code not in (0, None) and process.signal is None and (line := failure_line(process.output.text())):
        return line
    return script_description(process, timeout_s)


def observation(process: ProcessResult, variant: Variant, timeout_s: float, judge: Judge,
                described: Describe = script_description) -> Observation:
    outcome = str(run_dict(process, timeout_s)["outcome"])
    return Observation(outcome=outcome, same=bool(judge(process, variant)), description=described(process, timeout_s),
                       output=process.output.text()[-OUTPUT_KEEP:], seconds=round(process.duration_s, 3))


class ScriptRunner:
    """Variants of one script: warm in a fork server, cold when they set environment variables."""

    def __init__(self, spec: SandboxSpec, judge: Judge, *, jobs: int = 1, source: str = ""):
        self.spec, self.judge = spec, judge
        preload = ("torch",) if re.search(r"^\s*(?:import|from)\s+torch\b", source, re.M) else ()
        self.server = ForkServer(spec, jobs=jobs, preload=preload)
        self.jobs = jobs

    def __enter__(self) -> ScriptRunner:
        return self  # the zygote starts with the first warm variant: no experiment, no zygote

    def __exit__(self, *exc: object) -> None:
        self.server.close()

    def __call__(self, variant: Variant, timeout_s: float) -> list[Observation]:
        if variant.env or variant.runs > 1:
            spec = replace(self.spec, env={**self.spec.env, **variant.env})
            processes = [run_sandboxed(variant.source, spec, timeout_s=timeout_s) for _ in range(variant.runs)]
        else:
            processes = self.server.run_many([variant.source] * variant.runs, timeout_s=timeout_s)
        return [observation(p, variant, timeout_s, self.judge) for p in processes]


class TreeVariantRunner:
    """Variants of one file of a checkout, each run with `argv` in the sandbox over the checkout."""

    def __init__(self, runner: TreeRunner, path: str, argv: Sequence[str], judge: Judge,
                 described: Describe = pytest_description):
        self.runner, self.path, self.argv, self.judge, self.described = runner, path, list(argv), judge, described

    def __call__(self, variant: Variant, timeout_s: float) -> list[Observation]:
        runner = self.runner
        if variant.env:
            sandbox = Sandbox(replace(runner.sandbox.spec, env={**runner.sandbox.spec.env, **variant.env}))
            runner = TreeRunner(sandbox, runner.root, runner.binds)
        found = []
        for _ in range(variant.runs):
            process = runner.run(self.argv, timeout_s, files={self.path: variant.source})
            found.append(observation(process, variant, timeout_s, self.judge, self.described))
        return found
