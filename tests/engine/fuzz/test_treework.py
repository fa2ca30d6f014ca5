"""Programs and commands over a checkout in the real sandbox; changes come back, guarded."""

import os

import pytest

from app.engine.fuzz.treework import ChangesRefused, CommandRun, ProgramRunner, apply_changes, run_in_copy
from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec
from tests.engine.sandbox.helpers import needs_bwrap


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    (root / "lib/__init__.py").write_text("def value():\n    return 1\n")
    (root / "old.txt").write_text("old\n")
    return root


@needs_bwrap
def test_a_program_imports_the_checkout(checkout):
    result = ProgramRunner(Sandbox(SandboxSpec()), checkout).run("import lib\nraise SystemExit(lib.value() + 6)\n", 60)
    assert result.exit_code == 7


@needs_bwrap
def test_a_program_sees_the_checkouts_links_as_links(checkout):
    os.symlink("lib/__init__.py", checkout / "alias.py")  # unpacked as TreeRunner does it
    program = "import os\nraise SystemExit(5 if os.readlink('alias.py') == 'lib/__init__.py' else 3)\n"
    assert ProgramRunner(Sandbox(SandboxSpec()), checkout).run(program, 60).exit_code == 5


@needs_bwrap
def test_a_command_edits_a_copy_and_its_changes_come_back(checkout, monkeypatch):
    monkeypatch.setenv("HOST_ONLY", "secret-ish")
    sandbox = Sandbox(SandboxSpec(limits=Limits(tail_bytes=8 << 20), env={"GREETING": "hi"}))
    command = ("sed -i 's/return 1/return 2/' lib/__init__.py && rm old.txt && echo \"$GREETING\" > new.txt"
               " && echo \"host=${HOST_ONLY:-unset}\" && (curl -s https://example.com >/dev/null 2>&1 || echo offline)")
    ran = run_in_copy(sandbox, checkout, command, 60)
    assert ran.exit_code == 0, ran.output
    assert "host=unset" in ran.output and "offline" in ran.output
    assert (checkout / "lib/__init__.py").read_text().endswith("return 1\n")  # the worktree is untouched...
    assert sorted(ran.changed) == ["lib/__init__.py", "new.txt"] and ran.deleted == ("old.txt",)
    touched = apply_changes(checkout, ran)  # ...until the changes are applied
    assert touched == ["lib/__init__.py", "new.txt", "old.txt"]
    assert (checkout / "new.txt").read_text() == "hi\n" and not (checkout / "old.txt").exists()


@needs_bwrap
def test_the_copy_gets_the_files_it_needs_whatever_the_sandboxs_file_bound(checkout):
    for i in range(300):
        (checkout / "lib" / f"m{i}.py").write_text("")
    sandbox = Sandbox(SandboxSpec(limits=Limits(tmpfs_files=64, tail_bytes=8 << 20)))
    ran = run_in_copy(sandbox, checkout, "touch lib/m0.py && ls lib | wc -l", 60)
    assert ran.exit_code == 0 and "301" in ran.output, ran.output


def test_changes_outside_the_worktree_are_refused(checkout, tmp_path):
    (checkout / "link").symlink_to(tmp_path)
    for path in ("../escape.txt", ".git/config", "link/x.txt", "/etc/passwd"):
        with pytest.raises(ChangesRefused):
            apply_changes(checkout, CommandRun(0, False, "", {path: b"x"}, ()))
    assert not (tmp_path / "x.txt").exists()
