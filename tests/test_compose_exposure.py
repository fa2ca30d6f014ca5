"""docker-compose.yml publishes only what must be public: the API, on the host's loopback."""

from __future__ import annotations

from tests.test_deployment import compose


def test_postgres_and_redis_are_not_published():
    services = compose()["services"]
    for name in ("postgres", "redis", "worker", "worker-repro", "worker-gpu"):
        assert "ports" not in services[name], name


def test_the_api_is_published_on_loopback_unless_the_operator_says_otherwise():
    [mapping] = compose()["services"]["api"]["ports"]
    assert mapping == "${SCRUB_BIND_ADDRESS:-127.0.0.1}:8000:8000"


def test_login_settings_reach_the_api_and_no_login_is_not_the_default():
    env = compose()["services"]["api"]["environment"]
    for name in ("SCRUB_OAUTH_CLIENT_ID", "SCRUB_OAUTH_CLIENT_SECRET", "SCRUB_SESSION_SECRET", "SCRUB_API_TOKENS"):
        assert name in env
    assert env["SCRUB_INSECURE_NO_LOGIN"] == "${SCRUB_INSECURE_NO_LOGIN:-false}"
