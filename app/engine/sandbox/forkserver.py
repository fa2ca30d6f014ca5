"""Many runs of similar code at the cost of one `import torch`: a zygote inside the sandbox.

`ForkServer` starts `forkserver_child.py` in one sandbox (one leased uid, the same limits as a
cold run), waits until it has imported the preload modules, then sends it candidates; the
zygote forks a child per candidate (see that module for the fork-safety rules). Up to `jobs`
candidates run at once; `run()` is thread-safe and blocks until its candidate ends.

When the zygote dies (a candidate may `os.kill(os.getppid(), 9)`, or exhaust a shared limit),
in-flight candidates are re-run cold in a fresh sandbox, and the zygote is restarted for later
candidates up to `max_restarts` times; after that every run is cold. Each result says which:
`ProcessResult.mode` is `"fork"` or `"cold"`.

Candidates sharing one zygote share its uid, its /tmp and its process budget, so they are
one trust domain: use one server per repro (as minimization and flakiness runs do), never
one server across repros from different people.
"""

from __future__ import annotations

import json
import logging
import select
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.engine.sandbox import forkserver_child as protocol
from app.engine.sandbox.capture import CapturedOutput
from app.engine.sandbox.runner import ProcessResult, Sandbox, SandboxSpec
from app.engine.sandbox.policy import check_file_names

log = logging.getLogger(__name__)
ZYGOTE_FILE = "scrub_zygote.py"
CANDIDATE_MODULE = "scrub_zygote_candidate"
CAPTURE_MODULE = "scrub_zygote_capture"  # capture.py, so a forked run keeps its output as a cold one does
MAX_REPLY_BYTES = 8 << 20  # head + tail are 128 KiB; JSON escaping at most ~6x that
REPLY_GRACE_S = 15.0  # beyond a candidate's own timeout, before the zygote counts as wedged


class ZygoteDied(RuntimeError):
    """The zygote exited or stopped answering."""


class ForkServer:
    """A zygote with `preload` imported, in one sandbox, running candidates as forked children."""

    def __init__(self, spec: SandboxSpec, *, jobs: int = 1, preload: Sequence[str] = ("torch",),
                 warmup: str | None = None, trusted: bool = False, max_restarts: int = 2,
                 start_timeout_s: float = 180.0):
        self.sandbox = Sandbox(spec)  # cold fallbacks: the spec as given
        self.sandbox.check_trust(trusted)
        # The zygote's own environment is pinned to one thread whatever the spec says, so no
        # library starts a pool at import (unpinned, numpy's OpenBLAS does); its children set
        # the spec's count themselves (`forkserver_child.py`).
        self._zygote_sandbox = Sandbox(replace(spec, threads=1))
        self.jobs = max(1, jobs)
        self.preload = list(preload)
        self.warmup = warmup  # trusted code run once in the zygote after the preload
        self.trusted = trusted
        self.restarts_left = max_restarts
        self.start_timeout_s = start_timeout_s
        self.ready_info: dict[str, Any] = {}
        self._slots = threading.BoundedSemaphore(self.jobs)
        self._lock = threading.Lock()  # guards the zygote's lifecycle and request writes
        self._stack: ExitStack | None = None
        self._process = None
        self._pending: dict[int, Future] = {}
        self._next_id = 0
        self._closed = False  # close() is final: a late start() (a background one) does nothing
        # Every zygote is spawned from this one thread, which lives until close(): the sandbox
        # dies with the *thread* that spawned it (PR_SET_PDEATHSIG), so a zygote started from a
        # short-lived thread (a background start, a `run_many` pool) would be killed with it.
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="forkserver-spawn")
        self._spawner_ident = self._spawner.submit(threading.get_ident).result()
        self._background_start: Future | None = None

    @property
    def python_version(self) -> str | None:
        return self.ready_info.get("python")

    @property
    def torch_version(self) -> str | None:
        return self.ready_info.get("torch_version")

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.popen.poll() is None

    def __enter__(self) -> ForkServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the zygote and wait for its `ready` message (raises `ZygoteDied` on failure)."""
        self._await_background_start()
        with self._lock:
            self._start_locked()

    def start_in_background(self) -> None:
        """Start the zygote without waiting, so its imports overlap the caller's work.

        The next `start`/`run` waits for it. A failure is logged; the first `run` then retries
        the start (and falls back to a cold run if that fails too).
        """
        def start_quietly() -> None:
            try:
                with self._lock:
                    self._start_locked()
            except ZygoteDied as exc:
                log.info("background zygote start failed: %s", exc)

        if not self._closed:
            self._background_start = self._spawner.submit(start_quietly)

    def _await_background_start(self) -> None:
        if self._background_start is not None:
            self._background_start.result()  # never raises: start_quietly catches
            self._background_start = None

    def close(self) -> None:
        """Stop the zygote and everything it started; in-flight candidates fail over to cold."""
        with self._lock:
            self._closed = True
            self._stop_locked()
        self._spawner.shutdown(wait=False)

    def run(self, source: str, *, timeout_s: float, argv: Sequence[str] = (),
            filename: str = "repro.py") -> ProcessResult:
        """Run one candidate as `python <filename> *argv`; fork mode if the zygote is up."""
        with self._slots:
            try:
                future = self._submit(source, timeout_s, argv, filename)
                reply = future.result(timeout=timeout_s + REPLY_GRACE_S)
            except (ZygoteDied, TimeoutError, OSError) as exc:
                log.warning("fork server unavailable (%s); running the candidate cold", exc)
                self._recycle()
                return self.sandbox.run(source, timeout_s=timeout_s, trusted=self.trusted,
                                        argv=argv, filename=filename)
        return _result_from_reply(reply)

    def run_many(self, sources: Iterable[str], *, timeout_s: float) -> list[ProcessResult]:
        """Run candidates `jobs` at a time; results in input order."""
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return list(pool.map(lambda src: self.run(src, timeout_s=timeout_s), sources))

    def _submit(self, source: str, timeout_s: float, argv: Sequence[str], filename: str) -> Future:
        check_file_names({filename: b""})
        self._await_background_start()  # (outside the lock: the start holds it)
        with self._lock:
            if not self.alive:
                if self._process is not None and self.restarts_left <= 0:
                    raise ZygoteDied("zygote died and no restarts are left")
                if self._process is not None:
                    self.restarts_left -= 1
                self._start_locked()
            self._next_id += 1
            future: Future = Future()
            self._pending[self._next_id] = future
            message = {"id": self._next_id, "source": source, "filename": filename,
                       "argv": list(argv), "timeout_s": timeout_s}
            body = json.dumps(message).encode()
            try:
                self._process.popen.stdin.write(protocol.HEADER.pack(len(body)) + body)
                self._process.popen.stdin.flush()
            except (BrokenPipeError, ValueError) as exc:
                self._pending.pop(self._next_id, None)
                raise ZygoteDied(f"cannot send to the zygote: {exc}") from exc
            return future

    def _recycle(self) -> None:
        """After a failure: a zygote still running did not answer in time (wedged); stop it.

        A dead zygote needs nothing here: the next `_submit` restarts it (or refuses to).
        """
        with self._lock:
            if self.alive:
                self._stop_locked(keep_record=True)

    def _start_locked(self) -> None:
        if self._closed:
            raise ZygoteDied("the fork server is closed")
        self._stop_locked(keep_record=True)
        stack = ExitStack()
        diagnostics = stack.enter_context(tempfile.TemporaryFile())
        files = {ZYGOTE_FILE: Path(protocol.__file__).read_bytes(),
                 f"{CANDIDATE_MODULE}.py": Path(protocol.__file__).with_name("forkserver_candidate.py").read_bytes(),
                 f"{CAPTURE_MODULE}.py": Path(protocol.__file__).with_name("capture.py").read_bytes()}
        config = json.dumps({"preload": self.preload, "warmup": self.warmup, "threads": self.sandbox.spec.threads,
                             "own_pid_namespace": self.sandbox.spec.kind == "bwrap",
                             "candidate_module": CANDIDATE_MODULE, "capture_module": CAPTURE_MODULE})
        spawn = self._zygote_sandbox.spawn(
            files, [self.sandbox.spec.python, ZYGOTE_FILE, config], trusted=self.trusted,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=diagnostics, slots=self.jobs + 1)
        try:
            process = self._in_spawner_thread(lambda: stack.enter_context(spawn))
            ready = _read_reply(process.popen, self.start_timeout_s)
        except BaseException:
            stack.close()
            raise
        if not ready or not ready.get("ready"):
            diagnostics.seek(0)
            detail = diagnostics.read()[-2000:].decode("utf-8", "replace")
            stack.close()
            raise ZygoteDied(f"zygote failed to start: {detail.strip() or 'no output'}")
        self._stack, self._process, self.ready_info = stack, process, ready
        if ready.get("warmup_error"):
            log.warning("zygote warm-up failed (candidates still run, slower): %s", ready["warmup_error"])
        if ready.get("threads_at_fork", 1) > 1:
            log.warning("zygote has %s threads after preloading %s: forking it is less safe",
                        ready["threads_at_fork"], self.preload)
        threading.Thread(target=self._read_replies, args=(process,), daemon=True,
                         name="forkserver-replies").start()

    def _in_spawner_thread(self, make: Callable[[], Any]) -> Any:
        if threading.get_ident() == self._spawner_ident:  # (a background start, already there)
            return make()
        return self._spawner.submit(make).result()

    def _stop_locked(self, keep_record: bool = False) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()  # kills the sandbox's process group and the uid's leftovers
        self._fail_pending(ZygoteDied("zygote stopped"))
        if not keep_record:
            self._process = None

    def _fail_pending(self, error: Exception) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    def _read_replies(self, process) -> None:
        while True:
            reply = _read_reply(process.popen, None)
            if reply is None:
                break
            future = self._pending.pop(reply.get("id"), None)
            if future is not None and not future.done():
                future.set_result(reply)
        with self._lock:
            if self._process is process:
                self._fail_pending(ZygoteDied("zygote exited"))


def _read_reply(popen: subprocess.Popen, timeout_s: float | None) -> dict | None:
    """One framed reply from the zygote, or None on EOF / when `timeout_s` passes."""
    stream = popen.stdout
    if timeout_s is not None:
        ready, _, _ = select.select([stream], [], [], timeout_s)
        if not ready:
            return None
    try:
        header = stream.read(protocol.HEADER.size)
        if len(header) < protocol.HEADER.size:
            return None
        size = protocol.HEADER.unpack(header)[0]
        if size > MAX_REPLY_BYTES:  # a zygote gone wrong; treat it as dead
            log.warning("fork server reply of %d bytes refused", size)
            return None
        body = stream.read(size)
        return json.loads(body)
    except (OSError, ValueError):
        return None


def _result_from_reply(reply: dict) -> ProcessResult:
    output = CapturedOutput(reply["head"].encode("latin-1"), reply["tail"].encode("latin-1"),
                            reply["total_bytes"], reply.get("middle", "").encode("latin-1"))
    timed_out = bool(reply["timed_out"])
    return ProcessResult(
        exit_code=None if timed_out else reply["exit_code"],
        signal=None if timed_out else reply["signal"],
        timed_out=timed_out,
        duration_s=float(reply["duration_s"]),
        output=output,
        mode="fork",
    )
