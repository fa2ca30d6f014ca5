"""A PEP 503 package index's torch wheels, and the `torch/version.py` inside one of them.

`torch_wheels(index_url)` reads `<index>/torch/` (the "simple" page: one `<a href>` per file)
and keeps the wheels this interpreter can install (its tags: `cp311` on `linux_x86_64`, or
pure `py3-none-any`). `peek_version_py(wheel, cache)` reads only `torch/version.py` out of a
remote wheel: HTTP range requests for the zip's central directory and that one member (a
nightly CPU wheel is ~200 MB, a CUDA one several GB). A server that ignores `Range` is answered
by downloading the whole wheel into `cache`, where the install then finds it. What a wheel said
is remembered per file name (`cache/peeked.json`), so each nightly is looked at once.
"""

from __future__ import annotations

import json
import re
import struct
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename
from packaging.version import InvalidVersion, Version

TIMEOUT_S = 60.0
_DEV_DATE = re.compile(r"\.dev(\d{8})")
VERSION_MEMBER = "torch/version.py"


class IndexUnavailable(RuntimeError):
    """The index cannot be read (unreachable, not PEP 503, no torch)."""


@dataclass(frozen=True)
class Wheel:
    filename: str
    url: str
    version: str  # `2.10.0.dev20250901+cpu`

    @property
    def dev_date(self) -> str | None:
        """`20250901` for a nightly, None for a release."""
        found = _DEV_DATE.search(self.version)
        return found.group(1) if found else None

    @property
    def sort_key(self) -> Version:
        return Version(self.version)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data):
        if self._href is not None and data.strip():
            self.links.append((data.strip(), self._href))
            self._href = None


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"User-Agent": "scrubbot", **(headers or {})})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 (an operator's index)
        return response.status, response.read()


def torch_wheels(index_url: str, *, installable: bool = True) -> list[Wheel]:
    """The torch wheels on a PEP 503 index, oldest version first (installable here only)."""
    page = index_url.rstrip("/") + "/torch/"
    try:
        _, body = _get(page)
    except OSError as exc:
        raise IndexUnavailable(f"cannot read the torch index {page}: {exc}") from None
    parser = _Links()
    parser.feed(body.decode("utf-8", "replace"))
    supported = set(sys_tags()) if installable else None
    found = []
    for text, href in parser.links:
        name = urllib.parse.unquote(text)
        if not name.endswith(".whl"):
            continue
        try:
            _, version, _, tags = parse_wheel_filename(name)
        except (ValueError, InvalidVersion):
            continue
        if supported is not None and not tags & supported:
            continue
        found.append(Wheel(name, urllib.parse.urljoin(page, href.split("#", 1)[0]), str(version)))
    return sorted(found, key=lambda wheel: wheel.sort_key)


def _range(url: str, start: int | None, length: int) -> bytes | None:
    """Bytes [start, start+length) (start None: the last `length`); None if ranges are ignored."""
    spec = f"bytes=-{length}" if start is None else f"bytes={start}-{start + length - 1}"
    status, body = _get(url, {"Range": spec})
    return body if status == 206 else None


def _member_by_ranges(url: str, member: str) -> bytes | None:
    """One member of a remote zip through range requests; None if the server ignores ranges."""
    tail = _range(url, None, 1 << 16)
    if tail is None:
        return None
    end = tail.rfind(b"PK\x05\x06")
    if end < 0:
        raise IndexUnavailable(f"{url} is not a zip (no end of central directory in its last 64 KiB)")
    size, offset = struct.unpack("<II", tail[end + 12:end + 20])
    directory = _range(url, offset, size) or b""
    at = 0
    while at + 46 <= len(directory) and directory[at:at + 4] == b"PK\x01\x02":
        method, _, _, _, compressed = struct.unpack("<HHHII", directory[at + 10:at + 24])
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[at + 28:at + 34])
        local = struct.unpack("<I", directory[at + 42:at + 46])[0]
        name = directory[at + 46:at + 46 + name_len].decode("utf-8", "replace")
        if name == member:
            header = _range(url, local, 30) or b""
            skip = 30 + sum(struct.unpack("<HH", header[26:30]))
            raw = _range(url, local + skip, compressed) or b""
            if method == 0:
                return raw
            import zlib

            return zlib.decompress(raw, -15)
        at += 46 + name_len + extra_len + comment_len
    raise IndexUnavailable(f"{url} has no {member}")


def download(wheel: Wheel, cache: Path) -> Path:
    """The wheel file in `cache` (downloaded once)."""
    path = Path(cache) / wheel.filename
    if not path.is_file():
        Path(cache).mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".part")
        with urllib.request.urlopen(urllib.request.Request(wheel.url, headers={"User-Agent": "scrubbot"}),
                                    timeout=TIMEOUT_S) as response, open(partial, "wb") as out:  # noqa: S310
            while chunk := response.read(1 << 20):
                out.write(chunk)
        partial.rename(path)
    return path


def peek_version_py(wheel: Wheel, cache: Path) -> str:
    """The text of the wheel's `torch/version.py` (remembered per file name in `cache`)."""
    memo_path = Path(cache) / "peeked.json"
    memo = json.loads(memo_path.read_text()) if memo_path.is_file() else {}
    if wheel.filename in memo:
        return memo[wheel.filename]
    local = Path(cache) / wheel.filename
    text = None
    if not local.is_file():
        try:
            data = _member_by_ranges(wheel.url, VERSION_MEMBER)
        except OSError as exc:
            raise IndexUnavailable(f"cannot read {wheel.url}: {exc}") from None
        text = data.decode("utf-8") if data is not None else None
    if text is None:
        with zipfile.ZipFile(download(wheel, cache)) as archive:
            text = archive.read(VERSION_MEMBER).decode("utf-8")
    memo[wheel.filename] = text
    Path(cache).mkdir(parents=True, exist_ok=True)
    memo_path.write_text(json.dumps(memo, indent=1, sort_keys=True))
    return text
