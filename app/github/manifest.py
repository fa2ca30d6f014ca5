"""Creating the GitHub App in one click: GitHub's manifest flow.

A person's browser posts a manifest (name, webhook URL, permissions, events, redirect URL) to
`<web>/settings/apps/new` (or an organization's); GitHub shows it, the person clicks "Create",
and GitHub redirects to the manifest's `redirect_url` with a one-use `code`. Trading the code at
`POST /app-manifests/{code}/conversions` gives everything Scrubbot needs: the App id, its
private key, the webhook secret, and the OAuth credentials for signing in to the status page.
https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

PERMISSIONS = {"issues": "write", "pull_requests": "write", "contents": "write", "actions": "read",
               "metadata": "read"}
EVENTS = ["issues", "issue_comment", "workflow_run", "workflow_dispatch"]


@dataclass(frozen=True)
class AppCredentials:
    app_id: str
    slug: str
    html_url: str
    pem: str
    webhook_secret: str
    client_id: str
    client_secret: str


def build_manifest(public_url: str, redirect_url: str, name: str = "Scrubbot") -> dict[str, Any]:
    base = public_url.rstrip("/")
    return {
        "name": name,
        "url": base,
        "hook_attributes": {"url": f"{base}/webhooks/github", "active": True},
        "redirect_url": redirect_url,
        "callback_urls": [f"{base}/auth/callback"],  # the status page's GitHub login
        "public": False,
        "default_permissions": PERMISSIONS,
        "default_events": EVENTS,
    }


def new_app_url(web_url: str, state: str, org: str | None = None) -> str:
    where = f"organizations/{org}/settings/apps/new" if org else "settings/apps/new"
    return f"{web_url.rstrip('/')}/{where}?state={state}"


def convert(api_url: str, code: str, timeout_s: float = 30.0) -> AppCredentials:
    """Trade the redirect's code for the new App's credentials (no authentication: the code is it)."""
    response = httpx.post(f"{api_url.rstrip('/')}/app-manifests/{code}/conversions", timeout=timeout_s,
                          headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"})
    if response.status_code != 201:
        raise ValueError(f"GitHub refused the code ({response.status_code}: {response.text[:200]}); "
                         "codes are good for one hour and one use: run `scrub setup` again")
    body = response.json()
    return AppCredentials(str(body["id"]), str(body.get("slug") or ""), str(body.get("html_url") or ""),
                          str(body["pem"]), str(body.get("webhook_secret") or ""), str(body.get("client_id") or ""),
                          str(body.get("client_secret") or ""))


def settings_lines(creds: AppCredentials, public_url: str, key_path: Path) -> dict[str, str]:
    """The `SCRUB_*` values that make Scrubbot this App (login on: a session secret is made)."""
    return {
        "SCRUB_GITHUB_APP_ID": creds.app_id,
        "SCRUB_GITHUB_PRIVATE_KEY": str(key_path),
        "SCRUB_WEBHOOK_SECRET": creds.webhook_secret,
        "SCRUB_OAUTH_CLIENT_ID": creds.client_id,
        "SCRUB_OAUTH_CLIENT_SECRET": creds.client_secret,
        "SCRUB_SESSION_SECRET": secrets.token_urlsafe(32),
        "SCRUB_PUBLIC_URL": public_url.rstrip("/"),
    }


def save(creds: AppCredentials, public_url: str, config_file: Path) -> Path:
    """Write the private key beside the config file (mode 0600) and set the values in it,
    keeping its other lines. Returns the key's path."""
    config_file.parent.mkdir(parents=True, exist_ok=True)
    key_path = config_file.parent / f"{creds.slug or 'scrubbot'}.private-key.pem"
    descriptor = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as key:
        key.write(creds.pem)
    os.chmod(key_path, 0o600)  # also when it existed before
    values = settings_lines(creds, public_url, key_path)
    kept = []
    if config_file.is_file():
        kept = [line for line in config_file.read_text().splitlines() if line.split("=", 1)[0].strip() not in values]
    lines = kept + [f"{name}={value}" for name, value in values.items()]
    descriptor = os.open(config_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write("\n".join(lines) + "\n")
    os.chmod(config_file, 0o600)  # it holds secrets now
    return key_path
