"""The Celery tasks' retry rule: a transient error retries after the configured delay, doubled."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.domain import CommandRequest
from app.settings import Settings
from workers import tasks


class Retry(Exception):
    pass


class FakeTask:
    """What a bound task gives the function: its app, the retry count, `retry()`."""

    def __init__(self, retries: int) -> None:
        self.app = None
        self.request = SimpleNamespace(retries=retries)
        self.countdown: float | None = None

    def retry(self, exc: BaseException, countdown: float) -> Retry:
        self.countdown = countdown
        return Retry(str(exc))


@pytest.fixture
def flaky_world(monkeypatch, tmp_path):
    services = SimpleNamespace(settings=Settings(data_dir=tmp_path, retry_delay_s=2.5))
    monkeypatch.setattr(tasks, "worker_services", lambda app: services)

    def transient(*args, **kwargs):
        raise ConnectionError("GitHub went away")

    monkeypatch.setattr(tasks, "execute_run", transient)
    monkeypatch.setattr(tasks, "execute_command", transient)


@pytest.mark.parametrize(("retries", "countdown"), [(0, 2.5), (2, 10.0)])
def test_a_run_retries_after_the_configured_delay_doubled_per_retry(flaky_world, retries, countdown):
    task = FakeTask(retries)
    with pytest.raises(Retry):
        tasks._run_pipeline(task, 7)
    assert task.countdown == countdown


def test_a_command_retries_after_the_configured_delay(flaky_world):
    task = FakeTask(1)
    with pytest.raises(Retry):
        tasks._handle_comment(task, CommandRequest("approve", "o/r", 1, "ann", None, "", ""))
    assert task.countdown == 5.0
