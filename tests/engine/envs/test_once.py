"""An environment directory is made once however many ask at the same moment, and a half-made
one (a killed maker, no completion marker) is made again."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from app.engine.envs.once import made_once


def test_concurrent_askers_make_it_once_and_all_get_it(tmp_path):
    target = tmp_path / "2.13.0+cpu"
    makes, results, barrier = [], [], threading.Barrier(6)

    def make() -> None:
        makes.append(1)
        target.mkdir()
        time.sleep(0.05)  # widen the window in which another asker could start making it too
        (target / "complete").write_text("yes")

    def ask() -> None:
        barrier.wait()
        results.append(made_once(target, (target / "complete").is_file, make))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(makes) == 1 and results == [target] * 6


def test_a_half_made_directory_is_removed_and_made_again(tmp_path):
    target = tmp_path / "overlay-abc"
    (target / "lib").mkdir(parents=True)
    (target / "lib" / "stale.py").write_text("left by a killed worker")

    def make() -> None:
        assert not target.exists()  # the leftover is gone before the maker starts
        target.mkdir()
        (target / "complete").write_text("yes")

    assert made_once(target, (target / "complete").is_file, make) == target
    assert sorted(p.name for p in Path(target).iterdir()) == ["complete"]
