"""Who may read runs and press approve / retry / cancel: the status page and the API, with the
GitHub login (OAuth through the fake GitHub over HTTP), bearer tokens, CSRF and permissions."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from app.db import queries
from app.db.models import Run
from app.settings import Settings
from tests.foundation import migrated_database
from workers.enqueue import RecordingEnqueuer

SITE = "https://scrub.example.org"
REPO = "octo/public"
PRIVATE = "octo/secret"
TOKEN = "script-token-0123456789"


@pytest.fixture
def oauth(fake_github, tmp_path):
    """An app with GitHub login on, its database, enqueuer, and the fake GitHub."""
    fake_github.oauth_client_id, fake_github.oauth_client_secret = "client-1", "shh"
    fake_github.add_repo(REPO)
    fake_github.add_collaborator(REPO, "wanda", "write")
    fake_github.add_collaborator(REPO, "reed", "read")
    fake_github.set_private(PRIVATE)
    fake_github.add_collaborator(PRIVATE, "reed", "triage")
    settings = Settings(
        data_dir=tmp_path / "data", github_api_url=fake_github.url, github_token="app-token",
        oauth_client_id="client-1", oauth_client_secret="shh", session_secret="s" * 32,
        public_url=SITE, api_tokens=f"other,{TOKEN}",
    )
    settings.ensure_data_dir()
    database = migrated_database(settings.resolved_database_url)
    enqueuer = RecordingEnqueuer()
    from app.api import create_app

    with TestClient(create_app(settings, enqueuer=enqueuer), base_url=SITE) as client:
        yield client, database, enqueuer, fake_github
    database.dispose()


def make_run(database, repo: str = REPO, **fields) -> Run:
    with database.session() as session:
        run = queries.create_run(session, **{"kind": "issue", "repo": repo, "issue": 3, **fields})
        session.commit()
        return run


def status_of(database, run_id: int) -> Run:
    with database.session() as session:
        return session.get(Run, run_id)


def sign_in(client: TestClient, fake, login: str) -> None:
    """The whole web flow: /login -> GitHub's authorize page -> /auth/callback."""
    fake.oauth_login = login
    to_github = client.get("/login?next=/", follow_redirects=False)
    assert to_github.status_code == 303
    authorize = to_github.headers["location"]
    assert authorize.startswith(f"{fake.url}/login/oauth/authorize?") and "client_id=client-1" in authorize
    back = httpx.get(authorize, follow_redirects=False)  # the person clicks "Authorize"
    assert back.status_code == 302 and back.headers["location"].startswith(f"{SITE}/auth/callback?")
    parts = urlsplit(back.headers["location"])
    landed = client.get(f"{parts.path}?{parts.query}", follow_redirects=False)
    assert landed.status_code == 303 and landed.headers["location"] == "/", landed.text


def csrf_from(client: TestClient, run_id: int) -> str:
    page = client.get(f"/runs/{run_id}").text
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def press(client: TestClient, run_id: int, action: str, token: str | None, origin: str | None = SITE):
    headers = {"Origin": origin} if origin else {}
    data = {"csrf_token": token} if token else {}
    return client.post(f"/api/v1/runs/{run_id}/{action}?next=/runs/{run_id}", data=data, headers=headers,
                       follow_redirects=False)


def test_approve_needs_a_signed_in_user(oauth):
    client, database, enqueuer, _ = oauth
    run = make_run(database, status="awaiting_approval")
    assert press(client, run.id, "approve", None).status_code == 401
    assert client.post(f"/api/v1/runs/{run.id}/approve").status_code == 401  # a script without a token
    assert status_of(database, run.id).status == "awaiting_approval" and enqueuer.runs == []


def test_a_writer_approves_and_is_named(oauth):
    client, database, enqueuer, fake = oauth
    run = make_run(database, status="awaiting_approval")
    sign_in(client, fake, "wanda")
    assert "wanda" in client.get("/").text and "Sign out" in client.get("/").text
    answer = press(client, run.id, "approve", csrf_from(client, run.id))
    assert answer.status_code == 303, answer.text
    stored = status_of(database, run.id)
    assert (stored.status, stored.params["approved_by"]) == ("queued", "wanda")
    assert enqueuer.runs == [(run.id, "default")]
    asked = [r for r in fake.requests if r.path == f"/repos/{REPO}/collaborators/wanda/permission"]
    assert asked and asked[0].auth == "token"  # asked with the service's own credentials


def test_a_signed_in_reader_is_refused(oauth):
    client, database, enqueuer, fake = oauth
    run = make_run(database, status="failed")
    sign_in(client, fake, "reed")
    for action in ("retry", "cancel", "approve"):
        assert press(client, run.id, action, csrf_from(client, run.id)).status_code == 403
    assert status_of(database, run.id).status == "failed" and enqueuer.runs == []


def test_a_stranger_signed_in_is_refused(oauth):
    client, database, _, fake = oauth
    run = make_run(database, status="awaiting_approval")
    sign_in(client, fake, "mallory")
    assert press(client, run.id, "approve", csrf_from(client, run.id)).status_code == 403
    assert status_of(database, run.id).status == "awaiting_approval"


def test_cross_origin_and_tokenless_posts_are_refused_even_for_a_writer(oauth):
    client, database, _, fake = oauth
    run = make_run(database, status="awaiting_approval")
    sign_in(client, fake, "wanda")
    token = csrf_from(client, run.id)
    assert press(client, run.id, "approve", token, origin="https://evil.example").status_code == 403
    assert press(client, run.id, "approve", None).status_code == 403  # same origin, no token
    assert press(client, run.id, "approve", "forged" * 8).status_code == 403
    assert status_of(database, run.id).status == "awaiting_approval"


def test_bearer_tokens_for_scripts(oauth):
    client, database, enqueuer, _ = oauth
    run = make_run(database, status="failed")
    wrong = client.post(f"/api/v1/runs/{run.id}/retry", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and status_of(database, run.id).status == "failed"
    right = client.post(f"/api/v1/runs/{run.id}/retry", headers={"Authorization": f"Bearer {TOKEN}"})
    assert right.status_code == 202 and enqueuer.runs == [(run.id, "default")]


def test_cancel_stops_an_active_run(oauth):
    client, database, _, fake = oauth
    run = make_run(database, status="running")
    sign_in(client, fake, "wanda")
    assert press(client, run.id, "cancel", csrf_from(client, run.id)).status_code == 303
    stored = status_of(database, run.id)
    assert stored.status == "cancelled" and stored.error == "cancelled by wanda" and stored.ended_at


def test_runs_of_private_repositories_need_read_permission(oauth):
    client, database, _, fake = oauth
    public, private = make_run(database), make_run(database, repo=PRIVATE)
    assert client.get(f"/api/v1/runs/{public.id}").status_code == 200  # anonymous, public repo
    # Anonymous: a private run is answered exactly as a run that does not exist.
    missing = private.id + 100
    for path in ("/api/v1/runs/{}", "/runs/{}", "/runs/{}/artifacts/log", "/runs/{}/repro/original.py", "/runs/{}/events"):
        hidden, absent = client.get(path.format(private.id)), client.get(path.format(missing))
        assert hidden.status_code == absent.status_code == 404, path
        assert hidden.text.replace(str(private.id), "N") == absent.text.replace(str(missing), "N"), path
    assert client.get(f"/runs/{private.id}", headers={"Accept": "text/html"}).status_code == 404
    assert [r["id"] for r in client.get("/api/v1/runs").json()] == [public.id]
    sign_in(client, fake, "mallory")
    assert client.get(f"/api/v1/runs/{private.id}").status_code == 404
    client.cookies.clear()
    sign_in(client, fake, "reed")
    assert client.get(f"/api/v1/runs/{private.id}").status_code == 200
    assert {r["id"] for r in client.get("/api/v1/runs").json()} == {public.id, private.id}


def test_public_read_off_needs_a_login_for_everything(fake_github, tmp_path):
    settings = Settings(data_dir=tmp_path / "d", github_api_url=fake_github.url, github_token="t",
                        oauth_client_id="c", oauth_client_secret="s", session_secret="x" * 32, public_read=False)
    settings.ensure_data_dir()
    database = migrated_database(settings.resolved_database_url)
    run = make_run(database)
    from app.api import create_app

    with TestClient(create_app(settings, enqueuer=RecordingEnqueuer()), base_url="http://127.0.0.1:8000") as client:
        assert client.get(f"/api/v1/runs/{run.id}").status_code == 401
        assert client.get("/api/v1/runs").status_code == 401
        assert client.get("/", follow_redirects=False).headers["location"] == "/login?next=/"
        assert client.get("/healthz").status_code == 200  # stays open
        assert client.get("/openapi.json").status_code == 404 and client.get("/docs").status_code == 404
    database.dispose()


def test_callback_with_a_wrong_state_is_refused(oauth):
    client, _, _, fake = oauth
    client.get("/login", follow_redirects=False)
    answer = client.get("/auth/callback?code=abc&state=not-the-one")
    assert answer.status_code == 400 and "Sign-in expired" in answer.text
    assert "Sign in with GitHub" in client.get("/").text


def test_logout_ends_the_session(oauth):
    client, database, _, fake = oauth
    run = make_run(database, status="awaiting_approval")
    sign_in(client, fake, "wanda")
    token = csrf_from(client, run.id)
    assert client.post("/logout", data={"csrf_token": token}, headers={"Origin": SITE}, follow_redirects=False).status_code == 303
    assert press(client, run.id, "approve", token).status_code in (401, 403)
    assert "Sign in with GitHub" in client.get("/").text


def test_when_github_cannot_say_a_private_repository_is_neither_named_nor_shown(tmp_path):
    """The list's filter and the live list ask `can_read_or_not`: GitHub down is a no."""
    from app.api.access import People, Viewer

    class Down:
        def permission(self, repo, login):
            raise ConnectionError("GitHub is down")

        def is_private(self, repo):
            raise ConnectionError("GitHub is down")

    people = People(Settings(data_dir=tmp_path, oauth_client_id="c", oauth_client_secret="s", session_secret="x" * 32),
                    lambda installation: Down())
    run = Run(kind="issue", repo=PRIVATE, installation_id=1)
    assert people.can_read_or_not(Viewer("reed", "session"), run) is False
    assert people.can_read_or_not(Viewer(None, "anonymous"), run) is False
    assert people.can_read_or_not(Viewer("token:1", "token"), run) is True
