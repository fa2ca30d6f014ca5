"""Run the peer reducers (shrinkray, pysource-minimize) on one case, capped, and count their work.

Peers run their own interestingness test, as their users would: a small script that runs the
candidate with the ordinary interpreter and greps the output for the exception class and the
message's stable prefix. Each call appends a line to a counter file, so "candidates tried" is
measured the same way for every peer. The best candidate so far is what a capped peer leaves.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

SHRINKRAY = os.environ.get("SHRINKRAY", "/tmp/sr/bin/shrinkray")
# Where pysource-minimize is installed when it is not in this interpreter's environment
# (`pip install --target /tmp/pysource pysource-minimize`: not a project dependency).
PYSOURCE_PATH = os.environ.get("PYSOURCE_PATH", "/tmp/pysource")

_INTERESTING = r'''
import subprocess, sys
path = sys.argv[1] if len(sys.argv) > 1 else {basename!r}
with open({counter!r}, "a") as f:
    f.write("x\n")
try:
    run = subprocess.run([{python!r}, path], capture_output=True, text=True, timeout={timeout})
except subprocess.TimeoutExpired:
    sys.exit(1)
out = run.stdout + run.stderr
sys.exit(0 if run.returncode != 0 and all(n in out for n in {needles!r}) else 1)
'''

_PYSOURCE = r'''
import subprocess, sys
from pysource_minimize import minimize
source = open({case!r}).read()
def check(candidate):
    with open({work!r}, "w") as f:
        f.write(candidate)
    ok = subprocess.run([sys.executable, {script!r}, {work!r}]).returncode == 0
    if ok:
        with open({best!r}, "w") as f:
            f.write(candidate)
    return ok
open({best!r}, "w").write(source)
minimize(source, check)
'''


@dataclass
class PeerRun:
    final: str
    candidates: int
    wall_s: float
    finished: bool


def needles_for(exception_line: str) -> list[str]:
    """What the peers grep for: `Class:` and the longest digit-free stretch of the message.

    (A grep on the message up to its first digit is too weak: "mat1 and mat2 ..." would leave
    "mat", which a file name like dtype_matmul.py matches.)
    """
    exc_type, _, message = exception_line.partition(":")
    stretches = [part.strip() for part in re.split(r"\d+", message)]
    longest = max(stretches, key=len, default="")
    return [n for n in (f"{exc_type.strip()}:" if message.strip() else exc_type.strip(), longest) if n]


def write_interesting(workdir: Path, needles: list[str], basename: str, timeout_s: float) -> tuple[Path, Path]:
    counter = workdir / "calls.txt"
    counter.write_text("")
    script = workdir / "interesting.py"
    script.write_text(_INTERESTING.format(basename=basename, counter=str(counter), python=sys.executable,
                                          timeout=timeout_s, needles=needles))
    return script, counter


def _calls(counter: Path) -> int:
    return counter.read_text().count("\n") if counter.exists() else 0


def _run_capped(command: list[str], cap_s: float, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, bool]:
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    try:
        proc.wait(timeout=cap_s)
        finished = proc.returncode == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        finished = False
    return time.monotonic() - started, finished


def run_shrinkray(case: Path, needles: list[str], workdir: Path, cap_s: float, jobs: int) -> PeerRun:
    workdir.mkdir(parents=True, exist_ok=True)
    target = workdir / case.name
    shutil.copy(case, target)
    script, counter = write_interesting(workdir, needles, case.name, timeout_s=60)
    wrapper = workdir / "interesting.sh"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\"\n")
    wrapper.chmod(0o755)
    command = [SHRINKRAY, "--ui", "basic", "--parallelism", str(jobs), "--no-llm", "--no-history",
               "--timeout", "60", str(wrapper), str(target)]
    wall, finished = _run_capped(command, cap_s, workdir)
    return PeerRun(target.read_text(), _calls(counter), wall, finished)


def run_pysource_minimize(case: Path, needles: list[str], workdir: Path, cap_s: float) -> PeerRun:
    workdir.mkdir(parents=True, exist_ok=True)
    script, counter = write_interesting(workdir, needles, case.name, timeout_s=60)
    best = workdir / "best.py"
    driver = workdir / "pysource_driver.py"
    driver.write_text(textwrap.dedent(_PYSOURCE.format(case=str(case), work=str(workdir / "candidate.py"),
                                                       script=str(script), best=str(best))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [PYSOURCE_PATH, os.environ.get("PYTHONPATH")]))}
    wall, finished = _run_capped([sys.executable, str(driver)], cap_s, workdir, env)
    return PeerRun(best.read_text() if best.exists() else case.read_text(), _calls(counter), wall, finished)
