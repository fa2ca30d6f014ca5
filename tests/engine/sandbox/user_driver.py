"""Run one sandboxed repro as whoever runs this script; for the user-mode tests (see modes.py).

stdin: {"source", "timeout_s", "argv", "limits": {...}, "threads"}; stdout: one JSON line with
the ProcessResult (output as hex).
"""

import json
import sys

from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec


def main() -> None:
    request = json.load(sys.stdin)
    spec = SandboxSpec(kind="bwrap", limits=Limits(**request["limits"]), threads=request.get("threads"))
    box = Sandbox(spec)
    result = box.run(request["source"], timeout_s=request["timeout_s"], argv=request.get("argv", []))
    print(json.dumps({
        "mode": box.mode, "exit_code": result.exit_code, "signal": result.signal,
        "timed_out": result.timed_out, "duration_s": result.duration_s,
        "head": result.output.head.hex(), "tail": result.output.tail.hex(),
        "total_bytes": result.output.total_bytes, "leftovers_killed": result.leftovers_killed,
    }))


if __name__ == "__main__":
    main()
