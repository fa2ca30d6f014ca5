"""Code an experiment runs before the repro (its prologue), and how to read what it printed.

A probe that reports prints one line to stderr, `SCRUB-PROBE <kind> <json>`; `markers(output)`
reads them back. The repro is untrusted and could print such a line itself: it can only mislead
the report about its own issue, which it could do anyway by what it prints.

Names a prologue binds start with `_scrub_` (one underscore: no name mangling inside classes).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<function>\S+))?')
MARKER = re.compile(r"^SCRUB-PROBE (?P<kind>[\w-]+) (?P<data>\{.*\})\s*$", re.MULTILINE)

DETERMINISTIC = "import torch\ntorch.use_deterministic_algorithms(True)\n"
ONE_THREAD = "import torch\ntorch.set_num_threads(1)\n"
SEEDS = """\
import random
random.seed(0)
import torch
torch.manual_seed(0)
try:
    import numpy
    numpy.random.seed(0)
except ImportError:
    pass
"""
CUDA_BLOCKING = "import os\nos.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n"
ANOMALY = "import torch\ntorch.autograd.set_detect_anomaly(True)\n"

# The first operation whose output holds a NaN (or an Inf, with `inf`) while none of its inputs
# did: a dispatch mode sees every aten op, forward and backward.
FIRST_NONFINITE = """\
import json as _scrub_json, linecache as _scrub_lines, sys as _scrub_sys
import torch as _scrub_torch
from torch.utils._python_dispatch import TorchDispatchMode as _ScrubMode
from torch.utils._pytree import tree_leaves as _scrub_leaves

_SCRUB_FILE = globals().get("__file__")
_SCRUB_INF = {inf}
_SCRUB_MACHINERY = ("_python_dispatch", "/_ops.py", "_pytree", "<scrub-experiment>", "/_dynamo/", "/_compile.py",
                    "_contextlib", "/overrides.py", "/_jit_internal.py")


def _scrub_kind(value):
    if not isinstance(value, _scrub_torch.Tensor) or value.numel() == 0 or value.is_meta:
        return None
    if not (value.is_floating_point() or value.is_complex()):
        return None
    try:
        if bool(_scrub_torch.isnan(value).any()):
            return "NaN"
        if _SCRUB_INF and bool(_scrub_torch.isinf(value).any()):
            return "Inf"
    except Exception:
        return None
    return None


def _scrub_where():
    frame, library = _scrub_sys._getframe(2), None
    while frame is not None:
        name = frame.f_code.co_filename
        if name == _SCRUB_FILE:
            where = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
            code = _scrub_lines.getline(name, frame.f_lineno).strip()
            return where, frame.f_lineno, code, library
        if library is None and "torch" in name and not any(m in name for m in _SCRUB_MACHINERY):
            library = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
        frame = frame.f_back
    return None, None, None, library


class _ScrubFirstNonFinite(_ScrubMode):
    found = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {{}}))
        if not type(self).found:
            kinds = [k for k in map(_scrub_kind, _scrub_leaves(out)) if k]
            if kinds and not any(map(_scrub_kind, _scrub_leaves((args, kwargs or {{}})))):
                type(self).found = True
                where, line, code, library = _scrub_where()
                data = {{"op": str(func), "kind": kinds[0], "where": where, "line": line, "code": code,
                        "library": library}}
                print("SCRUB-PROBE first-nonfinite " + _scrub_json.dumps(data), file=_scrub_sys.stderr, flush=True)
        return out


_ScrubFirstNonFinite().__enter__()
"""

# torch.compile wrapped: every call of a compiled function also runs eagerly on deep copies of
# its inputs (and of a module), and the two results are compared; a summary prints at exit.
COMPARE_WITH_EAGER = """\
import atexit as _scrub_atexit, copy as _scrub_copy, json as _scrub_json, sys as _scrub_sys
import torch as _scrub_torch

_scrub_compile = _scrub_torch.compile
_scrub_seen = {"calls": 0, "differ": 0, "first": None, "eager_failed": 0}


class _ScrubCompared:
    def __init__(self, model, compiled):
        self._scrub_model, self._scrub_compiled = model, compiled

    def __getattr__(self, name):
        return getattr(self._scrub_compiled, name)

    def __call__(self, *args, **kwargs):
        try:
            model, inputs = _scrub_copy.deepcopy((self._scrub_model, (args, kwargs)))
            expected = model(*inputs[0], **inputs[1])
        except Exception:
            _scrub_seen["eager_failed"] += 1
            return self._scrub_compiled(*args, **kwargs)
        got = self._scrub_compiled(*args, **kwargs)
        _scrub_seen["calls"] += 1
        try:
            _scrub_torch.testing.assert_close(got, expected, equal_nan=True)
        except (AssertionError, TypeError, ValueError, RuntimeError) as error:
            _scrub_seen["differ"] += 1
            if _scrub_seen["first"] is None:
                _scrub_seen["first"] = [line for line in str(error).splitlines() if line.strip()][:4]
        return got


def _scrub_compare_compile(model=None, **kwargs):
    if model is None:
        return lambda fn: _scrub_compare_compile(fn, **kwargs)
    return _ScrubCompared(model, _scrub_compile(model, **kwargs))


def _scrub_report():
    print("SCRUB-PROBE compare " + _scrub_json.dumps(_scrub_seen), file=_scrub_sys.stderr, flush=True)


_scrub_torch.compile = _scrub_compare_compile
_scrub_atexit.register(_scrub_report)
"""


def first_nonfinite(inf: bool = False) -> str:
    return FIRST_NONFINITE.replace("{inf}", repr(inf)).replace("{{", "{").replace("}}", "}")


def markers(output: str, kind: str) -> list[dict[str, Any]]:
    """The probe lines of `kind` in a run's output, parsed."""
    found = []
    for match in MARKER.finditer(output):
        if match.group("kind") == kind:
            try:
                found.append(json.loads(match.group("data")))
            except ValueError:
                continue
    return found


@dataclass(frozen=True)
class Frame:
    line: int
    code: str
    function: str

    def describe(self, shift: int = 0) -> str:
        code = f": `{self.code}`" if self.code else ""
        where = f" in `{self.function}`" if self.function and self.function != "<module>" else ""
        return f"line {self.line - shift}{where}{code}"


def last_frame(output: str, filename: str = "repro.py") -> Frame | None:
    """The innermost frame of the repro file in the last traceback of `output`."""
    start = output.rfind("Traceback (most recent call last):")
    if start < 0:
        return None
    found: Frame | None = None
    lines = output[start:].splitlines()[1:]
    for index, text in enumerate(lines):
        match = _FRAME.match(text)
        if match and match.group("path").endswith(filename):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            code = following.strip() if following.startswith("    ") and not _FRAME.match(following) else ""
            found = Frame(int(match.group("line")), code, match.group("function") or "")
        elif text and not text[0].isspace():
            break
    return found


_ANOMALY = re.compile(r"Error detected in (?P<node>\w+)\. Traceback of forward call that caused the error:\n"
                      r"(?P<trace>(?:[ \t]+.*\n?)+)")
_RETURNED = re.compile(r"Function '(?P<node>\w+)' returned (?P<what>nan|inf) values in its (?P<index>\d+)\w* output")
_NONDETERMINISTIC = re.compile(r"(?P<op>[\w.:]+) does not have a deterministic implementation")


def anomaly(output: str, filename: str = "repro.py") -> tuple[str | None, Frame | None, str | None]:
    """(the backward node named, the forward frame in the repro, nan/inf) from anomaly mode's output."""
    found = _ANOMALY.search(output)
    returned = _RETURNED.search(output)
    node = (returned.group("node") if returned else None) or (found.group("node") if found else None)
    frame = None
    if found:
        text = "Traceback (most recent call last):\n" + found.group("trace")
        frame = last_frame(text, filename)
    return node, frame, returned.group("what") if returned else None


def nondeterministic_op(output: str) -> str | None:
    found = _NONDETERMINISTIC.search(output)
    return found.group("op") if found else None
