"""Fixtures of the attack tests: the fake GitHub over HTTP, `scrub serve` against it, and
restartable Redis/Postgres."""

from __future__ import annotations

import pytest

from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)
from tests.services import postgres_server, postgres_url, redis_server  # noqa: F401  (fixtures)
from tests.reliability.restartable import own_postgres, own_redis  # noqa: F401  (fixtures)
from tests.reliability.serve import Served, start_serve, stop_serve


@pytest.fixture
def serve(fake_github, tmp_path):  # noqa: F811
    served: Served = start_serve(tmp_path, fake_github.url)
    try:
        yield served
    finally:
        stop_serve(served)
