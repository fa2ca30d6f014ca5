"""`TreeRunner` ships a checkout into the sandbox without following its links."""

from __future__ import annotations

import io
import os
import stat
import zipfile

from app.engine.sandbox.runner import Sandbox
from app.engine.sandbox.treerun import TreeRunner, pack_tree, tree_files
from tests.engine.sandbox.helpers import needs_bwrap, spec

SECRET = "scrub-treerun-secret-4f1c9e"


def _checkout(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "key.pem").write_text(SECRET)
    root = tmp_path / "checkout"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("VALUE = 41\n")
    (root / "run.py").write_text(
        "import os, pathlib\n"
        "for name in ('leak', 'env', 'alias.py'):\n"
        "    p = pathlib.Path(name)\n"
        "    print(name, p.is_symlink(), p.read_text(errors='replace') if p.exists() else 'MISSING')\n"
        "import pkg.mod\nprint('value', pkg.mod.VALUE + 1)\n"
    )
    os.symlink(outside / "key.pem", root / "leak")
    os.symlink("/proc/self/environ", root / "env")
    os.symlink("pkg/mod.py", root / "alias.py")  # a link inside the tree keeps working
    os.symlink(outside, root / "linkdir")
    return root


def test_pack_keeps_links_as_links(tmp_path):
    root = _checkout(tmp_path)
    names = tree_files(root)
    assert "leak" in names and "linkdir" in names and "pkg/mod.py" in names
    with zipfile.ZipFile(io.BytesIO(pack_tree(root))) as archive:
        entries = {i.filename: i for i in archive.infolist()}
        assert stat.S_ISLNK(entries["leak"].external_attr >> 16)
        assert archive.read("leak").decode() == str(tmp_path / "outside" / "key.pem")
        assert archive.read("env").decode() == "/proc/self/environ"
        assert not any(n.startswith("linkdir/") for n in entries)
        blob = b"".join(archive.read(n) for n in entries)
    assert SECRET.encode() not in blob
    assert os.environ.get("PATH", "").encode() not in blob or not os.environ.get("PATH")


@needs_bwrap
def test_links_resolve_only_inside_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_WEBHOOK_SECRET", SECRET + "-env")
    root = _checkout(tmp_path)
    result = TreeRunner(Sandbox(spec()), root).run(["run.py"], timeout_s=60)
    out = result.output.text()
    assert "value 42" in out, out
    assert "alias.py True VALUE = 41" in out
    assert SECRET not in out and SECRET + "-env" not in out


@needs_bwrap
def test_a_runs_files_go_into_the_copy_not_the_pack(tmp_path):
    root = tmp_path / "checkout"
    (root / "sub").mkdir(parents=True)
    (root / "run.py").write_text("print('from the checkout')\n")
    os.symlink("/proc/self/environ", root / "sub" / "data.txt")  # replaced, not written through
    runner = TreeRunner(Sandbox(spec()), root)
    program = "import pathlib\nprint('placed', ascii(pathlib.Path('sub/data.txt').read_text(encoding='utf-8')))\n"
    placed = runner.run(["run.py"], timeout_s=60, files={"run.py": program, "sub/data.txt": "caf\u00e9"})
    assert "placed 'caf\\xe9'" in placed.output.text(), placed.output.text()
    again = runner.run(["run.py"], timeout_s=60)  # the packed checkout is as it was
    assert "from the checkout" in again.output.text() and "placed" not in again.output.text()
    assert (root / "run.py").read_text() == "print('from the checkout')\n"
    assert os.readlink(root / "sub" / "data.txt") == "/proc/self/environ"
