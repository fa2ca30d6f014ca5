"""A `/scrub` command put on the broker by anyone but the API (a repro host shares the broker:
docs/security.md) is refused by the trusted worker; a command from a verified webhook is acted on.
Before the seal, the worker ran any `scrub.handle_comment` message in the name it carried."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from app.domain import CommandRequest
from app.settings import Settings
from tests.conftest import WEBHOOK_FIXTURES
from tests.foundation import deliver
from workers import tasks
from workers.enqueue import RecordingEnqueuer

SECRET = "webhook-secret-the-repro-hosts-never-see"


@pytest.fixture
def worker(monkeypatch, tmp_path):
    """The trusted worker's command task, with execute_command recording what it would act on."""
    acted: list[CommandRequest] = []
    services = SimpleNamespace(settings=Settings(data_dir=tmp_path, webhook_secret=SECRET))
    monkeypatch.setattr(tasks, "worker_services", lambda app: services)
    monkeypatch.setattr(tasks, "execute_command", lambda request, services: acted.append(request) or "done")
    task = SimpleNamespace(app=None, request=SimpleNamespace(retries=0))

    def handle(kwargs: dict) -> str:
        carried = json.loads(json.dumps(kwargs))  # through the broker
        seal = carried.pop("seal", "")
        return tasks._handle_comment(task, CommandRequest(**carried), seal)

    return SimpleNamespace(handle=handle, acted=acted)


def test_a_forged_command_on_the_broker_is_refused(worker):
    forged = {"command": "approve", "repo": "o/r", "issue": 7, "user": "a-maintainer",
              "installation_id": None, "issue_url": "", "args": ""}
    assert worker.handle(forged).startswith("refused: the command carries no seal")
    assert worker.handle(forged | {"seal": "0" * 64}).startswith("refused: the command's seal does not match")
    assert worker.acted == []


def test_a_webhooks_command_is_sealed_by_the_api_and_acted_on_only_as_sent(worker, tmp_path):
    from app.api import create_app
    from app.db.migrate import upgrade

    settings = Settings(data_dir=tmp_path / "api", webhook_secret=SECRET)
    settings.ensure_data_dir()
    upgrade(settings.resolved_database_url)
    enqueuer = RecordingEnqueuer()
    payload = json.loads((WEBHOOK_FIXTURES / "issue_comment/created.with-installation.payload.json").read_text())
    payload["comment"]["body"] = "/scrub approve"
    with TestClient(create_app(settings, enqueuer=enqueuer)) as client:
        assert deliver(client, "issue_comment", payload, secret=SECRET).status_code == 202
    [sent] = enqueuer.comments
    assert worker.handle(sent) == "done" and worker.acted[0].command == "approve"
    altered = sent | {"user": "someone-else"}  # the same seal on another name
    assert worker.handle(altered).startswith("refused: the command's seal does not match")
    assert len(worker.acted) == 1
