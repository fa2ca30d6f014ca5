"""The ingest's typed state: stored JSON in, typed parts out, same JSON back."""

from __future__ import annotations

from app.engine.cilogs.archive import Failure
from app.pipelines.ci_ingest.state import IngestState

FAILURE = Failure(job="tests", test="tests/test_x.py::test_y", exception="ZeroDivisionError",
                  message="division by zero", kind="exception", signature="s" * 64)


def test_the_ingest_state_reads_its_stage_outputs():
    state = IngestState.load({"logs_path": "/l.zip", "jobs": [{"id": 1, "name": "tests", "conclusion": "failure"}],
                              "workflow_run": {"id": 7}, "spawned_runs": [3], "failures": [FAILURE.to_dict()]})
    assert state.logs_path == "/l.zip" and state.jobs[0]["name"] == "tests"
    assert state.workflow_run["id"] == 7 and state.spawned_runs == [3]
    assert state.failures == [FAILURE] and state.to_dict()["failures"] == [FAILURE.to_dict()]
