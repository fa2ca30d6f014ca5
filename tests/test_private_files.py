"""The data dir 0700, the database 0600: made so from the first byte, tightened when found open."""

from __future__ import annotations

import os
import stat

from app.private_files import private_dir, private_file


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_dir_and_file_are_private_whatever_the_umask(tmp_path):
    old = os.umask(0o000)  # the loosest umask: the mode given to mkdir/open alone decides
    try:
        made = private_dir(tmp_path / "a" / "data")
        db = private_file(made / "scrub.db")
    finally:
        os.umask(old)
    assert mode(made) == 0o700 and mode(db) == 0o600 and db.read_bytes() == b""


def test_an_open_dir_and_file_left_by_an_older_version_are_tightened(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    (data / "scrub.db").write_bytes(b"SQLite format 3\x00")
    os.chmod(data / "scrub.db", 0o644)
    private_dir(data)
    private_file(data / "scrub.db")
    assert mode(data) == 0o700 and mode(data / "scrub.db") == 0o600
    assert (data / "scrub.db").read_bytes() == b"SQLite format 3\x00"  # content kept


def test_a_tight_mode_is_left_alone(tmp_path):
    data = private_dir(tmp_path / "data")
    os.chmod(data, 0o500)
    private_dir(data)
    assert mode(data) == 0o500
    os.chmod(data, 0o700)
