"""GitHub Actions logs -> failing tests: `read_log(path, repo=...) -> LogReport`.

A run's log archive (`GET /repos/{o}/{r}/actions/runs/{id}/logs`) is a zip holding each job
twice: `<i>_<job>.txt`, the whole job, and `<job>/<n>_<step>.txt`, one file per step. Every
job is read once, from its job file, or from its step files in step order when it has none,
so no failure is counted twice. A plain text log is one job.

Everything streams: members are read through `ZipFile.open` in fixed-size chunks and scanned
by `cilogs_scan`, so memory stays flat whatever the archive's size (a 300 MB archive is read in
about the memory of a 30 MB one). Pure: no settings, network or database.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import BinaryIO

from app.engine.cilogs.job import JobLogParser
from app.engine.cilogs.model import Draft, Failure, JobLog, LogReport
from app.engine.cilogs.scan import read_chunks, scan
from app.engine.diagnosis.catalog import diagnose
from app.engine.cilogs.fingerprint import ci_fingerprint

__all__ = [
    "Failure",
    "JobLog",
    "LogReport",
    "archive_job_name",
    "archive_jobs",
    "parse_stream",
    "read_archive",
    "read_log",
    "read_text_log",
]

_JOB_FILE = re.compile(r"^(?:(?P<index>\d+)_)?(?P<name>[^/]+)\.txt$")
_STEP_FILE = re.compile(r"^(?P<job>[^/]+)/(?P<index>\d+)_(?P<name>[^/]+)\.txt$")  # not system.txt
_NOT_IN_FILE_NAMES = re.compile(r'[/\\:*?"<>|]')


def archive_job_name(job: str) -> str:
    """How a job's name appears in the archive: GitHub drops the characters a path cannot hold
    (a composite job "build / test" becomes "build  test"). Match API job names with this."""
    return _NOT_IN_FILE_NAMES.sub("", job)


def display_job_names(archive_names: Iterable[str], api_names: Iterable[str]) -> dict[str, str]:
    """{archive job name: the job's real name from the jobs API} for the names that match."""
    by_archive_name = {archive_job_name(name): name for name in api_names}
    return {name: by_archive_name[name] for name in archive_names if name in by_archive_name}


def archive_jobs(names: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Pick what to read in an archive: [(job name, [member, ...])], in job order.

    A job with a job file is read from it alone; a job with only step files from those, in
    step order. Other members are ignored.
    """
    job_files: dict[str, tuple[int, str]] = {}
    step_files: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        if name.endswith("/"):
            continue
        if job := _JOB_FILE.match(name):
            job_files[job.group("name")] = (int(job.group("index") or 0), name)
        elif step := _STEP_FILE.match(name):
            step_files.setdefault(step.group("job"), []).append((int(step.group("index") or 0), name))
    jobs = [(index, job, [member]) for job, (index, member) in job_files.items()]
    for job, steps in step_files.items():
        if job not in job_files:
            ordered = [member for _, member in sorted(steps)]
            jobs.append((min(index for index, _ in steps) + 10**6, job, ordered))
    return [(job, members) for _, job, members in sorted(jobs)]


def parse_stream(chunks: Iterable[bytes], job: str = "", *, repo: str = "", text_log: bool = False) -> tuple[JobLog, list[Failure]]:
    """Scan one job's log (an iterable of byte chunks) and return the job and its failures."""
    parser = JobLogParser(job, bare_traceback_is_failure=text_log)
    lines = scan(chunks, parser)
    failures = [_finish_failure(draft, job, repo) for draft in parser.finish()]
    return JobLog(name=job, lines=lines, exit_code=parser.exit_code, failures=len(failures)), failures


def read_archive(path: str | Path, *, repo: str = "", job_names: Iterable[str] = ()) -> LogReport:
    """Every job of a run's log archive, each failure once.

    `job_names`: the run's job names from the jobs API, to report real names ("build / test")
    instead of the archive's path-safe ones ("build  test").
    """
    report = LogReport()
    with zipfile.ZipFile(path) as archive:
        selected = archive_jobs(archive.namelist())
        real_names = display_job_names((job for job, _ in selected), job_names)
        for archive_name, members in selected:
            job = real_names.get(archive_name, archive_name)
            chunks = chain.from_iterable(_member_chunks(archive, member) for member in members)
            log, failures = parse_stream(chunks, job, repo=repo)
            log.source = members[0] if len(members) == 1 else f"{archive_name}/*.txt"
            report.jobs.append(log)
            report.failures.extend(failures)
    return report


def read_text_log(source: str | Path | BinaryIO, *, job: str = "", repo: str = "") -> LogReport:
    """A plain text log (one job's log, or raw output pasted from anywhere)."""
    if isinstance(source, (str, Path)):
        with open(source, "rb") as stream:
            return read_text_log(stream, job=job, repo=repo)
    log, failures = parse_stream(read_chunks(source), job, repo=repo, text_log=True)
    log.source = getattr(source, "name", "") or ""
    return LogReport(jobs=[log], failures=failures)


ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_SAMPLE_BYTES = 64 * 1024
_MAX_UNDECODABLE = 0.05  # share of a text log's first bytes that may be invalid UTF-8 (stray Latin-1)


class UnreadableLog(ValueError):
    """Neither a log archive nor a text log: a directory, a damaged zip, binary data."""


def check_log_file(path: str | Path) -> None:
    """Raise `UnreadableLog` with a sentence a person can act on, before anything is parsed."""
    path = Path(path)
    if path.is_dir():
        raise UnreadableLog(f"{path} is a directory; pass a run's log archive (.zip) or a text log")
    if not path.is_file():
        raise UnreadableLog(f"no such file: {path}")
    with path.open("rb") as stream:
        sample = stream.read(_SAMPLE_BYTES)
    if sample.startswith(ZIP_MAGIC):
        if not zipfile.is_zipfile(path):
            raise UnreadableLog(f"{path} is a damaged zip archive (truncated download?): download the run's logs again")
        return
    undecodable = sample.decode("utf-8", errors="replace").count("\ufffd")
    if b"\x00" in sample or undecodable > _MAX_UNDECODABLE * max(1, len(sample)):
        raise UnreadableLog(f"{path} is neither a log archive (zip) nor a text log (it holds binary data)")


def read_log(path: str | Path, *, repo: str = "", job_names: Iterable[str] = ()) -> LogReport:
    """A run archive (zip) or a plain text log, told apart by content, not by name;
    `UnreadableLog` for anything else."""
    check_log_file(path)
    if zipfile.is_zipfile(path):
        return read_archive(path, repo=repo, job_names=job_names)
    return read_text_log(path, job=Path(path).stem, repo=repo)


def _member_chunks(archive: zipfile.ZipFile, member: str) -> Iterator[bytes]:
    last = b""
    with archive.open(member) as stream:
        for last in read_chunks(stream):
            yield last
    if last and not last.endswith(b"\n"):
        yield b"\n"  # a step file may end without a newline: never glue it to the next one


def _finish_failure(draft: Draft, job: str, repo: str) -> Failure:
    failure = Failure(
        job=job,
        test=draft.test,
        kind=draft.kind or "exception",
        exception=draft.exception,
        message=draft.message,
        excerpt=draft.excerpt,
        source=draft.source,
    )
    return fingerprinted(diagnosed(failure), repo)


def diagnosed(failure: Failure) -> Failure:
    """The failure with the catalog's hint: from its own message first, then its excerpt."""
    found = diagnose(f"{failure.exception}: {failure.message}") or diagnose(failure.excerpt)
    return replace(failure, hint=found.hint, diagnosis=found.name) if found else failure


def fingerprinted(failure: Failure, repo: str) -> Failure:
    signature = ci_fingerprint(repo, failure.job, failure.test, failure.exception, failure.message)
    return replace(failure, signature=signature)
