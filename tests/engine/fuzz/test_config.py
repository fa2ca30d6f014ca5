"""The `fuzz:` section of `.github/scrub.yml`, defaults and errors."""

import subprocess
import sys

import pytest

from app.engine.fuzz.config import ADDR_NO_RANDOMIZE, DEFAULT_COMMAND, FuzzConfig, FuzzConfigError, load_fuzz_config


def _write(root, rel, text):
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def test_defaults_detect_pytorch_and_lintrunner(tmp_path):
    _write(tmp_path, "torch/__init__.py", "")
    _write(tmp_path, "test/test_ops.py", "")
    _write(tmp_path, ".lintrunner.toml", "")
    config = load_fuzz_config(tmp_path, gpu=True)
    assert (config.command, config.devices, config.style, config.lint) == (DEFAULT_COMMAND, ("cpu", "cuda"),
                                                                          "pytorch", "lintrunner")
    assert config.fuzz_argv(42) == ["tools/experimental/torchfuzz/fuzzer.py", "--seed", "42"]  # the real file
    assert config.pinned_command == ("PYTHONHASHSEED=0 setarch -R python tools/experimental/torchfuzz/fuzzer.py "
                                     "--seed {seed}")
    assert config.script() == "tools/experimental/torchfuzz/fuzzer.py"


def test_configured_values_and_plain_pytest_with_ruff(tmp_path):
    _write(tmp_path, "pyproject.toml", "[tool.ruff]\nline-length = 100\n")
    _write(tmp_path, ".github/scrub.yml", "fuzz:\n  command: python fz.py --seed {seed}\n  devices: cpu, accel\n"
                                          "  test-file: tests/test_x.py\n")
    config = load_fuzz_config(tmp_path)
    assert (config.devices, config.style, config.lint, config.test_file) == (("cpu", "accel"), "pytest", "ruff",
                                                                             "tests/test_x.py")


@pytest.mark.parametrize(("text", "error"), [
    ("fuzz: [1, 2]", "must be a mapping"),
    ("fuzz:\n  command: python fz.py\n", "containing {seed}"),
    ("fuzz:\n  devices: ['CPU!']\n", "device names"),
    ("fuzz:\n  style: jest\n", "fuzz.style must be one of"),
    ("fuzz:\n  test-file: ../evil.py\n", "relative path"),
    ("fuzz: {", "not valid YAML"),
])
def test_bad_config_is_a_clear_error(tmp_path, text, error):
    _write(tmp_path, ".github/scrub.yml", text)
    with pytest.raises(FuzzConfigError, match=error.replace("{", r"\{").replace("[", r"\[")):
        load_fuzz_config(tmp_path)


def test_a_symlinked_config_is_not_read(tmp_path):
    _write(tmp_path, "elsewhere.yml", "fuzz:\n  style: jest\n")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/scrub.yml").symlink_to(tmp_path / "elsewhere.yml")
    assert load_fuzz_config(tmp_path).style == "pytest"


def test_a_command_not_starting_with_python_is_refused(tmp_path):
    _write(tmp_path, ".github/scrub.yml", "fuzz:\n  command: ./fuzz --seed {seed}\n")
    with pytest.raises(FuzzConfigError, match="must start with python"):
        load_fuzz_config(tmp_path).fuzz_argv(1)


def test_a_pinned_run_has_the_hash_seed_and_no_address_randomization(tmp_path):
    """TorchFuzz seeds `random.Random(hash((size, dtype)))` and a dtype hashes by its address:
    the pinned run turns address randomization off before the fuzzer starts."""
    _write(tmp_path, "fz.py", "import os, sys\nprint(sys.argv[1:], os.environ.get('PYTHONHASHSEED'), "
                              "open('/proc/self/personality').read().strip())\n")
    config = FuzzConfig(command="python fz.py --seed {seed}", hash_seed="3")
    argv = config.pinned_argv(42)
    done = subprocess.run([sys.executable, *argv], cwd=tmp_path, env={**config.pinned_env(), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60, check=True)
    args, hash_seed, personality = done.stdout.rsplit(" ", 2)
    assert args == "['--seed', '42']" and hash_seed == "3"
    assert int(personality, 16) & ADDR_NO_RANDOMIZE
    unpinned = FuzzConfig(command="python fz.py --seed {seed}", hash_seed="random")
    assert unpinned.pinned_argv(1) == ["fz.py", "--seed", "1"] and unpinned.pinned_env() == {}
