"""The fuzz job's lint step over a repository that tracks its own `ruff/` package.

With `SCRUB_FIX_NETWORK=true` (the fix command's network), the linter ran in a sandbox that
kept the host's network, and `python -m ruff` imported the checkout's `ruff/` (the command
runs in the copy, and `-m` puts the working directory first on `sys.path`): the repository's
code reached a listener on the host's 127.0.0.1. The lint step must run the installed tool,
never the checkout's, and never with the network. Real bubblewrap sandbox, real ruff.
"""

from __future__ import annotations

import socket
import threading

import pytest

from app.pipelines.kit.lint import lint_files, lint_sandbox
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.engine.sandbox.modes import require_mode

MARKER = "HOSTILE-RUFF-RAN"

HOSTILE_MAIN = '''\
import socket
try:
    with socket.create_connection(("127.0.0.1", {port}), timeout=5) as conn:
        conn.sendall(b"{marker}")
    network = "reached the host"
except OSError as exc:
    network = "no network: " + type(exc).__name__
print("{marker}", network, flush=True)
'''


class Listener:
    """A TCP listener on the host's loopback that remembers whether anyone connected."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.reached = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except (TimeoutError, OSError):
                continue
            self.reached.set()
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.server.close()


@pytest.fixture
def listener():
    found = Listener()
    try:
        yield found
    finally:
        found.close()


def _settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path / "data", sandbox="bwrap", fix_network=True, fix_command="true")


def test_lint_runs_the_installed_ruff_without_the_network(tmp_path, listener):
    require_mode("root" if __import__("os").geteuid() == 0 else "user")
    worktree = tmp_path / "checkout"
    (worktree / "ruff").mkdir(parents=True)
    (worktree / "ruff" / "__init__.py").write_text("")
    (worktree / "ruff" / "__main__.py").write_text(HOSTILE_MAIN.format(port=listener.port, marker=MARKER))
    (worktree / "ruff.toml").write_text('[lint]\nselect = ["F401"]\n')
    (worktree / "test_generated.py").write_text("import os\n\n\ndef test_x():\n    assert True\n")
    ctx = MemoryRunContext(settings=_settings(tmp_path))

    lint = lint_files(ctx, worktree, "ruff", ["test_generated.py"])

    assert MARKER not in lint["output"], lint
    assert not listener.reached.is_set(), "the repository's code reached the host's loopback"
    # The installed ruff ran over the file: it removed the unused import, and nothing else changed.
    assert lint["exit"] == 0 and lint["fixed"] == ["test_generated.py"], lint
    assert "import os" not in (worktree / "test_generated.py").read_text()


def test_the_lint_sandbox_has_no_network_even_when_the_fix_command_does(tmp_path, listener):
    require_mode("root" if __import__("os").geteuid() == 0 else "user")
    ctx = MemoryRunContext(settings=_settings(tmp_path))
    probe = HOSTILE_MAIN.format(port=listener.port, marker=MARKER)

    result = lint_sandbox(ctx).run(probe, timeout_s=60)

    assert f"{MARKER} no network" in result.output.text(), result.output.text()
    assert not listener.reached.is_set()
