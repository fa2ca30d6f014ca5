"""The OAuth web flow of the fake GitHub (served beside the REST API, as the web host).

`GET /login/oauth/authorize` plays the person clicking "Authorize": it redirects straight back
to `redirect_uri` with a one-use `code` for `fake.oauth_login` and the caller's `state`.
`POST /login/oauth/access_token` (form fields, as GitHub takes them) trades the code for a user
token when the client id and secret are right, answering GitHub's 200-with-`error` otherwise;
`GET /user` with that token names the person.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from tests.fakes.fake_github import FakeGitHub


def oauth_routes(fake: "FakeGitHub") -> list[Route]:
    async def authorize(request: Request) -> Response:
        q = request.query_params
        if fake.oauth_client_id is not None and q.get("client_id") != fake.oauth_client_id:
            return Response("unknown OAuth App", status_code=404)
        redirect = q.get("redirect_uri", "")
        if not redirect.startswith(("http://", "https://")):
            return Response("redirect_uri is required", status_code=400)
        code = secrets.token_hex(10)
        with fake.lock:
            fake.oauth_codes[code] = fake.oauth_login
        separator = "&" if "?" in redirect else "?"
        return RedirectResponse(f"{redirect}{separator}{urlencode({'code': code, 'state': q.get('state', '')})}", 302)

    async def access_token(request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        if (fake.oauth_client_id is not None and form.get("client_id") != fake.oauth_client_id) or (
            fake.oauth_client_secret is not None and form.get("client_secret") != fake.oauth_client_secret
        ):
            return JSONResponse({"error": "incorrect_client_credentials",
                                 "error_description": "The client_id and/or client_secret passed are incorrect."})
        with fake.lock:
            login = fake.oauth_codes.pop(form.get("code", ""), None)
            if login is None:
                return JSONResponse({"error": "bad_verification_code",
                                     "error_description": "The code passed is incorrect or expired."})
            token = "gho_" + secrets.token_hex(18)
            fake.oauth_tokens[token] = login
        return JSONResponse({"access_token": token, "token_type": "bearer", "scope": ""})

    return [
        Route("/login/oauth/authorize", authorize, methods=["GET"]),
        Route("/login/oauth/access_token", access_token, methods=["POST"]),
    ]
