"""A repository's fuzz settings: the `fuzz:` section of its `.github/scrub.yml`.

    fuzz:
      command: python tools/fuzz.py --seed {seed}   # the repository's own fuzzer
      devices: [cpu, cuda]                           # device kinds a test runs on
      style: pytorch                                 # or pytest (default: detected)
      test-file: test/test_ops.py                    # where the test goes (default: chosen)
      lint: ruff                                     # lintrunner, ruff or none (default: detected)
      hash-seed: 0                                   # PYTHONHASHSEED of every fuzzer run (default 0;
                                                     # `random`: unpinned, ASLR left on)

Every key is optional. Defaults: TorchFuzz's command, `cpu` (plus `cuda` on a GPU worker),
the style and the linter the checkout shows (PyTorch: a `torch/` package and a `test/`
tree; `.lintrunner.toml` -> lintrunner, a ruff configuration -> ruff). The file is read from
the checkout through its door (`app.engine.git.tree.Checkout`: no link anywhere in a path is
followed); a malformed file is an error with its reason. `command` is one line: it reaches a
generated test's comment and the commit messages.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.engine.git.tree import Checkout

CONFIG_PATH = ".github/scrub.yml"
# TorchFuzz's entry point and its single-seed flag (`fuzzer.py --seed N`; also `--template
# {default,dtensor,dtensor_placements,unbacked,distributed_overlap}`, `--max-depth`,
# `--supported-ops`). It seeds `random.Random(hash((size, dtype)))` (layout.py's cat, split,
# chunk), and a torch dtype hashes by its address, so PYTHONHASHSEED alone does not pin a seed.
# Measured on torch 2.13 CPU (8 fresh interpreters each, PYTHONHASHSEED=0): `hash(torch.int64)`
# took 8 values with address randomization on, 3 values (5 of 8 the same) with it off. Every
# fuzzer run is pinned both ways (`hash-seed`, default 0; `pinned_argv`), which makes a seed
# reproduce most of the time, not always: the job therefore keeps the program the fuzzer
# printed, and that program (not the seed) is what it reproduces, minimizes and tests.
DEFAULT_COMMAND = "python tools/experimental/torchfuzz/fuzzer.py --seed {seed}"
DEFAULT_HASH_SEED = "0"
# `python -c NO_ASLR script.py args`: turns address randomization off (personality
# ADDR_NO_RANDOMIZE, what `setarch -R` does) and re-executes the interpreter on the script.
ADDR_NO_RANDOMIZE = 0x0040000
NO_ASLR = ("import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True); "
           f"p = libc.personality(0xffffffff); p & {ADDR_NO_RANDOMIZE} or libc.personality(p | {ADDR_NO_RANDOMIZE}) "
           "!= -1 and os.execv(sys.executable, [sys.executable, *sys.argv[1:]]); "
           "sys.exit('scrub: could not turn address randomization off (personality)')")
STYLES = ("pytorch", "pytest")
LINTERS = ("lintrunner", "ruff", "none")
_DEVICE = re.compile(r"[a-z][a-z0-9_]{0,15}")


class FuzzConfigError(ValueError):
    """`.github/scrub.yml` has a `fuzz:` section Scrubbot cannot use; the message says why."""


@dataclass(frozen=True)
class FuzzConfig:
    command: str = DEFAULT_COMMAND
    devices: tuple[str, ...] = ("cpu",)
    style: str = "pytest"
    test_file: str = ""
    lint: str = "none"
    hash_seed: str = DEFAULT_HASH_SEED
    notes: list[str] = field(default_factory=list, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FuzzConfig:
        return cls(**{**data, "devices": tuple(data.get("devices", ("cpu",)))})

    @property
    def pinned(self) -> bool:
        return self.hash_seed != "random"

    @property
    def pinned_command(self) -> str:
        """The command as a person reruns it: the same hash seed, address randomization off."""
        return f"PYTHONHASHSEED={self.hash_seed} setarch -R {self.command}" if self.pinned else self.command

    def pinned_env(self) -> dict[str, str]:
        return {"PYTHONHASHSEED": self.hash_seed} if self.pinned else {}

    def pinned_argv(self, seed: int) -> list[str]:
        """`fuzz_argv` run with address randomization off (see NO_ASLR), unless unpinned."""
        argv = self.fuzz_argv(seed)
        return ["-c", NO_ASLR, *argv] if self.pinned else argv

    def script(self) -> str | None:
        """The fuzzer's script (the command's first `.py` argument), relative to the checkout."""
        return next((w for w in self.command.split()[1:] if w.endswith(".py")), None)

    def fuzz_argv(self, seed: int) -> list[str]:
        """The fuzzer's command for `seed` as `python` arguments (the sandbox runs python)."""
        words = self.command.replace("{seed}", str(seed)).split()
        if not words or not re.fullmatch(r"python[\d.]*", words[0]):
            raise FuzzConfigError(f"fuzz command must start with python: {self.command!r}")
        return words[1:]


def _text(checkout: Checkout, rel: str, limit: int = 1 << 20) -> str:
    """The regular file `rel` (reached without any link), or "" when it is not one or too big."""
    size = checkout.size(rel)
    if size is None or size > limit:
        return ""
    return checkout.read_text(rel, limit)


def detect_style(root: Checkout | Path) -> str:
    checkout = Checkout.of(root)
    return "pytorch" if checkout.is_file("torch/__init__.py") and checkout.is_dir("test") else "pytest"


def detect_lint(root: Checkout | Path) -> str:
    checkout = Checkout.of(root)
    if checkout.is_file(".lintrunner.toml"):
        return "lintrunner"
    if checkout.is_file("ruff.toml") or checkout.is_file(".ruff.toml") \
            or "[tool.ruff" in _text(checkout, "pyproject.toml"):
        return "ruff"
    return "none"


def _choice(section: dict, key: str, allowed: tuple[str, ...], default: str) -> str:
    value = section.get(key, default)
    if value not in allowed:
        raise FuzzConfigError(f"{CONFIG_PATH}: fuzz.{key} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def load_fuzz_config(root: Checkout | Path, *, gpu: bool = False) -> FuzzConfig:
    """The checkout's fuzz settings with the defaults filled in."""
    root = Checkout.of(root)
    text = _text(root, CONFIG_PATH)
    try:
        data = yaml.safe_load(text) if text else {}
    except yaml.YAMLError as exc:
        raise FuzzConfigError(f"{CONFIG_PATH} is not valid YAML: {exc}") from None
    section = (data or {}).get("fuzz") if isinstance(data, dict) else None
    section = section or {}
    if not isinstance(section, dict):
        raise FuzzConfigError(f"{CONFIG_PATH}: `fuzz` must be a mapping")
    command = section.get("command", DEFAULT_COMMAND)
    if not isinstance(command, str) or "{seed}" not in command:
        raise FuzzConfigError(f"{CONFIG_PATH}: fuzz.command must be a string containing {{seed}}")
    if not command.isprintable():  # a newline (or any control character) would end a comment line
        raise FuzzConfigError(f"{CONFIG_PATH}: fuzz.command must be one line of printable text")
    devices = section.get("devices") or (["cpu", "cuda"] if gpu else ["cpu"])
    if isinstance(devices, str):
        devices = [d.strip() for d in devices.split(",") if d.strip()]
    if not isinstance(devices, list) or not all(isinstance(d, str) and _DEVICE.fullmatch(d) for d in devices):
        raise FuzzConfigError(f"{CONFIG_PATH}: fuzz.devices must be a list of device names like cpu, cuda")
    test_file = section.get("test-file", "")
    if test_file and (not isinstance(test_file, str) or ".." in Path(test_file).parts or test_file.startswith("/")
                      or not test_file.endswith(".py") or not test_file.isprintable()):
        raise FuzzConfigError(f"{CONFIG_PATH}: fuzz.test-file must be a relative path to a .py file")
    hash_seed = str(section.get("hash-seed", DEFAULT_HASH_SEED))
    if not (hash_seed == "random" or hash_seed.isdigit()):
        raise FuzzConfigError(f"{CONFIG_PATH}: fuzz.hash-seed must be an integer (PYTHONHASHSEED)")
    return FuzzConfig(
        command=command,
        hash_seed=hash_seed,
        devices=tuple(dict.fromkeys(devices)),
        style=_choice(section, "style", STYLES, detect_style(root)),
        test_file=test_file,
        lint=_choice(section, "lint", LINTERS, detect_lint(root)),
    )
