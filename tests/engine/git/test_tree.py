"""The worker's file access inside an untrusted checkout never follows a link."""

from __future__ import annotations

import os

import pytest

from app.engine.git.tree import UnsafePath, is_link, is_regular_file, read_text, write_text


@pytest.fixture
def tree(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET")
    root = tmp_path / "checkout"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    os.symlink(outside / "secret.txt", root / "leak")
    os.symlink(outside, root / "linkdir")
    os.symlink("/proc/self/environ", root / "env")
    return root, outside


def test_reads_regular_files(tree):
    root, _ = tree
    assert read_text(root, "pkg/mod.py") == "x = 1\n"
    assert is_regular_file(root, "pkg/mod.py") and not is_link(root, "pkg/mod.py")


@pytest.mark.parametrize("rel", ["leak", "env", "linkdir/secret.txt", "../outside/secret.txt", "/etc/passwd"])
def test_refuses_links_and_escapes(tree, rel):
    root, _ = tree
    assert not is_regular_file(root, rel)
    with pytest.raises(UnsafePath):
        read_text(root, rel)


def test_links_are_seen_as_links(tree):
    root, _ = tree
    assert is_link(root, "leak") and is_link(root, "linkdir")


def test_write_replaces_a_link_instead_of_writing_through_it(tree):
    root, outside = tree
    write_text(root, "leak", "ours\n")
    assert (outside / "secret.txt").read_text() == "TOP-SECRET"
    assert not (root / "leak").is_symlink() and (root / "leak").read_text() == "ours\n"


def test_write_refuses_a_linked_directory(tree):
    root, outside = tree
    with pytest.raises(UnsafePath):
        write_text(root, "linkdir/test_new.py", "boom\n")
    assert not (outside / "test_new.py").exists()


def test_write_creates_missing_directories(tree):
    root, _ = tree
    write_text(root, "tests/unit/test_scrub.py", "ok\n")
    assert (root / "tests" / "unit" / "test_scrub.py").read_text() == "ok\n"
