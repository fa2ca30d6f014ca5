"""A `/scrub` command's seal: what the trusted worker checks before acting on a command.

The API reads a command from a webhook whose signature it verified, and hands it to the trusted
worker through the broker. Repro hosts share that broker (docs/security.md) and could put a
command there in a maintainer's name. So the API seals each command with a key derived from the
webhook secret, which repro hosts never hold, and the worker acts only on a command whose seal
matches (`SCRUB_WEBHOOK_SECRET` is on both trusted sides in every documented deployment). Where
no webhook secret is configured there are no webhooks and no key: nothing is sealed or checked
(one host, one trust domain)."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

_PURPOSE = b"scrubbot /scrub command seal v1"


def _key(webhook_secret: str) -> bytes:
    return hmac.new(webhook_secret.encode(), _PURPOSE, hashlib.sha256).digest()


def _canonical(command: dict[str, Any]) -> bytes:
    fields = {k: v for k, v in command.items() if k != "seal"}
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str).encode()


def seal(webhook_secret: str, command: dict[str, Any]) -> str:
    """The command's seal; "" when there is no secret to seal with."""
    if not webhook_secret:
        return ""
    return hmac.new(_key(webhook_secret), _canonical(command), hashlib.sha256).hexdigest()


def unsealed_reason(webhook_secret: str, command: dict[str, Any], given: str) -> str | None:
    """None when the worker may act on `command`; otherwise why not, in one sentence."""
    if not webhook_secret:
        return None
    if not given:
        return "the command carries no seal (it did not come from this service's webhook endpoint)"
    if not hmac.compare_digest(seal(webhook_secret, command), given):
        return "the command's seal does not match (altered, or sealed with another webhook secret)"
    return None
