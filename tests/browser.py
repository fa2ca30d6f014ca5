"""A headless Chromium driven over the DevTools protocol, to use a page the way a person does.

    browser = Browser.launch(profile_dir)
    page = browser.new_page()
    page.goto("http://127.0.0.1:8000/")
    page.click("form.approve button", navigates=True)   # real mouse events, at the button
    page.evaluate("document.title")
    page.screenshot(path)
    browser.close()                                       # and its whole process group

One WebSocket to the browser; each page is a flattened CDP session on it. Every wait has a
deadline, and `close` always kills what `launch` started.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable

from websockets.sync.client import ClientConnection, connect

TIMEOUT_S = 20
KEPT_EVENTS = 1000  # events nobody asked for yet; the oldest are dropped first
WINDOW = (1280, 900)
# --disable-background-networking & co: no connection attempts to Google's services, which
# this closed network refuses (and which would slow the start).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
    f"--window-size={WINDOW[0]},{WINDOW[1]}",
)


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    pass


class _Connection:
    """CDP over one WebSocket: commands get their answers; events are kept until asked for."""

    def __init__(self, url: str) -> None:
        self._ws: ClientConnection = connect(url, max_size=None, open_timeout=TIMEOUT_S)
        self._ids = itertools.count(1)
        self._events: deque[dict[str, Any]] = deque(maxlen=KEPT_EVENTS)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict[str, Any]:
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._ws.send(json.dumps(message))
        reply = self._receive_until(lambda m: m.get("id") == message_id, f"the reply to {method}")
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    def events(self, method: str, session: str) -> list[dict[str, Any]]:
        """The params of the `method` events received so far."""
        return [e["params"] for e in self._events if e["method"] == method and e.get("sessionId") == session]

    def drop_events(self, method: str, session: str) -> None:
        kept = [e for e in self._events if not (e["method"] == method and e.get("sessionId") == session)]
        self._events = deque(kept, maxlen=KEPT_EVENTS)

    def wait_event(self, method: str, session: str, match: Callable[[dict], bool] = lambda params: True) -> dict[str, Any]:
        """The params of the first `method` event (received already, or yet to come) that match."""
        def wanted(message: dict) -> bool:
            return message.get("method") == method and message.get("sessionId") == session and match(message["params"])

        for event in self._events:
            if wanted(event):
                self._events.remove(event)
                return event["params"]
        return self._receive_until(wanted, method)["params"]

    def _receive_until(self, wanted: Callable[[dict], bool], what: str, timeout: float = TIMEOUT_S) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                message = json.loads(self._ws.recv(timeout=max(remaining, 0)))
            except TimeoutError:
                raise BrowserError(f"no {what} within {timeout}s") from None
            if wanted(message):
                return message
            if "method" in message:
                self._events.append(message)

    def close(self) -> None:
        self._ws.close()


class Page:
    """One tab."""

    def __init__(self, connection: _Connection, target_id: str, session: str) -> None:
        self._cdp, self.target_id, self.session = connection, target_id, session
        for domain in ("Page", "Runtime"):
            self._call(f"{domain}.enable")
        self._call("Page.setLifecycleEventsEnabled", enabled=True)

    def _call(self, method: str, **params: Any) -> dict[str, Any]:
        return self._cdp.call(method, params, self.session)

    def goto(self, url: str) -> None:
        """Navigate and wait until the new document has loaded."""
        result = self._call("Page.navigate", url=url)
        if result.get("errorText"):
            raise BrowserError(f"{url}: {result['errorText']}")
        self._wait_for_load(result["loaderId"])

    def _wait_for_load(self, loader_id: str | None = None) -> None:
        """The `load` of the document `loader_id`, or of the next one the main frame navigates to."""
        if loader_id is None:
            loader_id = self._cdp.wait_event("Page.frameNavigated", self.session, lambda p: "parentId" not in p["frame"])["frame"]["loaderId"]
        self._cdp.wait_event("Page.lifecycleEvent", self.session, lambda p: p["name"] == "load" and p["loaderId"] == loader_id)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited if a promise), as JSON."""
        result = self._call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(f"{expression!r}: {details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = TIMEOUT_S, poll_s: float = 0.1) -> Any:
        """The first truthy value of `expression`, polled (the page may change on its own)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"{expression!r} stayed {value!r} for {timeout}s")
            time.sleep(poll_s)

    def text(self, selector: str) -> str:
        """What a person sees of the element: its rendered text."""
        value = self.evaluate(f"document.querySelector({json.dumps(selector)})?.innerText ?? null")
        if value is None:
            raise BrowserError(f"no element matches {selector!r}")
        return value

    def visible(self, selector: str) -> bool:
        """Rendered with a size, not hidden by CSS (display, visibility, opacity)."""
        return self.evaluate(f"""(() => {{
            const element = document.querySelector({json.dumps(selector)});
            return !!element && element.getClientRects().length > 0
                && element.checkVisibility({{opacityProperty: true, visibilityProperty: true}});
        }})()""")

    def click(self, selector: str, navigates: bool = False) -> None:
        """Press and release the left mouse button over the element, as a person would: the
        click goes to whatever is on top at that point, so a hidden or covered element fails."""
        center = self.evaluate(f"""(() => {{
            const element = document.querySelector({json.dumps(selector)});
            if (!element) return "missing";
            element.scrollIntoView({{block: "center"}});
            const box = element.getBoundingClientRect();
            const x = box.left + box.width / 2, y = box.top + box.height / 2;
            const hit = document.elementFromPoint(x, y);
            if (!box.width || !box.height || !hit || !element.contains(hit)) return "not clickable";
            return [x, y];
        }})()""")
        if isinstance(center, str):
            raise BrowserError(f"{selector!r}: {center}")
        if navigates:
            self._cdp.drop_events("Page.frameNavigated", self.session)
        x, y = center
        self._call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self._call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        if navigates:
            self._wait_for_load()

    def screenshot(self, path: Path, max_height: int = 4000) -> Path:
        """The whole page (up to `max_height` CSS pixels) as a PNG."""
        size = self._call("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], max_height), "scale": 1}
        data = self._call("Page.captureScreenshot", format="png", captureBeyondViewport=True, clip=clip)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def errors(self) -> list[str]:
        """The JavaScript exceptions thrown in this page so far (uncaught ones, and rejections)."""
        self.evaluate("0")  # a round trip: whatever the page reported before is now received
        details = [e["exceptionDetails"] for e in self._cdp.events("Runtime.exceptionThrown", self.session)]
        return [d.get("exception", {}).get("description") or d["text"] for d in details]

    def close(self) -> None:
        self._cdp.call("Target.closeTarget", {"targetId": self.target_id})


class Browser:
    def __init__(self, process: subprocess.Popen, connection: _Connection) -> None:
        self._process, self._cdp = process, connection

    @classmethod
    def launch(cls, profile_dir: Path, binary: str | None = None) -> "Browser":
        """Start Chromium with a fresh profile in `profile_dir` and connect to it."""
        binary = binary or chromium_binary()
        if binary is None:
            raise BrowserError("chromium is not installed")
        profile_dir.mkdir(parents=True, exist_ok=True)
        log = profile_dir.parent / f"{profile_dir.name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [binary, *FLAGS, f"--user-data-dir={profile_dir}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: `close` kills every child
            )
        try:
            port, path = _devtools_endpoint(profile_dir / "DevToolsActivePort", process, log)
            return cls(process, _Connection(f"ws://127.0.0.1:{port}{path}"))
        except BaseException:
            _kill_group(process)
            raise

    def new_page(self) -> Page:
        target = self._cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self._cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return Page(self._cdp, target, session)

    def close(self) -> None:
        try:
            self._cdp.call("Browser.close")
            self._cdp.close()
            self._process.wait(5)
        except Exception:  # noqa: BLE001  (already gone, or hung: killed below either way)
            pass
        finally:
            _kill_group(self._process)


def _devtools_endpoint(active_port: Path, process: subprocess.Popen, log: Path) -> tuple[int, str]:
    """Chromium writes the port it chose, and the browser's WebSocket path, to this file."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrowserError(f"chromium exited with {process.returncode}:\n{log.read_text(errors='replace')[-2000:]}")
        lines = active_port.read_text().split("\n") if active_port.exists() else []
        if len(lines) >= 2 and lines[0].isdigit() and lines[1].startswith("/devtools/"):
            return int(lines[0]), lines[1].strip()
        time.sleep(0.05)
    raise BrowserError(f"chromium wrote no {active_port} within {TIMEOUT_S}s")


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
