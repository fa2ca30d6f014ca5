"""What stopped a run before the bug could show: the environment, not the code under test.

A failed run says nothing about the bug when it stopped at something the worker or the thread
lacks (`stopped_by(run, source)`):

- `unavailable-hardware`: a GPU (or MPS, XPU) the CPU-only build cannot give;
- `missing-dependency`: a package the workers do not have (the seed: ask, do not install);
- `needs-reproduction`: an input file the script names that the thread does not give (an
  attachment, a download, a path on the reporter's machine: `torch.load('bug.pt')`);
- `inconclusive`: a download over the network, which the sandbox does not reach.

Every run of the script stops the same way, so one run settles these (`ENVIRONMENT`). The
classifier first checks that the report is not itself about that error (a reported
`ModuleNotFoundError` is the bug). Pure: nothing runs.
"""

from __future__ import annotations

import re
from typing import Any

from app.domain import Verdict
from app.engine.verdict.signature import short_class

NO_GPU = re.compile(r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|no CUDA GPUs are available"
                    r"|CUDA driver initialization failed|Attempting to deserialize object on a CUDA device"
                    r"|No CUDA GPUs are available|not compiled with (?:CUDA|MPS|XPU)|MPS backend (?:is )?not available"
                    r"|with arguments from the '(?:CUDA|MPS|XPU|HIP)' backend", re.I)
IMPORT_ERRORS = ("ModuleNotFoundError", "ImportError")
_NO_SUCH_FILE = re.compile(r"No such file or directory: '(?P<path>[^']+)'")
_NO_NETWORK = re.compile(r"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
                         r"nodename nor servname|Failed to establish a new connection|Failed to resolve|"
                         r"couldn't connect to '?https?://|<urlopen error|Could not resolve host", re.I)
NETWORK = "the network"
# Verdicts a single run settles: the environment stopped it before the bug could show.
ENVIRONMENT = (Verdict.unavailable_hardware, Verdict.missing_dependency, Verdict.needs_reproduction)


def stopped_by(run: dict[str, Any], source: str = "") -> str | None:
    """The verdict for a failed run the environment stopped (see the module docstring), or None."""
    if run.get("outcome") != "error":
        return None
    if NO_GPU.search(run.get("message") or ""):
        return Verdict.unavailable_hardware
    if short_class(run.get("exception") or "") in IMPORT_ERRORS:
        return Verdict.missing_dependency
    missing = missing_input(run, source)
    if missing == NETWORK:
        return Verdict.inconclusive
    return Verdict.needs_reproduction if missing else None


def missing_input(run: dict[str, Any], source: str) -> str | None:
    """What a failed run lacked that the thread does not give: a file the script names
    (`'bug.pt'`), or `NETWORK` for a download the sandbox cannot make; None otherwise (a file
    the script does not name is some other failure)."""
    text = run.get("message") or ""  # the error the run ended with, not something printed on the way
    found = _NO_SUCH_FILE.search(text)
    if found and found.group("path") in (source or ""):
        return found.group("path")
    return NETWORK if _NO_NETWORK.search(text) else None


def missing_module(run: dict[str, Any]) -> str | None:
    """`transformers` from "No module named 'transformers.models'"."""
    found = re.search(r"No module named '([\w.]+)'", run.get("message") or "")
    return found.group(1).split(".")[0] if found else None


__all__ = ["ENVIRONMENT", "IMPORT_ERRORS", "NETWORK", "NO_GPU", "missing_input", "missing_module", "stopped_by"]
