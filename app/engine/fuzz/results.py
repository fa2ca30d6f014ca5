"""Per-device outcomes of a generated test, read from `pytest -v` output.

`pytest -v` prints one line per test: `path::name[cpu] PASSED [ 50%]` (a parametrized
function) or `path::TestX::test_x_cpu XFAIL` (a class instantiated per device); `-rA` prints
`PASSED path::name[cpu]` in the short summary. Both are read. `device_results`
maps each device of the run to its status (PASSED, FAILED, XFAIL, XPASS, SKIPPED, ERROR); the
device is the parameter id or the name's `_<device>` suffix, "" for a device-independent test.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_STATUS = "PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR"
_LINE = re.compile(rf"^(?P<node>\S+::\S+)\s+(?P<status>{_STATUS})\b", re.MULTILINE)  # -v
_SUMMARY = re.compile(rf"^(?P<status>{_STATUS}) (?P<node>\S+::\S+)", re.MULTILINE)  # -rA


def node_statuses(output: str) -> dict[str, str]:
    """Node id -> status, from `-v` lines or `-rA` short-summary lines (the last word wins)."""
    found = {m.group("node"): m.group("status") for m in _LINE.finditer(output)}
    found |= {m.group("node"): m.group("status") for m in _SUMMARY.finditer(output)}
    return found


def device_of_node(node: str, devices: Sequence[str]) -> str | None:
    """The device a node id names among `devices` (`[accel]`, `_cuda`, `_cuda:0`), else None."""
    name = node.rsplit("::", 1)[-1]
    for device in sorted(devices, key=len, reverse=True):
        if re.search(rf"(\[{re.escape(device)}(:\d+)?\]|_{re.escape(device)}(_\d+)?)$", name):
            return device
    return None


def device_results(output: str, devices: Sequence[str], name: str) -> dict[str, str]:
    """Device -> status of the test `name`; {"": status} when it is device-independent."""
    found: dict[str, str] = {}
    for node, status in node_statuses(output).items():
        if name not in node:
            continue
        device = device_of_node(node, devices) if devices else ""
        if device is not None:
            found[device] = status
    return found


def expected(devices: Sequence[str], failing: Sequence[str], *, marked: bool, style: str = "pytest") -> dict[str, str]:
    """What each device must show: failing devices FAILED (XFAIL once marked), others PASSED
    (a device-independent test is device "", failing when `failing` holds "").

    PyTorch's per-device `expectedFailureCPU` (and kin) swallow the failure and report a pass
    (measured with torch 2.13 under pytest), so a marked failing device of a device-generic
    PyTorch test shows PASSED; that it fails at all was checked on the unmarked run."""
    keys = list(devices) or [""]
    bad = ("PASSED" if style == "pytorch" and devices else "XFAIL") if marked else "FAILED"
    return {d: (bad if d in failing else "PASSED") for d in keys}
