"""Remove secrets from text before it is stored, served or written to GitHub.

Defence in depth: secrets never reach the sandbox, but anything a run records (stage
summaries and outputs, artifacts, the run log, the run's error, comment and PR bodies) passes
through a `Redactor` anyway. It removes

- the values of configured secrets: the webhook secret, the GitHub token, the App private key
  (the whole PEM and each line of its body), passwords in the database and broker URLs, and
  every environment variable whose name says it is secret (`*TOKEN*`, `*SECRET*`,
  `*PASSWORD*`, `*PRIVATE_KEY*`, `*API_KEY*`, ...);
- strings shaped like GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`),
  PEM private-key blocks, and credentials in URLs (`https://user:pass@host`).

Pure: no settings import; `redactor_for` reads attributes of whatever settings object it gets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

MASK = "[redacted]"
MIN_SECRET_LEN = 6  # shorter configured values would mask ordinary words; shapes still apply

_TOKEN = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,255}|github_pat_[A-Za-z0-9_]{20,255})\b")
_PEM = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][\w+.-]*://)[^/@\s:]*:[^/@\s]+@")
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|PRIVATE_KEY|API_KEY|CREDENTIAL", re.I)
_SECRET_SETTINGS = ("webhook_secret", "github_token", "github_private_key")
_URL_SETTINGS = ("database_url", "broker_url")


class Redactor:
    """`text(s)` / `value(obj)`: `s` or `obj` (nested dicts, lists, strings) with secrets masked."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {s for s in secrets if isinstance(s, str) and len(s.strip()) >= MIN_SECRET_LEN}
        self.secrets = tuple(sorted(values, key=len, reverse=True))  # longest first

    def text(self, text: str) -> str:
        if not text:
            return text
        out = _PEM.sub(MASK, text)
        for secret in self.secrets:
            if secret in out:
                out = out.replace(secret, MASK)
        out = _TOKEN.sub(MASK, out)
        return _URL_CREDENTIALS.sub(rf"\g<scheme>{MASK}@", out)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.value(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.value(v) for v in value)
        return value


def _pem_parts(key: str) -> list[str]:
    """The key's text and the lines of its body (a leak of one line is a leak too)."""
    text = key.replace("\\n", "\n").strip()
    if "-----BEGIN" not in text:
        try:
            path = Path(text).expanduser()
            text = path.read_text().strip() if path.is_file() else text
        except (OSError, ValueError):
            pass
    lines = [line.strip() for line in text.splitlines() if line.strip() and "-----" not in line]
    return [text, *lines]


def _url_password(url: str) -> list[str]:
    try:
        password = urlsplit(url).password
    except ValueError:
        return []
    return [password] if password else []


def secret_values(settings: Any = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """The configured secret values of `settings` and of environment variables named secret."""
    found: list[str] = []
    for name in _SECRET_SETTINGS:
        value = str(getattr(settings, name, "") or "")
        if value:
            found.extend(_pem_parts(value) if name == "github_private_key" else [value])
    for name in _URL_SETTINGS:
        found.extend(_url_password(str(getattr(settings, name, "") or "")))
    for name, value in (environ or {}).items():
        if value and _SECRET_NAME.search(name):
            found.extend(_pem_parts(value) if "KEY" in name.upper() else [value])
    return found


def redactor_for(settings: Any = None, environ: Mapping[str, str] | None = None) -> Redactor:
    return Redactor(secret_values(settings, environ))


class RedactedWrites:
    """A proxy over a port (e.g. the GitHub port) whose `methods` get their string arguments
    redacted; every other attribute is the wrapped object's."""

    def __init__(self, wrapped: Any, redactor: Redactor, methods: Iterable[str]) -> None:
        self._wrapped, self._redactor, self._methods = wrapped, redactor, frozenset(methods)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._wrapped, name)
        if name not in self._methods or not callable(attr):
            return attr
        redact = self._redactor.value

        def call(*args: Any, **kwargs: Any) -> Any:
            return attr(*redact(list(args)), **redact(kwargs))

        return call

    def __repr__(self) -> str:
        return f"RedactedWrites({self._wrapped!r})"


# The GitHubPort methods that write text a stranger can read.
GITHUB_WRITES = ("create_comment", "upsert_comment", "upsert_pull", "update_labels", "close_issue")
