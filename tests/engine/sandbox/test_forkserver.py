"""The fork server through the real sandbox: candidates as forked children of a zygote.

Most tests use a zygote that preloads nothing (cheap); the torch cases share ONE zygote that
imports torch, and run several candidates through it.
"""

from __future__ import annotations

import threading
import time

import pytest

from app.engine.sandbox.forkserver import ForkServer, ZygoteDied
from app.engine.minimize.runners import COMPILE_WARMUP, zygote_for
from app.engine.verdict.reproduce import read_process
from app.engine.verdict.signature import match
from app.engine.sandbox.uids import processes_of_uid
from tests.engine.sandbox.helpers import DAEMON_SOURCE, needs_bwrap, sandbox_processes, spec


SANDBOX_PROCESSES = 3  # bwrap's monitor, the namespace's init, the zygote


@pytest.fixture(scope="module")
def server():
    with ForkServer(spec(), jobs=2, preload=()) as fork_server:
        yield fork_server


def uid_processes(server: ForkServer) -> int:
    """The sandbox's processes: its uid's (root mode), or bwrap's process tree (user mode)."""
    if server._process.uid is None:
        return sandbox_processes(server._process.popen.pid)
    return len(processes_of_uid(server._process.uid))


@needs_bwrap
def test_candidate_runs_as_main_with_fresh_state(server):
    source = "import os, sys\nprint(__name__, sys.argv[1:], os.getcwd().startswith('/tmp/candidate-'))\nx = 1"
    first = server.run(source, timeout_s=10, argv=["--flag"])
    assert first.mode == "fork" and first.exit_code == 0
    assert first.output.text().strip() == "__main__ ['--flag'] True"
    second = server.run("print('x' in globals())", timeout_s=10)
    assert second.output.text().strip() == "False"


@needs_bwrap
def test_exit_codes_and_tracebacks_look_like_a_cold_run(server):
    assert server.run("import sys; sys.exit(3)", timeout_s=10).exit_code == 3
    assert server.run("raise SystemExit('bye')", timeout_s=10).exit_code == 1
    failed = server.run("def f():\n    raise KeyError('k')\nf()", timeout_s=10)
    text = failed.output.text()
    assert failed.exit_code == 1 and text.startswith("Traceback (most recent call last):")
    assert "scrub_zygote" not in text and "KeyError: 'k'" in text
    syntax = server.run("def broken(:\n", timeout_s=10)
    assert syntax.exit_code == 1 and "SyntaxError" in syntax.output.text()


@needs_bwrap
def test_exit_handlers_and_finalizers_of_the_candidate_run(server):
    source = ("import atexit, weakref\nclass Box:\n    pass\nbox = Box()\n"
              "weakref.finalize(box, print, 'finalized')\natexit.register(print, 'at exit')\nprint('body')")
    result = server.run(source, timeout_s=10)
    assert result.output.text().split() == ["body", "at", "exit", "finalized"]


@needs_bwrap
def test_timeout_kills_the_candidate_group(server):
    source = "import os, time\nif os.fork() == 0:\n    time.sleep(600)\ntime.sleep(600)"
    result = server.run(source, timeout_s=1)
    assert result.timed_out and result.mode == "fork"
    assert uid_processes(server) == SANDBOX_PROCESSES


@needs_bwrap
def test_escaped_daemon_is_killed_after_the_candidate(server):
    source = DAEMON_SOURCE
    assert server.run(source, timeout_s=10).exit_code == 0
    assert uid_processes(server) == SANDBOX_PROCESSES


@needs_bwrap
def test_candidates_run_concurrently_in_order(server):
    results = server.run_many([f"import time; time.sleep(0.2); print({i})" for i in range(4)], timeout_s=10)
    assert [r.output.text().strip() for r in results] == ["0", "1", "2", "3"]
    assert {r.mode for r in results} == {"fork"}


@needs_bwrap
def test_killing_the_zygote_falls_back_to_cold_then_restarts():
    with ForkServer(spec(), preload=(), max_restarts=1) as fork_server:
        killed = fork_server.run("import os\nos.kill(os.getppid(), 9)\nprint('survived')", timeout_s=10)
        assert killed.mode == "cold" and "survived" in killed.output.text()
        after = fork_server.run("print('next')", timeout_s=10)
        assert after.mode == "fork" and after.output.text().strip() == "next"


@needs_bwrap
def test_warm_up_runs_once_in_the_zygote_before_any_fork():
    warmup = "import json\njson._scrub_warmed = getattr(json, '_scrub_warmed', 0) + 1"
    with ForkServer(spec(), jobs=2, preload=(), warmup=warmup) as fork_server:
        results = fork_server.run_many(["import json; print(json._scrub_warmed)"] * 3, timeout_s=10)
        assert fork_server.ready_info["warmup_error"] is None
    assert [r.output.text().strip() for r in results] == ["1", "1", "1"]


@needs_bwrap
def test_a_failing_warm_up_is_reported_and_candidates_still_run():
    with ForkServer(spec(), preload=(), warmup="raise ValueError('no warm-up today')") as fork_server:
        result = fork_server.run("print('ran')", timeout_s=10)
        assert fork_server.ready_info["warmup_error"] == "ValueError: no warm-up today"
    assert (result.mode, result.output.text().strip()) == ("fork", "ran")


@needs_bwrap
def test_a_zygote_started_from_a_thread_that_ends_keeps_running():
    """The sandbox dies with the thread that spawned it (PR_SET_PDEATHSIG): the server spawns
    from its own long-lived thread, so a start from a short-lived one must not be lost."""
    with ForkServer(spec(), preload=(), max_restarts=0) as fork_server:
        starter = threading.Thread(target=fork_server.start)
        starter.start()
        starter.join()
        time.sleep(0.3)  # time for a PDEATHSIG'd sandbox to die, were it tied to `starter`
        assert fork_server.alive
        assert fork_server.run("print('ok')", timeout_s=10).mode == "fork"


@needs_bwrap
def test_background_start_overlaps_and_the_first_run_waits_for_it():
    with ForkServer(spec(), preload=(), max_restarts=0) as fork_server:
        fork_server.start_in_background()
        result = fork_server.run("print('first')", timeout_s=10)
        assert (result.mode, result.output.text().strip()) == ("fork", "first")


@needs_bwrap
def test_close_is_final_even_for_a_pending_background_start():
    fork_server = ForkServer(spec(), preload=())
    fork_server.close()
    fork_server.start_in_background()  # after close: must not leave a zygote behind
    with pytest.raises(ZygoteDied):
        fork_server.start()
    assert not fork_server.alive


RANDOM_DRAWS = "import random, numpy, torch\nprint(random.random(), numpy.random.rand(), torch.rand(1).item())"


@pytest.mark.torch
@needs_bwrap
def test_torch_candidates_through_one_zygote():
    """Real torch errors, a large matmul after fork (the libgomp hang), a segfault; the zygote
    has run the compile warm-up (tiny torch ops before forking) and still has one thread."""
    cases = {
        "import torch\ntorch.ones(2, 3) + torch.ones(4)": "RuntimeError: must match the size",
        "import torch\na = torch.randn(1500, 1500)\nassert (a @ a).shape == (1500, 1500)": None,
        "import torch\n@torch.compile(backend='eager')\ndef f(a, b):\n    return a @ b\n"
        "f(torch.randn(2, 3), torch.randn(4, 5))": "RuntimeError: must have same reduction dim",
        "import torch\n@torch.compile(fullgraph=True, backend='eager')\ndef f(x):\n    print('hi')\n"
        "    return x + 1\nf(torch.randn(3))": "Unsupported: Failed to trace builtin operator",
        "import ctypes\nctypes.string_at(0)": "Segmentation fault",
    }
    zygote = zygote_for("\n".join(cases))
    assert zygote.warmup == COMPILE_WARMUP
    with ForkServer(spec(memory_mb=4096), jobs=2, preload=zygote.preload, warmup=zygote.warmup) as fork_server:
        assert fork_server.torch_version and fork_server.torch_version.startswith("2.")
        assert fork_server.ready_info["warmup_error"] is None
        assert fork_server.ready_info["threads_at_fork"] == 1  # import torch started no thread
        results = fork_server.run_many(list(cases), timeout_s=90)
        draws = fork_server.run_many([RANDOM_DRAWS] * 2, timeout_s=90)
    # every child draws its own numbers, as cold runs do (a flaky repro must stay flaky warm)
    first, second = (draw.output.text().split() for draw in draws)
    assert len(first) == len(second) == 3 and all(a != b for a, b in zip(first, second)), (first, second)
    for (source, expected), process in zip(cases.items(), results, strict=True):
        run = read_process(process, python=fork_server.python_version, torch_version=fork_server.torch_version)
        assert run.mode == "fork", source
        if expected is None:
            assert run.outcome == "passed", run.output_tail
        else:
            assert match(run.parsed, expected) == "same", (expected, run.signature, run.output_tail[-2000:])
    assert read_process(results[-1], python="", torch_version=None).outcome == "crash"


def test_unsandboxed_server_needs_trusted_and_never_kills_strays_on_the_host():
    from app.engine.sandbox.runner import SandboxSpec, UntrustedCodeRefused

    with pytest.raises(UntrustedCodeRefused):
        ForkServer(SandboxSpec(kind="none"), preload=())
    with ForkServer(SandboxSpec(kind="none"), preload=(), trusted=True) as fork_server:
        result = fork_server.run("import os; print(os.getcwd() != '/tmp')", timeout_s=10)
    assert (result.mode, result.output.text().strip()) == ("fork", "True")
