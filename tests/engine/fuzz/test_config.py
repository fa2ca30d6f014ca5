"""The `fuzz:` section of `.github/scrub.yml`, defaults and errors."""

import pytest

from app.engine.fuzz.config import DEFAULT_COMMAND, FuzzConfigError, load_fuzz_config


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
    assert config.pinned_command == "PYTHONHASHSEED=0 python tools/experimental/torchfuzz/fuzzer.py --seed {seed}"
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
