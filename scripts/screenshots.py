#!/usr/bin/env python3
"""Regenerate docs/screenshots/ from `scrub demo --full` runs: what a user sees after the demo.
Runs the demo into a fresh data dir, serves it (`scrub serve --no-worker`), and has Debian's
headless Chromium (Playwright, nothing downloaded) take the pictures.

    python scripts/screenshots.py [OUT_DIR]        # default: docs/screenshots
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
# (file, page, width, what): "page" the window, "full" the whole page, or a CSS selector.
# run.png, the README's picture: the top of the run whose training script was minimized.
SHOTS = (("runs.png", "/", 1280, "full"), ("run.png", "/runs/3", 1280, "page"),
         ("repro-diff.png", "/runs/3", 1280, "section.repros"), ("ci.png", "/runs/2", 1280, "full"),
         ("runs-narrow.png", "/", 400, "full"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs" / "screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    data = Path(tempfile.mkdtemp(prefix="scrub-screenshots-", dir=Path.home()))  # not /tmp: the sandbox hides it
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    token = secrets.token_urlsafe(16)  # local mode's sign-in token: the demo's runs are the operator's
    env.update(SCRUB_DATA_DIR=str(data), SCRUB_LOG_FORMAT="console", SCRUB_LOCAL_TOKEN=token)
    scrub = [sys.executable, "-m", "app.cli.main"]
    try:
        subprocess.run([*scrub, "demo", "--full"], env=env, cwd=ROOT, check=True)
        port = free_port()
        server = subprocess.Popen([*scrub, "serve", "--no-worker", "--port", str(port)], env=env, cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("scrub serve did not start")
                time.sleep(0.2)
            shoot(f"http://127.0.0.1:{port}", out, token)
        finally:
            server.terminate()
            server.wait(30)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def shoot(base: str, out: Path, token: str) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--hide-scrollbars"])
        for name, path, width, what in SHOTS:
            page = browser.new_page(viewport={"width": width, "height": 1150 if what == "page" else 900})
            page.goto(f"{base}/login?token={token}&next={quote(path)}")  # signs in, then goes to `path`
            if what in ("page", "full"):
                page.screenshot(path=str(out / name), full_page=what == "full")
            else:
                page.locator(what).screenshot(path=str(out / name))
            page.close()
            print(f"wrote {out / name}")
        browser.close()


if __name__ == "__main__":
    main()
