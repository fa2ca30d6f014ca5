"""`GET /metrics`: Prometheus text format, computed when scraped (see app/db/stats.py for why
from the database, not per-process counters).

    scrub_webhook_deliveries_total{event,outcome}   outcome: queued, ignored, pong, not_queued, received
    scrub_runs_total{kind,status}                   runs that finished, by how
    scrub_runs_active{kind,status}                  queued, running, awaiting_approval now
    scrub_verdicts_total{kind,verdict}           verdict: a closed set (stats.VERDICT_LABELS), `other` for the rest
    scrub_stage_duration_seconds{kind,stage}        histogram of finished stages
    scrub_queue_depth{queue}                        messages waiting on the broker
    scrub_broker_up                                 1 when the broker answered this scrape
    scrub_sandbox_runs_total{outcome}               sandboxed repro / rerun runs

Who may scrape: `may_scrape` (a bearer token, or loopback clients when none is configured).
"""

from __future__ import annotations

from typing import Any, Iterator

import hmac

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client import exposition

from app.api.access import token_digest
from app.api.deps import ServicesDep
from app.api.hosts import is_loopback
from app.db import stats
from workers import broker_probe

router = APIRouter()
# The classic text format: every Prometheus version reads it (our names are plain ASCII).
CONTENT_TYPE = getattr(exposition, "CONTENT_TYPE_PLAIN_0_0_4", exposition.CONTENT_TYPE_LATEST)


class ScrubCollector:
    def __init__(self, services: Any) -> None:
        self.services = services

    def collect(self) -> Iterator[Metric]:
        with self.services.database.session() as session:
            found = stats.collect(session)
        yield _counter("scrub_webhook_deliveries", "Webhook deliveries recorded, by event and outcome.",
                       ["event", "outcome"], found.deliveries)
        yield _counter("scrub_runs", "Runs that finished, by kind and final status.", ["kind", "status"], found.runs_finished)
        active = GaugeMetricFamily("scrub_runs_active", "Runs queued, running or awaiting approval.", labels=["kind", "status"])
        for labels, value in sorted(found.runs_active.items()):
            active.add_metric(list(labels), value)
        yield active
        yield _counter("scrub_verdicts", "Runs by verdict.", ["kind", "verdict"], found.verdicts)
        yield _durations(found.stage_durations)
        yield _counter("scrub_sandbox_runs", "Sandboxed repro and rerun runs, by outcome.", ["outcome"],
                       {(k,): v for k, v in found.sandbox_runs.items()})
        yield from _queues(self.services.settings)


def _counter(name: str, documentation: str, labels: list[str], values: dict[tuple[str, ...], int]) -> Metric:
    family = CounterMetricFamily(name, documentation, labels=labels)
    for key, value in sorted(values.items()):
        family.add_metric(list(key), value)
    return family


def _durations(histograms: dict[tuple[str, str], stats.Histogram]) -> Metric:
    family = HistogramMetricFamily("scrub_stage_duration_seconds", "How long finished stages took.", labels=["kind", "stage"])
    for (kind, stage), histogram in sorted(histograms.items()):
        buckets = [(_bound(b), c) for b, c in zip(stats.DURATION_BUCKETS, histogram.buckets)] + [("+Inf", histogram.count)]
        family.add_metric([kind, stage], buckets, histogram.total)
    return family


def _bound(value: float) -> str:
    return repr(float(value))


def _queues(settings: Any) -> Iterator[Metric]:
    up = GaugeMetricFamily("scrub_broker_up", "1 when the broker answered this scrape.")
    depth = GaugeMetricFamily("scrub_queue_depth", "Messages waiting on each queue.", labels=["queue"])
    try:
        depths = broker_probe.queue_depths(settings)
    except broker_probe.BrokerUnavailable:
        up.add_metric([], 0)
        yield up
        return
    up.add_metric([], 1)
    for queue, n in depths.items():
        depth.add_metric([queue], n)
    yield up
    yield depth


FORWARDED = ("x-forwarded-for", "forwarded", "x-real-ip")


def may_scrape(request: Request, services: Any) -> None:
    """`/metrics` is not public. It answers `Authorization: Bearer <SCRUB_METRICS_TOKEN>` (what
    Prometheus sends: `authorization: {credentials: ...}` in its scrape config), an operator
    (one of `SCRUB_API_TOKENS`, local mode's token or its signed-in browser), and, only when no
    metrics token is set, a client on this machine's loopback that came through no proxy. Else
    401 (a token was expected) or 403."""
    expected = services.settings.metrics_token.strip()
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    if expected and scheme.lower() == "bearer" and hmac.compare_digest(
            token_digest(presented.strip()), token_digest(expected)):
        return
    if services.people.viewer(request).trusted:  # a wrong bearer token is a 401 there
        return
    if expected:
        raise HTTPException(401, "send Authorization: Bearer <SCRUB_METRICS_TOKEN>", headers={"WWW-Authenticate": "Bearer"})
    peer = request.client.host if request.client else ""
    proxied = any(name in request.headers for name in FORWARDED)
    if not (peer and is_loopback(peer)) or proxied:
        raise HTTPException(403, "/metrics answers this machine's loopback only: set SCRUB_METRICS_TOKEN to scrape it "
                                 "from elsewhere")


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request, services: ServicesDep) -> Response:
    may_scrape(request, services)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ScrubCollector(services))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE)
