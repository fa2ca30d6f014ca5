"""No input gives a 5xx: schemathesis over the app's own OpenAPI schema, the real app on SQLite.

A bounded number of examples per operation (`MAX_EXAMPLES`), so the whole file runs in
seconds; the only check is `not_a_server_error` (the status page answers HTML, and the JSON
routes declare plain dicts, so response-schema checks would say nothing useful).
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from app.db import queries

MAX_EXAMPLES = 25


@pytest.fixture
def api_schema(settings, database, enqueuer):  # noqa: F811  (the foundation's fixtures)
    from app.api import create_app

    with database.session() as session:  # something to find, approve and retry
        queries.create_run(session, kind="issue", repo="o/r", target="https://github.com/o/r/issues/1",
                           trigger="label", issue=1, params={"repo": "o/r", "issue": 1})
        session.commit()
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(settings, enqueuer=enqueuer))


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
def test_no_input_gives_a_server_error(case):
    case.call_and_validate(checks=[not_a_server_error])
