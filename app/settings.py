"""Service configuration: `SCRUB_*` environment variables, over an optional config file.

Precedence, highest first: values passed in code (tests), environment variables, the config
file, the defaults. The config file holds `SCRUB_NAME=value` lines (the `.env` format Docker
Compose reads too); `SCRUB_CONFIG` names the one file to read, else `./.env` and
`$XDG_CONFIG_HOME/scrubbot/scrub.env` (`~/.config/...`) are read when present, `./.env` first.

The data dir defaults to `$XDG_DATA_HOME/scrubbot` (`~/.local/share/scrubbot`), whatever the
current directory; a `./.scrub` made by an older version is still used when present.

Built by `get_settings()` when a shell (CLI, API, worker) starts, never at import time, so
tests can set the environment first. The engine never reads settings: shells pass plain
values down.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, DotEnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from app.domain import parse_environments
from app.torch_releases import EnvStore, merge_interpreters, release_of

SandboxKind = Literal["bwrap", "none"]
OLD_DATA_DIR = Path(".scrub")  # the default before 0.2: relative to the current directory


def default_data_dir() -> Path:
    """`./.scrub` when an older version made one here, else `$XDG_DATA_HOME/scrubbot`."""
    if OLD_DATA_DIR.is_dir():
        return OLD_DATA_DIR.resolve()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "scrubbot"


class ConfigError(ValueError):
    """The configuration cannot be read or is invalid; the message says which setting and why."""


def config_files() -> tuple[Path, ...]:
    """The config files read, lowest precedence first (`SCRUB_CONFIG`: that one file alone)."""
    chosen = os.environ.get("SCRUB_CONFIG", "").strip()
    if chosen:
        path = Path(chosen).expanduser()
        if not _readable_file(path):
            raise ConfigError(f"SCRUB_CONFIG={chosen} is not a file this user can read")
        return (path,)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    found = []
    for path in (Path(base) / "scrubbot" / "scrub.env", Path(".env")):
        try:
            exists = path.is_file()
        except OSError:  # e.g. a parent this user may not search
            exists = False
        if exists and not _readable_file(path):
            raise ConfigError(f"the config file {path} exists but this user cannot read it: "
                              f"fix its permissions, or point SCRUB_CONFIG at another file")
        if exists:
            found.append(path)
    return tuple(found)


def _readable_file(path: Path) -> bool:
    try:
        return path.is_file() and os.access(path, os.R_OK)
    except OSError:  # a parent directory this user may not search
        return False


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SCRUB_", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str = ""
    broker_url: str = ""
    webhook_secret: str = ""
    github_api_url: str = "https://api.github.com"
    github_token: str = ""
    github_app_id: str = ""
    github_private_key: str = ""
    trigger_label: str = "scrub"
    environments: str = ""
    # `scrub env add`: where torch releases come from (None: the installer's default, PyPI) and how.
    torch_index_url: str = ""
    env_installer: Literal["auto", "uv", "pip"] = "auto"
    # The build of a PyTorch commit under test (app.engine.envs.provider): a PEP 503 index of
    # torch nightlies (e.g. https://download.pytorch.org/whl/nightly/cpu), and an operator's
    # command that makes a wheel of a commit (it writes one into $SCRUBBOT_BUILD_OUT).
    torch_nightly_index_url: str = ""
    build_command: str = ""
    # The repository torch builds come from: culprits name its commits and PRs.
    torch_repo: str = "pytorch/pytorch"
    # Progression: open bugs re-checked on each new build and at least every interval, at most
    # this many runs per repository per day (0: off); the scheduler looks every tick.
    progression_runs_per_day: int = Field(20, ge=0)
    progression_interval_s: float = Field(86400.0, gt=0)
    progression_tick_s: float = Field(900.0, gt=0)
    sandbox: SandboxKind | None = None
    sandbox_memory_mb: int = Field(4096, gt=0)
    repro_timeout: float = Field(120.0, gt=0)
    # The diagnosis experiments after a repro reproduces (seconds for all of them; 0: none run),
    # and the failing test offered for an issue that still reproduces.
    experiments_budget_s: float = Field(240.0, ge=0)
    offer_tests: bool = True
    fix_command: str = ""
    # The fuzz job's fix sandbox: host variables passed in by name (comma-separated; names that
    # look like secrets are refused), and whether it keeps the network.
    fix_env: str = ""
    fix_network: bool = False
    ci_repeat_threshold: int = Field(2, ge=1)
    # Downloaded CI log archives: at most this many MiB per repository and in all; the oldest
    # archives are evicted to make room, and an archive larger than a cap is not kept.
    ci_logs_repo_mb: int = Field(1024, ge=1)
    ci_logs_total_mb: int = Field(4096, ge=1)
    # A worker retries a run after a transient error (GitHub 5xx, a lost database) after this
    # many seconds, doubled on each retry.
    retry_delay_s: float = Field(15.0, ge=0)
    public_url: str = ""
    # Phase limits of the CI job (seed 002: reproduce 5 min, fix 10 min, PR 5 min).
    phase_reproduce_s: float = Field(300.0, gt=0)
    phase_fix_s: float = Field(600.0, gt=0)
    phase_pr_s: float = Field(300.0, gt=0)
    # Whether this worker may bind GPU device nodes into the sandbox (repro-gpu hosts only).
    gpu: bool = False
    # People: GitHub OAuth login for the status page and the state-changing API.
    oauth_client_id: str = ""
    oauth_client_secret: str = ""
    session_secret: str = ""
    github_web_url: str = ""  # https://github.com; derived from github_api_url when unset
    public_read: bool = True  # runs of public repositories may be read without signing in
    api_tokens: str = ""  # comma-separated bearer tokens for scripts
    # Local mode (no OAuth): the secret `scrub serve` prints in its sign-in URL; random per start
    # when unset. Needed to act and to read runs of private repositories.
    local_token: str = ""
    # Host names the status page and API answer besides loopback names and SCRUB_PUBLIC_URL's
    # host (comma-separated; e.g. `api` for a Prometheus in the compose network). DNS rebinding.
    allowed_hosts: str = ""
    # `GET /metrics`: a bearer token Prometheus sends; unset: loopback clients only.
    metrics_token: str = ""
    # Leases: a running run's worker renews its lease; the reaper resumes an expired one.
    lease_s: float = Field(60.0, gt=0)
    reaper_interval_s: float = Field(60.0, gt=0)
    max_attempts: int = Field(3, ge=1)
    # Service logs: `json` lines, `console` lines, or `auto` (console in a terminal, else JSON).
    log_format: Literal["auto", "json", "console"] = "auto"
    log_level: str = "INFO"

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource) -> tuple[PydanticBaseSettingsSource, ...]:
        """Code, then the environment, then the config file (found now, not at import)."""
        files = config_files()
        config = DotEnvSettingsSource(settings_cls, env_file=files or None)
        return init_settings, env_settings, config, file_secret_settings

    @field_validator("environments")
    @classmethod
    def _environments_parse(cls, value: str) -> str:
        parse_environments(value, default_python=sys.executable)
        return value

    @property
    def env_store(self) -> EnvStore:
        """Provisioned torch releases (`scrub env add`): `<data dir>/envs/<version>+<variant>/`, the
        ones this worker may run (a GPU worker: accelerator builds only)."""
        return EnvStore(self.data_dir / "envs", gpu=self.gpu)

    @property
    def environment_map(self) -> dict[str, str]:
        """Named interpreters, oldest first: `SCRUB_ENVIRONMENTS` when set; else the provisioned
        releases plus this interpreter under its torch release; else this interpreter (`local`)."""
        if self.environments.strip():
            return parse_environments(self.environments, default_python=sys.executable)
        return merge_interpreters(self.env_store.interpreters(), sys.executable, _own_torch_version())

    @property
    def nameable_environments(self) -> dict[str, str]:
        """What `--envs` can name: `environment_map`, plus this interpreter under its own torch
        release when `SCRUB_ENVIRONMENTS` is unset (so `--provision` never installs a second copy
        of the release already running here)."""
        named = self.environment_map
        own = _own_torch_version()
        if self.environments.strip() or not own or release_of(own) in named:
            return named
        return {**named, release_of(own): sys.executable}

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'scrub.db').resolve()}"

    @property
    def resolved_broker_url(self) -> str:
        return self.broker_url or "filesystem://"

    @property
    def embedded_broker(self) -> bool:
        return self.resolved_broker_url.startswith("filesystem://")

    @property
    def resolved_sandbox(self) -> SandboxKind:
        """`bwrap` unless `SCRUB_SANDBOX=none` says otherwise: a missing bubblewrap is an error
        to report (`app.cli.preflight`), never a silent fall back to running unsandboxed."""
        return self.sandbox or "bwrap"

    @property
    def github_configured(self) -> bool:
        return bool(self.github_token or (self.github_app_id and self.github_private_key))

    @property
    def oauth_configured(self) -> bool:
        """Login with GitHub is on: without it the service runs in local mode (no login)."""
        return bool(self.oauth_client_id and self.oauth_client_secret and self.session_secret)

    @property
    def resolved_github_web_url(self) -> str:
        """The web server behind the REST API: api.github.com -> github.com, GHES /api/v3 -> its host."""
        if self.github_web_url:
            return self.github_web_url.rstrip("/")
        parts = urlsplit(self.github_api_url)
        host = parts.netloc[len("api."):] if parts.netloc.startswith("api.") else parts.netloc
        path = parts.path.rstrip("/")
        path = path[: -len("/api/v3")] if path.endswith("/api/v3") else path
        return f"{parts.scheme or 'https'}://{host}{path}"

    def ensure_data_dir(self) -> Path:
        """The data dir, made (or kept) private to this user: it holds the database, the
        mirrors and every run's artifacts (`app.private_files`)."""
        from app.private_files import private_dir

        return private_dir(self.data_dir)


def _own_torch_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings of this process, read once from the environment and the config file.
    Raises `ConfigError` naming each bad setting (never a validation traceback)."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(f"SCRUB_{'_'.join(str(p) for p in error['loc']).upper()}: {error['msg']}"
                             for error in exc.errors())
        raise ConfigError(f"invalid configuration: {problems}") from None


def reset_settings_cache() -> None:
    """Forget the cached settings (tests that change the environment call this)."""
    get_settings.cache_clear()


def secret_env_names() -> list[str]:
    """Names of environment variables that must never reach untrusted code."""
    return [name for name in os.environ if name.startswith("SCRUB_")]
