"""`TreeRunner` binds a checkout into the sandbox read-only, of any size, without following its links."""

from __future__ import annotations

import os

from app.engine.sandbox.runner import Sandbox
from app.engine.sandbox.treerun import TreeRunner
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


@needs_bwrap
def test_links_resolve_only_inside_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_WEBHOOK_SECRET", SECRET + "-env")
    root = _checkout(tmp_path)
    result = TreeRunner(Sandbox(spec()), root).run(["run.py"], timeout_s=60)
    out = result.output.text()
    assert "value 42" in out, out
    assert "alias.py True VALUE = 41" in out
    assert "leak True MISSING" in out  # the link is there, its host target is not
    assert SECRET not in out and SECRET + "-env" not in out


@needs_bwrap
def test_a_runs_files_are_placed_on_top_not_written_into_the_checkout(tmp_path):
    root = tmp_path / "checkout"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "keep.py").write_text("KEPT = 1\n")
    (root / "run.py").write_text("print('from the checkout')\n")
    os.symlink("/proc/self/environ", root / "sub" / "data.txt")  # replaced, not written through
    runner = TreeRunner(Sandbox(spec()), root)
    program = ("import pathlib, sub.keep, deep.new.mod\n"
               "print('placed', ascii(pathlib.Path('sub/data.txt').read_text(encoding='utf-8')), sub.keep.KEPT,"
               " deep.new.mod.X)\n")
    placed = runner.run(["run.py"], timeout_s=60, files={"run.py": program, "sub/data.txt": "caf\u00e9",
                                                         "deep/new/mod.py": "X = 'new'\n"})
    assert "placed 'caf\\xe9' 1 new" in placed.output.text(), placed.output.text()
    again = runner.run(["run.py"], timeout_s=60)  # the checkout is as it was
    assert "from the checkout" in again.output.text() and "placed" not in again.output.text()
    assert (root / "run.py").read_text() == "print('from the checkout')\n"
    assert os.readlink(root / "sub" / "data.txt") == "/proc/self/environ"
    assert not (root / "deep").exists()


@needs_bwrap
def test_the_checkout_is_read_only_and_its_git_pointer_hidden(tmp_path):
    root = tmp_path / "checkout"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("V = 1\n")
    (root / ".git").write_text("gitdir: /somewhere/on/the/host\n")
    probe = ("import os\n"
             "for path in ('pkg/mod.py', 'pkg/new.py'):\n"
             "    try:\n"
             "        open(path, 'a').write('x')\n"
             "        print(path, 'written')\n"
             "    except OSError as exc:\n"
             "        print(path, 'refused', exc.errno)\n"
             "print('git', os.path.exists('.git'))\n")
    out = TreeRunner(Sandbox(spec()), root).run(["probe.py"], 60, files={"probe.py": probe}).output.text()
    assert "pkg/mod.py refused" in out and "pkg/new.py refused" in out, out
    assert "git False" in out
    assert (root / "pkg" / "mod.py").read_text() == "V = 1\n" and not (root / "pkg" / "new.py").exists()


@needs_bwrap
def test_a_checkout_far_over_the_old_zip_cap_runs(tmp_path):
    """The zip era refused anything over 48 MB; a bound checkout has no cap but the disk."""
    root = tmp_path / "big"
    (root / "third_party").mkdir(parents=True)
    with open(root / "third_party" / "blob.bin", "wb") as handle:
        handle.truncate(200 << 20)  # sparse: 200 MB of size, no disk
    for index in range(300):
        (root / "third_party" / f"f{index}.py").write_text(f"N = {index}\n")
    (root / "run.py").write_text("import os\nprint('size', os.path.getsize('third_party/blob.bin'),"
                                 " len(os.listdir('third_party')))\n")
    result = TreeRunner(Sandbox(spec()), root).run(["run.py"], timeout_s=60)
    assert f"size {200 << 20} 301" in result.output.text(), result.output.text()


@needs_bwrap
def test_binds_place_host_files_into_the_tree(tmp_path):
    root = tmp_path / "checkout"
    (root / "torch").mkdir(parents=True)
    (root / "torch" / "__init__.py").write_text("from torch import _C\nprint('binary', _C.KIND)\n")
    build = tmp_path / "env" / "torch"
    build.mkdir(parents=True)
    (build / "_C.py").write_text("KIND = 'from the build'\n")
    runner = TreeRunner(Sandbox(spec()), root, binds={"torch/_C.py": str(build / "_C.py")})
    out = runner.run(["-c", "import torch"], 60).output.text()
    assert "binary from the build" in out, out
    assert not (root / "torch" / "_C.py").exists()
