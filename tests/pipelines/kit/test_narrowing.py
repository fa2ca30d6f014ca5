"""A culprit search between its steps is plain JSON both ways, and its overlays' texts stop
travelling once the probes are done."""

from __future__ import annotations

import json

import pytest

from app.engine.envs.nightlies import Nightly
from app.pipelines.kit.narrowing import (
    DONE,
    PROBE,
    PULLS,
    RANGE,
    CommitBuild,
    Narrowing,
    waits_for,
)

OLDER = Nightly("2026-03-03", "2.14.0.dev20260303+cpu", "torch-a.whl", "https://download.pytorch.org/a.whl")
NEWER = Nightly("2026-03-04", "2.14.0.dev20260304+cpu", "torch-b.whl", "https://download.pytorch.org/b.whl")


def probing() -> Narrowing:
    builds = [CommitBuild("c" * 40, "Fix it (#12)", [12], files={"torch/ops.py": "k", "torch/gone.py": None}),
              CommitBuild("d" * 40, "Vectorize", compiled=["aten/src/a.cpp"]),
              CommitBuild("e" * 40, "Huge", cannot="300+ files changed since the nightly")]
    return Narrowing(PROBE, OLDER, NEWER, "1" * 40, "2" * 40, True, base="b" * 40, commits=builds,
                     contents={"k": "def scale(x):\n    return 3 * x\n"}, total=3)


def test_a_narrowing_comes_back_from_its_json_as_it_was():
    narrowing = probing()
    assert Narrowing.from_dict(json.loads(json.dumps(narrowing.to_dict()))) == narrowing
    assert narrowing.commits[0].pull == 12 and narrowing.commits[1].pull is None


def test_the_texts_are_dropped_once_the_probes_are_done():
    assert probing().at(PULLS).contents == {} and probing().at(DONE).contents == {}
    assert probing().at(RANGE).contents == probing().contents  # still needed before the probes
    assert waits_for(probing(), PROBE) and not waits_for(probing(), PULLS) and not waits_for(None, RANGE)


def test_an_unknown_step_is_refused():
    with pytest.raises(ValueError, match="no culprit step"):
        Narrowing.from_dict(probing().to_dict() | {"step": "push"})
    with pytest.raises(ValueError, match="no culprit step"):
        probing().at("push")
