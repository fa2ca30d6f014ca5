"""/metrics in Prometheus text format, parsed back with prometheus_client's own parser."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from app.db import queries
from tests.foundation import deliver


def samples(text: str) -> dict[tuple[str, tuple], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_metrics_count_deliveries_runs_verdicts_stages_and_queues(client, database, settings):
    from tests.web import sample_runs

    payload = {"zen": "hi", "hook_id": 1}
    assert deliver(client, "ping", payload).status_code == 200
    sample_runs.reproduced_issue_run(database, settings)
    with database.session() as session:
        queries.create_run(session, kind="selftest", status="queued")
        session.commit()

    response = client.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    found = samples(response.text)
    assert found[("scrub_webhook_deliveries_total", (("event", "ping"), ("outcome", "pong")))] == 1
    assert found[("scrub_runs_total", (("kind", "issue"), ("status", "succeeded")))] == 1
    assert found[("scrub_runs_active", (("kind", "selftest"), ("status", "queued")))] == 1
    assert found[("scrub_verdicts_total", (("kind", "issue"), ("verdict", "reproduces")))] == 1
    assert found[("scrub_stage_duration_seconds_count", (("kind", "issue"), ("stage", "reproduce")))] == 1
    assert found[("scrub_stage_duration_seconds_bucket", (("kind", "issue"), ("le", "+Inf"), ("stage", "bisect")))] == 1
    assert found[("scrub_broker_up", ())] == 1
    assert {k[1] for k in found if k[0] == "scrub_queue_depth"} == {(("queue", q),) for q in ("default", "repro-cpu", "repro-gpu")}


def test_queue_depth_counts_messages_waiting_on_the_embedded_broker(client, settings):
    from workers.celery_app import create_celery
    from workers.enqueue import CeleryEnqueuer

    producer = CeleryEnqueuer(create_celery(settings))  # no worker consumes them
    producer.run_pipeline(1)
    producer.repro_job({"run_id": 2}, "repro-cpu")  # the repro queues carry jobs (workers/jobs.py)
    producer.repro_job({"run_id": 3}, "repro-cpu")
    found = samples(client.get("/metrics").text)
    assert [found[("scrub_queue_depth", (("queue", q),))] for q in ("default", "repro-cpu", "repro-gpu")] == [1, 2, 0]


def test_sandbox_runs_are_counted_by_outcome(client, database, settings):
    from tests.web import sample_runs

    run_id = sample_runs.add_run(database, status="running")
    ctx = sample_runs.context(database, settings, run_id)
    sample_runs.stage(ctx, "reproduce", "done", "", {"reproduction": {"outcomes": {"exception": 3}}})
    found = samples(client.get("/metrics").text)
    assert found[("scrub_sandbox_runs_total", (("outcome", "exception"),))] == 3


def test_the_grafana_dashboard_queries_only_metrics_we_serve(client, database, settings):
    import json
    import re
    from pathlib import Path

    from tests.web import sample_runs

    sample_runs.reproduced_issue_run(database, settings)
    served = set()  # every sample name a family may have, from its TYPE line (empty families too)
    for kind_line in re.findall(r"^# TYPE (\S+) (\S+)$", client.get("/metrics").text, re.M):
        name, kind = kind_line
        served |= {"counter": {name if name.endswith("_total") else name + "_total"}, "histogram": {name + s for s in ("_bucket", "_sum", "_count")}}.get(kind, {name})
    dashboard = json.loads((Path(__file__).resolve().parents[2] / "docker" / "grafana-dashboard.json").read_text())
    queried = {name for panel in dashboard["panels"] for target in panel["targets"]
               for name in re.findall(r"\bscrub_[a-z_]+", target["expr"])}
    assert queried and queried <= served, queried - served
    for family in ("scrub_webhook_deliveries_total", "scrub_runs_total", "scrub_verdicts_total", "scrub_queue_depth",
                   "scrub_stage_duration_seconds_bucket", "scrub_sandbox_runs_total"):
        assert family in queried


def test_verdict_labels_come_from_a_closed_set(client, database):
    """A free-text verdict (`2 failures, 0 repeated`, a fuzz error message) would make a new
    series per distinct text; the label is its category, and anything unknown is `other`."""
    from app.db import stats

    verdicts = ["2 failures, 0 repeated", "0 failures, 0 repeated", "1 failures, 1 repeated, opened CI runs [7]",
                "failed: OSError: disk full on /var/tmp/xyz", "success: deterministic", "reproduces",
                "awaiting-approval", "the moon is made of cheese"]
    with database.session() as session:
        for verdict in verdicts:
            queries.create_run(session, kind="ci_ingest", status="succeeded", verdict=verdict)
        session.commit()
    labels = {dict(labels)["verdict"] for name, labels in samples(client.get("/metrics").text) if name == "scrub_verdicts_total"}
    assert labels <= set(stats.VERDICT_LABELS)
    assert labels == {"failures", "no-failures", "failed", "success", "reproduces", "awaiting-approval", "other"}


def metrics_app(tmp_path, **settings):
    from app.api import create_app
    from app.settings import Settings
    from tests.foundation import migrated_database
    from workers.enqueue import RecordingEnqueuer

    config = Settings(data_dir=tmp_path / "data", api_tokens="operator-token", **settings)
    config.ensure_data_dir()
    migrated_database(config.resolved_database_url).dispose()
    return create_app(config, enqueuer=RecordingEnqueuer(), local_token="local-token")


def scrape(app, peer: str, **headers: str) -> int:
    from fastapi.testclient import TestClient

    with TestClient(app, base_url="http://127.0.0.1:8000", client=(peer, 40000)) as client:
        return client.get("/metrics", headers=headers).status_code


def test_without_a_metrics_token_only_this_machines_loopback_scrapes(tmp_path):
    app = metrics_app(tmp_path)
    assert scrape(app, "127.0.0.1") == 200
    assert scrape(app, "10.1.2.3") == 403  # another host (a container network, the LAN)
    assert scrape(app, "127.0.0.1", **{"X-Forwarded-For": "203.0.113.9"}) == 403  # the internet, through a proxy
    assert scrape(app, "10.1.2.3", Authorization="Bearer operator-token") == 200  # an operator's API token
    assert scrape(app, "10.1.2.3", Authorization="Bearer local-token") == 200  # local mode's token
    assert scrape(app, "10.1.2.3", Authorization="Bearer guess") == 401


def test_a_metrics_token_is_what_prometheus_sends(tmp_path):
    app = metrics_app(tmp_path, metrics_token="prom-secret")
    assert scrape(app, "10.1.2.3", Authorization="Bearer prom-secret") == 200
    assert scrape(app, "127.0.0.1") == 401  # configured: loopback is not enough
    assert scrape(app, "10.1.2.3", Authorization="Bearer wrong") == 401
    assert scrape(app, "10.1.2.3", Authorization="Bearer operator-token") == 200
