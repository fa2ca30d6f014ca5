"""Downloaded log archives, bounded: at most `ci_logs_repo_mb` per repository and
`ci_logs_total_mb` in all under `<data dir>/ci-logs/`.

Anyone who can make CI fail (a fork's pull request) makes Scrubbot download a log archive,
so the archives may not grow the data dir without bound. A download stops past the smaller
cap (the archive is refused and nothing is kept); after a download the oldest archives (by
modification time) are evicted until both caps hold again, never the one just fetched. An
evicted archive is downloaded again if its ingest is retried. Concurrent downloads may
overshoot a cap by the archives in flight, until the next one evicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MiB = 1 << 20
ROOT_NAME = "ci-logs"


def logs_root(data_dir: Path) -> Path:
    return Path(data_dir) / ROOT_NAME


def archive_path(data_dir: Path, repo: str, run_id: int, attempt: int) -> Path:
    return logs_root(data_dir) / repo.replace("/", "__") / f"run-{run_id}-attempt-{attempt}.zip"


@dataclass(frozen=True)
class Caps:
    repo_bytes: int
    total_bytes: int

    @classmethod
    def from_settings(cls, settings) -> Caps:
        return cls(int(settings.ci_logs_repo_mb) * MiB, int(settings.ci_logs_total_mb) * MiB)

    @property
    def per_archive(self) -> int:
        return min(self.repo_bytes, self.total_bytes)


@dataclass(frozen=True)
class Eviction:
    files: int = 0
    bytes: int = 0

    def describe(self) -> str:
        if not self.files:
            return ""
        return f"evicted {self.files} older archive(s), {self.bytes // 1024} KiB, to stay under the caps"


def _archives(folder: Path) -> list[tuple[float, int, Path]]:
    found = []
    for path in folder.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                stat = path.stat()
                found.append((stat.st_mtime, stat.st_size, path))
        except OSError:  # evicted meanwhile by another worker
            continue
    return sorted(found)


def make_room(data_dir: Path, keep: Path, caps: Caps) -> Eviction:
    """Evict the oldest archives (not `keep`) until its repository and the whole store fit."""
    files = freed = 0
    for folder, cap in ((keep.parent, caps.repo_bytes), (logs_root(data_dir), caps.total_bytes)):
        archives = _archives(folder)
        total = sum(size for _, size, _ in archives)
        for _, size, path in archives:
            if total <= cap:
                break
            if path == keep:
                continue
            path.unlink(missing_ok=True)
            total -= size
            files, freed = files + 1, freed + size
    return Eviction(files, freed)
