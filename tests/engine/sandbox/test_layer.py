"""The bwrap arguments of a checkout layer: one bind per entry, a spine only where files are placed."""

from __future__ import annotations

import os

import pytest

from app.engine.sandbox.layer import LayerError, TreeLayer, layer_args, materialize, spine, tree_bytes


def _tree(tmp_path):
    root = tmp_path / "repo"
    for rel in ("torch/__init__.py", "torch/nn/mod.py", "test/test_a.py", "test/test_b.py", "setup.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
    (root / ".git").write_text("gitdir: /host/mirror\n")
    os.symlink("/etc/shadow", root / "test" / "evil")
    return root


def _pairs(args, flag):
    return [(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a == flag]


def test_spine_is_every_directory_on_the_way():
    assert spine({"repro.py"}) == {""}
    assert spine({"test/inductor/test_new.py", "torch/lib"}) == {"", "test", "test/inductor", "torch"}


def test_an_unplaced_tree_is_one_bind_per_top_level_entry(tmp_path):
    root = _tree(tmp_path)
    args, fds = layer_args(TreeLayer(root))
    binds = dict((dest, src) for src, dest in _pairs(args, "--ro-bind"))
    assert binds == {"/tmp/work/setup.py": f"{root}/setup.py", "/tmp/work/test": f"{root}/test",
                     "/tmp/work/torch": f"{root}/torch"}
    assert "/tmp/work/.git" not in args and fds == []


def test_a_placed_file_copies_only_its_spine(tmp_path):
    root = _tree(tmp_path)
    layer = TreeLayer(root, files={"test/test_new.py": b"new", "test/test_a.py": b"replaced"},
                      binds={"torch/_C.so": "/envs/n1/torch/_C.so"})
    args, fds = layer_args(layer, memfd=lambda name, content: 100 + len(content))
    binds = dict((dest, src) for src, dest in _pairs(args, "--ro-bind"))
    assert binds["/tmp/work/test/test_b.py"] == f"{root}/test/test_b.py"  # a sibling, bound back
    assert "/tmp/work/test/test_a.py" not in binds  # replaced by the placed file, not bound
    assert binds["/tmp/work/torch/nn"] == f"{root}/torch/nn" and binds["/tmp/work/torch/_C.so"] == "/envs/n1/torch/_C.so"
    assert ("/etc/shadow", "/tmp/work/test/evil") in _pairs(args, "--symlink")  # a link stays a link
    files = dict((dest, fd) for fd, dest in _pairs(args, "--file"))
    assert files == {"/tmp/work/test/test_a.py": "108", "/tmp/work/test/test_new.py": "103"} and fds == [108, 103]
    dirs = [args[i + 1] for i, a in enumerate(args) if a == "--dir"]
    assert dirs == ["/tmp/work", "/tmp/work/test", "/tmp/work/torch"]


def test_the_source_function_maps_host_paths(tmp_path):
    root = _tree(tmp_path)
    args, _ = layer_args(TreeLayer(root), source=lambda path: path.replace(str(root), "/staged/0"))
    assert ("/staged/0/torch", "/tmp/work/torch") in _pairs(args, "--ro-bind")


@pytest.mark.parametrize("bad", ["../x.py", "/etc/passwd", "a/../../b", ""])
def test_placed_paths_stay_inside(tmp_path, bad):
    with pytest.raises(LayerError):
        layer_args(TreeLayer(_tree(tmp_path), files={bad: b"x"}))


def test_materialize_and_size(tmp_path):
    root = _tree(tmp_path)
    target = tmp_path / "copy"
    materialize(TreeLayer(root, files={"torch/new.py": b"y = 2\n"}), target)
    assert (target / "torch/new.py").read_text() == "y = 2\n" and not (target / ".git").exists()
    assert os.readlink(target / "test" / "evil") == "/etc/shadow"
    assert tree_bytes(root) == 5 * len("x = 1\n")
