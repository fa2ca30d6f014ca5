"""The Celery app built from settings, and the `scrub worker` command line."""

from __future__ import annotations

from typer.testing import CliRunner

from app.cli.main import app as cli
from app.settings import Settings
from workers.celery_app import create_celery, worker_argv


def test_queues_are_explicit_and_tasks_are_safe_to_redeliver(tmp_path):
    conf = create_celery(Settings(data_dir=tmp_path, broker_url="redis://127.0.0.1:1/0")).conf
    assert [q.name for q in conf.task_queues] == ["default", "repro-cpu", "repro-gpu"]
    assert conf.task_create_missing_queues is False and conf.task_default_queue == "default"
    assert conf.task_acks_late and conf.task_reject_on_worker_lost and conf.worker_prefetch_multiplier == 1
    assert conf.task_time_limit > conf.task_soft_time_limit
    assert conf.broker_transport_options["visibility_timeout"] > conf.task_time_limit


def test_embedded_broker_keeps_its_messages_under_the_data_dir(tmp_path):
    settings = Settings(data_dir=tmp_path)
    app = create_celery(settings)
    options = app.conf.broker_transport_options
    assert app.conf.broker_url.startswith("filesystem://")
    assert options["data_folder_in"] == options["data_folder_out"] == str(tmp_path.resolve() / "broker" / "queue")
    assert (tmp_path / "broker" / "processed").is_dir()
    # kombu's exchange tables default to ./control in the worker's cwd: keep them here too
    assert options["control_folder"] == str(tmp_path.resolve() / "broker" / "control")
    assert "--without-mingle" in worker_argv(settings, ["default"], 1)


def test_the_embedded_broker_made_by_a_worker_alone_is_private(tmp_path):
    """A worker started before any `scrub serve` (or migration) makes the data dir itself."""
    import os
    import stat

    data = tmp_path / "fresh"
    create_celery(Settings(data_dir=data))
    for path in (data, data / "broker", data / "broker" / "queue", data / "broker" / "control"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700, path


def test_worker_refuses_unknown_queues():
    result = CliRunner().invoke(cli, ["worker", "-Q", "default,gpu-typo"])
    assert result.exit_code != 0 and "gpu-typo" in result.output
