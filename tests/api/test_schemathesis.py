"""No input gives a 5xx: schemathesis over the app's own OpenAPI schema, the real app on SQLite.

A bounded number of examples per operation (`MAX_EXAMPLES`), so the whole file runs in
seconds; the only check is `not_a_server_error` (the status page answers HTML, and the JSON
routes declare plain dicts, so response-schema checks would say nothing useful).

The operations are driven through schemathesis' Python API (`operation.as_strategy()` under a
plain Hypothesis `@given`), not its pytest plugin: the plugin reaches into pytest internals
(`Function._nodeid`, gone in pytest 9.2), and a test runner upgrade must not turn this check off.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error

from app.db import queries

MAX_EXAMPLES = 25


def as_operator(app):
    """Every request as local mode's operator, on a loopback name: past the Host check and the
    token, so the routes themselves meet the generated input (not a 400 or a 401 in front)."""

    async def asgi(scope, receive, send):
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k not in (b"host", b"authorization")]
            scope = {**scope, "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", b"Bearer operator-token"),
                                          *headers]}
        await app(scope, receive, send)

    return asgi


def _operations(schema):
    for result in schema.get_all_operations():
        yield result.ok()


def test_no_input_gives_a_server_error(settings, database, enqueuer):  # noqa: F811  (the foundation's fixtures)
    from app.api import create_app

    with database.session() as session:  # something to find, approve and retry
        queries.create_run(session, kind="issue", repo="o/r", target="https://github.com/o/r/issues/1",
                           trigger="label", issue=1, params={"repo": "o/r", "issue": 1})
        session.commit()
    app = create_app(settings, enqueuer=enqueuer, local_token="operator-token")
    schema = schemathesis.openapi.from_asgi("/openapi.json", as_operator(app))
    operations = list(_operations(schema))
    labels = {op.label for op in operations}  # the schema really was read
    assert {"POST /webhooks/github", "GET /api/v1/runs", "POST /api/v1/runs/{run_id}/approve"} <= labels, labels

    failures: dict[str, str] = {}
    for operation in operations:
        @given(case=operation.as_strategy())
        @hypothesis_settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        def check(case):
            case.call_and_validate(checks=[not_a_server_error])

        try:
            check()
        except Exception as exc:  # noqa: BLE001  (collected so every operation is tried and named)
            failures[operation.label] = f"{type(exc).__name__}: {exc}"[:2000]
    assert not failures, "\n\n".join(f"{label}\n{why}" for label, why in failures.items())
