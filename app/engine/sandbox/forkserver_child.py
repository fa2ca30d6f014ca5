"""The zygote: runs INSIDE the sandbox, imports torch once, forks one child per candidate.

`ForkServer` copies this file and `forkserver_candidate.py` into the sandbox and runs this one
with the sandboxed interpreter, so both use the standard library only. (The service imports
this module only for its protocol constants.)

Protocol (stdin -> requests, stdout -> replies; each a 4-byte big-endian length + UTF-8 JSON):
  zygote -> host  {"ready": true, "python": "3.11.7", "torch_version": "...", "preload_s": 1.2,
                   "warmup_s": 0.4, "warmup_error": null, "threads_at_fork": 1}
  host -> zygote  {"id": 7, "source": "...", "filename": "repro.py", "argv": [], "timeout_s": 30}
  zygote -> host  {"id": 7, "exit_code": 1, "signal": null, "timed_out": false, "duration_s": 0.05,
                   "head": "...", "tail": "...", "total_bytes": 123, "middle": "..."}
                  (head/tail/middle: latin-1 text; `middle`: the exception blocks `capture.py`
                   keeps from what was dropped, when the capture module was shipped)
EOF on stdin: kill every child and exit.

Fork safety, as measured on torch 2.x:
- the zygote imports and never computes in parallel: no OpenMP/MKL pool exists at fork time
  (libgomp is not fork-safe once its pool exists). Its environment pins every thread pool to 1
  (unpinned, numpy's OpenBLAS starts one at import), and it runs torch single-threaded
  (`set_num_threads(1)` sets, starts nothing) for its own preload and warm-up (the host's
  snippet, e.g. one `torch.compile` of a tiny module, so every child skips Dynamo's first-use
  setup, on tiny tensors); each child then sets the spec's thread count (`config["threads"]`,
  or torch's default when unpinned) before the candidate runs, so a candidate's own parallel
  region, and what it forks after it, behave as in a cold run;
- the zygote has no threads of its own: one `select` loop over the request pipe, the children's
  output pipes and a SIGCHLD wakeup pipe; `waitpid(WNOHANG)` reaps;
- `gc.freeze()` after the import keeps children from copying the preloaded heap;
- exit handlers the preload registered are re-registered in each child, except
  `weakref.finalize`'s, which walks every preloaded finalizer and, copy-on-write, costs a
  forked child ~50 ms; it comes back as soon as the candidate creates a finalizer itself.
What a child does is in `forkserver_candidate.py`, shipped beside this file.
"""

import gc
import importlib
import json
import os
import select
import shutil
import signal
import struct
import sys
import tempfile
import time

HEADER = struct.Struct(">I")
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024
CAPTURE = None  # the shipped capture.py (set by `serve`), or None: head and tail only


def read_message(fd):
    header = _read_exact(fd, HEADER.size)
    if header is None:
        return None
    body = _read_exact(fd, HEADER.unpack(header)[0])
    return None if body is None else json.loads(body)


def write_message(fd, message):
    body = json.dumps(message).encode()
    data = HEADER.pack(len(body)) + body
    while data:
        data = data[os.write(fd, data):]


def _read_exact(fd, size):
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


class Child:
    """A running candidate: its pid (= process group), output pipe, buffers and deadline."""

    def __init__(self, request, pid, output_fd, started, workdir):
        self.request = request
        self.workdir = workdir
        self.pid = pid
        self.output_fd = output_fd
        self.started = started
        self.deadline = started + float(request.get("timeout_s") or 60)
        self.buffer = CAPTURE.OutputBuffer(HEAD_BYTES, TAIL_BYTES) if CAPTURE else None
        self.head = bytearray()
        self.tail = bytearray()
        self.middle = b""
        self.total = 0
        self.timed_out = False

    def feed(self, data):
        if self.buffer is not None:
            self.buffer.feed(data)
            return
        self.total += len(data)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        if len(self.tail) > TAIL_BYTES:
            del self.tail[: len(self.tail) - TAIL_BYTES]

    def finish(self):
        """Move what the capture module kept into head/tail/middle/total."""
        if self.buffer is not None:
            kept = self.buffer.result()
            self.head, self.tail, self.middle, self.total = kept.head, kept.tail, kept.middle, kept.total_bytes

    def drain(self):
        """Read what the pipe holds now; close it on EOF."""
        while self.output_fd is not None:
            try:
                chunk = os.read(self.output_fd, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                os.close(self.output_fd)
                self.output_fd = None
                return
            self.feed(chunk)


def kill_strays(children):
    """Kill processes of this sandbox outside every live candidate's group (escaped daemons).

    Only ever called inside the sandbox's own pid namespace (`config["own_pid_namespace"]`),
    where every process but init and the zygote belongs to some candidate. Waits (up to a
    second) until they are gone, so a reply means nothing of the candidate runs.
    """
    keep = {1, os.getpid()}
    live_groups = {child.pid for child in children.values()}
    killed = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in keep:
            continue
        try:
            if os.getpgid(int(name)) not in live_groups:
                os.kill(int(name), signal.SIGKILL)
                killed.append(int(name))
        except (ProcessLookupError, PermissionError):
            continue
    deadline = time.monotonic() + 1.0
    while killed and time.monotonic() < deadline:
        killed = [pid for pid in killed if _alive(pid)]
        if killed:
            time.sleep(0.005)


def _alive(pid):
    """True while `pid` exists and is not a zombie (its reaper may be the namespace's init)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def warm_up(code):
    """Run the host's warm-up snippet (trusted, ours) once, so each child skips that first-use work.

    Returns (seconds, error text or None): a failing warm-up costs speed, never correctness.
    """
    if not code:
        return 0.0, None
    started = time.monotonic()
    try:
        exec(compile(code, "<zygote warm-up>", "exec"), {"__name__": "__zygote_warmup__"})
    except Exception as exc:  # noqa: BLE001 - reported in the ready message
        return time.monotonic() - started, f"{type(exc).__name__}: {exc}"
    return time.monotonic() - started, None


def serve(config):
    requests_fd, replies_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray prints from preloaded modules go to the diagnostics stream
    started = time.monotonic()
    torch_version = None
    child_threads = config.get("threads")
    candidate = importlib.import_module(config.get("candidate_module", "forkserver_candidate"))
    global CAPTURE
    if config.get("capture_module"):
        CAPTURE = importlib.import_module(config["capture_module"])
    stop_recording = candidate.record_exit_handlers()
    for name in config.get("preload", []):
        module = importlib.import_module(name)
        if name == "torch":
            # unpinned: every CPU this sandbox may use (the zygote itself runs with the thread
            # environment pinned to 1, so torch's own default here would be 1)
            child_threads = child_threads or len(os.sched_getaffinity(0))
            module.set_num_threads(1)  # the zygote's own work: sets, starts no pool
            torch_version = module.__version__
    warmup_s, warmup_error = warm_up(config.get("warmup"))
    stop_recording()
    gc.collect()
    gc.freeze()
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    write_message(replies_fd, {"ready": True, "python": ".".join(map(str, sys.version_info[:3])),
                               "torch_version": torch_version, "preload_s": time.monotonic() - started,
                               "warmup_s": warmup_s, "warmup_error": warmup_error,
                               "threads_at_fork": len(os.listdir("/proc/self/task"))})
    own_pid_namespace = bool(config.get("own_pid_namespace")) and os.getpid() <= 2
    children = {}
    accepting = True
    while accepting or children:
        now = time.monotonic()
        wait = min((c.deadline for c in children.values()), default=now + 3600) - now
        watched = [wake_r] + ([requests_fd] if accepting else [])
        watched += [c.output_fd for c in children.values() if c.output_fd is not None]
        try:
            readable, _, _ = select.select(watched, [], [], max(0.0, wait))
        except InterruptedError:
            readable = []
        if wake_r in readable:
            while True:
                try:
                    if not os.read(wake_r, 4096):
                        break
                except BlockingIOError:
                    break
        for child in children.values():
            if child.output_fd in readable:
                child.drain()
        if requests_fd in readable:
            request = read_message(requests_fd)
            if request is None:
                accepting = False
                for child in children.values():
                    _kill_group(child.pid)
            else:
                inherited = [c.output_fd for c in children.values() if c.output_fd is not None]
                request["threads"] = child_threads
                request["unpinned"] = config.get("threads") is None
                child = start(request, [requests_fd, replies_fd, wake_r, wake_w, devnull, *inherited], candidate)
                children[child.pid] = child
        reap(children, replies_fd, own_pid_namespace)


def start(request, closing_fds, candidate):
    """Fork a child that runs `request` (via the `candidate` module); the parent keeps its pipe."""
    workdir = tempfile.mkdtemp(prefix=f"candidate-{request['id']}-")  # under $TMPDIR
    output_r, output_w = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        os.dup2(output_w, 1)
        os.dup2(output_w, 2)
        os.close(output_w)
        candidate.run_candidate(request, workdir, [output_r, *closing_fds])
    try:
        os.setpgid(pid, pid)  # also done by the child; whichever runs first wins the race
    except (PermissionError, ProcessLookupError):
        pass
    os.close(output_w)
    os.set_blocking(output_r, False)
    return Child(request, pid, output_r, time.monotonic(), workdir)


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def reap(children, replies_fd, own_pid_namespace):
    now = time.monotonic()
    for child in children.values():
        if not child.timed_out and now >= child.deadline:
            child.timed_out = True
            _kill_group(child.pid)
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0 or pid not in children:
            return
        child = children.pop(pid)
        _kill_group(pid)  # whatever the candidate left in its group
        child.drain()
        child.finish()
        if child.output_fd is not None:
            os.close(child.output_fd)
        if own_pid_namespace:
            kill_strays(children)
        shutil.rmtree(child.workdir, ignore_errors=True)
        signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        exit_code = 128 + signum if signum else os.WEXITSTATUS(status)
        write_message(replies_fd, {
            "id": child.request["id"], "exit_code": exit_code, "signal": signum,
            "timed_out": child.timed_out, "duration_s": time.monotonic() - child.started,
            "head": bytes(child.head).decode("latin-1"), "tail": bytes(child.tail).decode("latin-1"),
            "total_bytes": child.total, "middle": bytes(child.middle).decode("latin-1"),
        })


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
