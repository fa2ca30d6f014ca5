"""The candidate side of the zygote: what a forked child does. Runs INSIDE the sandbox.

Shipped beside `forkserver_child.py` (the zygote) and imported by it; standard library only.
Each child: own process group, default SIGINT/SIGCHLD/SIGTERM, RLIMIT_CPU from its timeout,
random generators reseeded (`fresh_random_state`), a fresh cwd, the preload's exit handlers (minus `weakref.finalize`'s, see `reset_exit_handlers`),
a fresh `__main__`, `sys.argv` and `sys.path[0]`; exceptions print through `sys.excepthook`
without the zygote's frame (exit 1), `SystemExit` maps to its code; then non-daemon threads
are joined, exit handlers run, streams are flushed, and the child leaves with `os._exit`.
"""

import atexit
import builtins
import os
import resource
import signal
import sys
import threading
import types
import weakref

PRELOAD_EXIT_HANDLERS = []


def record_exit_handlers():
    """Record the handlers registered from now on (the preload's); returns `stop()`."""
    register = atexit.register

    def recording(func, *args, **kwargs):
        PRELOAD_EXIT_HANDLERS.append((func, args, kwargs))
        return register(func, *args, **kwargs)

    def stop():
        atexit.register = register

    atexit.register = recording
    return stop


def reset_exit_handlers():
    """In a child: the preload's exit handlers, minus `weakref.finalize`'s.

    That one walks every finalizer the preload created and, copy-on-write in a forked child,
    costs ~50 ms per candidate; it is registered again as soon as the candidate creates a
    finalizer itself (`_registered_with_atexit = False`).
    """
    atexit._clear()
    for func, args, kwargs in PRELOAD_EXIT_HANDLERS:
        if func != getattr(weakref.finalize, "_exitfunc", None):  # bound: compare with ==
            atexit.register(func, *args, **kwargs)
    weakref.finalize._registered_with_atexit = False


def run_candidate(request, workdir, closing_fds):
    """Child side: never returns."""
    code = 1
    try:
        os.setpgid(0, 0)
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in closing_fds:
            os.close(fd)
        timeout = float(request.get("timeout_s") or 60)
        threads = request.get("threads")
        if request.get("unpinned"):  # the zygote's pinning is not the candidate's environment
            for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
                os.environ.pop(name, None)
        if threads and "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(int(threads))  # no pool in the zygote: safe
        cpu = int(timeout * max(1, threads or 1)) + 5
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        reset_exit_handlers()
        fresh_random_state()
        os.chdir(workdir)
        path = os.path.join(workdir, request.get("filename") or "repro.py")
        source = request["source"]
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        main = types.ModuleType("__main__")
        main.__file__ = path
        main.__builtins__ = builtins
        sys.modules["__main__"] = main
        sys.argv = [path, *request.get("argv", [])]
        sys.path[0] = workdir
        code = execute(source, path, main)
        if hasattr(threading, "_shutdown"):
            threading._shutdown()  # join non-daemon threads, as interpreter exit does
        atexit._run_exitfuncs()
    except BaseException as exc:  # the child must reach os._exit whatever happens
        code = exit_code_of(exc) if isinstance(exc, SystemExit) else 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def fresh_random_state():
    """Each child draws its own random numbers, as each cold run does: a forked child inherits
    the zygote's generators, so without this every warm run of a flaky repro would draw the same
    numbers and look deterministic. Python's `random`, NumPy's global generator and torch's
    default generators are reseeded from the OS's entropy (torch's CUDA seeding stays lazy).
    The hash seed cannot change after start: a repro whose outcome depends on it needs cold
    runs (`PYTHONHASHSEED` is the zygote's for every child)."""
    random = sys.modules.get("random")
    if random is not None:
        random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None and hasattr(numpy, "random"):
        numpy.random.seed()
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "seed"):
        torch.seed()


def execute(source, path, main):
    try:
        exec(compile(source, path, "exec"), main.__dict__)
    except SystemExit as exc:
        return exit_code_of(exc)
    except BaseException as exc:  # report like the interpreter does, without our own frame
        if exc.__traceback__ is not None:
            exc.__traceback__ = exc.__traceback__.tb_next  # the excepthook reads it from here
        sys.excepthook(type(exc), exc, exc.__traceback__)
        return 1
    return 0


def exit_code_of(exc):
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1
