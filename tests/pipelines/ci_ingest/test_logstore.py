import os
import time

from app.pipelines.ci_ingest.logstore import Caps, archive_path, make_room


def _write(path, size: int, age: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))


def test_the_oldest_archives_go_first_and_the_new_one_stays(tmp_path):
    caps = Caps(repo_bytes=250, total_bytes=400)
    old = [archive_path(tmp_path, "o/a", run, 1) for run in (1, 2, 3)]
    for age, path in zip((30, 20, 10), old):
        _write(path, 100, age)
    other = archive_path(tmp_path, "o/b", 9, 1)
    _write(other, 100, 40)  # the oldest of all, in another repository
    new = archive_path(tmp_path, "o/a", 4, 1)
    _write(new, 100, 0)
    evicted = make_room(tmp_path, new, caps)
    assert sorted(p.name for p in new.parent.iterdir()) == ["run-3-attempt-1.zip", "run-4-attempt-1.zip"]
    assert other.exists()  # 300 bytes in all now: under the total cap
    assert (evicted.files, evicted.bytes) == (2, 200) and "evicted 2 older archive(s)" in evicted.describe()


def test_the_total_cap_evicts_across_repositories_but_never_the_new_archive(tmp_path):
    caps = Caps(repo_bytes=1000, total_bytes=150)
    other = archive_path(tmp_path, "o/b", 9, 1)
    _write(other, 100, 40)
    new = archive_path(tmp_path, "o/a", 1, 1)
    _write(new, 200, 0)  # alone over the total cap: kept (the download already refused bigger ones)
    make_room(tmp_path, new, caps)
    assert new.exists() and not other.exists()
    assert Caps(1 << 20, 1 << 19).per_archive == 1 << 19 and make_room(tmp_path, new, caps).describe() == ""
