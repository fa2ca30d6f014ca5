"""The worker's file access inside an untrusted checkout never follows a link."""

from __future__ import annotations

import os

import pytest

from app.engine.git.tree import Checkout, UnsafePath, is_link, is_regular_file, read_text, write_text


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


# The `Checkout` door: a link anywhere in the path is refused, whatever the operation.

@pytest.fixture
def deep(tree):
    root, outside = tree
    (outside / "host.py").write_text("HOST = 1\n")
    (root / "a" / "b").mkdir(parents=True)
    os.symlink(outside, root / "a" / "b" / "cfg")  # a link two directories down
    (root / "a" / "b" / "real.py").write_text("real = 1\n")
    return Checkout(root), outside


@pytest.mark.parametrize("rel", ["a/b/cfg/host.py", "linkdir/host.py", "a/b/cfg", "leak"])
def test_no_question_or_read_passes_a_link_anywhere_in_the_path(deep, rel):
    checkout, _ = deep
    assert not checkout.is_file(rel) and checkout.size(rel) is None
    with pytest.raises(UnsafePath):
        checkout.read_text(rel)


def test_exists_sees_a_link_itself_but_nothing_behind_it(deep):
    checkout, _ = deep
    assert checkout.exists("a/b/cfg") and checkout.is_link("a/b/cfg")
    assert not checkout.exists("a/b/cfg/host.py") and not checkout.is_dir("a/b/cfg")
    assert checkout.is_file("a/b/real.py") and checkout.is_dir("a/b")


def test_writes_never_land_behind_a_link_anywhere_in_the_path(deep):
    checkout, outside = deep
    for rel in ("a/b/cfg/host.py", "a/b/cfg/new/sitecustomize.py", "linkdir/sitecustomize.py"):
        with pytest.raises(UnsafePath):
            checkout.write_text(rel, "import os  # hostile\n")
    assert (outside / "host.py").read_text() == "HOST = 1\n"
    assert sorted(p.name for p in outside.iterdir()) == ["host.py", "secret.txt"]


def test_a_write_into_git_metadata_is_refused(deep):
    checkout, _ = deep
    with pytest.raises(UnsafePath):
        checkout.write_text(".git/hooks/post-checkout", "boom")


def test_listing_never_enters_a_linked_directory(deep):
    checkout, _ = deep
    listed = list(checkout.files())
    assert "a/b/real.py" in listed and "pkg/mod.py" in listed
    assert not any(p.startswith(("linkdir", "a/b/cfg")) for p in listed) and "leak" not in listed
    assert list(checkout.files("linkdir")) == [] and list(checkout.files("a", suffix=".py")) == ["a/b/real.py"]


def test_remove_drops_a_link_never_its_target(deep):
    checkout, outside = deep
    assert checkout.remove("a/b/cfg") and not checkout.exists("a/b/cfg")
    assert (outside / "host.py").exists()
    assert not checkout.remove("a/b/cfg/host.py") and not checkout.remove("missing.py")


def test_a_checkout_is_a_directory_for_git_and_subprocesses_but_has_no_slash(deep):
    checkout, _ = deep
    assert os.fspath(checkout) == str(checkout.root) and os.path.isdir(checkout)
    with pytest.raises(TypeError):
        checkout / "a"  # noqa: B018  (a Path into the checkout cannot be built by accident)
