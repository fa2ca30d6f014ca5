"""The GitHub App manifest flow of the fake GitHub.

`POST /settings/apps/new?state=S` (and `/organizations/{org}/settings/apps/new`, web host, form
field `manifest`) plays the person clicking "Create GitHub App": it keeps the manifest under a
one-use code and redirects to the manifest's `redirect_url` with `code` and `state`.
`POST /app-manifests/{code}/conversions` (API, no authentication) answers 201 with the new
App: id, slug, html_url, a fresh RSA private key (`pem`), webhook secret and OAuth client
credentials; from then on the fake accepts JWTs of that App (its id and public key). A used or
unknown code is 404. `GET /app/installations` and `GET /app/hook/deliveries` (App JWT) list the
fake's installations and `fake.hook_deliveries`.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from tests.fakes.fake_github import FakeGitHub


def _new_key() -> tuple[str, bytes]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                            serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return pem, public


def manifest_routes(fake: "FakeGitHub") -> list[Route]:
    async def create(request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        try:
            manifest = json.loads(form.get("manifest", ""))
        except ValueError:
            return Response("invalid manifest", status_code=422)
        redirect = manifest.get("redirect_url", "")
        if not isinstance(manifest, dict) or not redirect.startswith(("http://", "https://")) or not manifest.get("url"):
            return Response("the manifest needs url and redirect_url", status_code=422)
        code = secrets.token_hex(10)
        with fake.lock:
            fake.manifest_codes[code] = manifest
        return RedirectResponse(f"{redirect}?code={code}&state={request.query_params.get('state', '')}", 302)

    async def conversions(request: Request) -> Response:
        with fake.lock:
            manifest = fake.manifest_codes.pop(request.path_params["code"], None)
        if manifest is None:
            return JSONResponse({"message": "Not Found"}, status_code=404)
        pem, public = _new_key()
        slug = str(manifest.get("name", "app")).lower().replace(" ", "-")
        with fake.lock:
            fake.app_id, fake.app_public_key, fake.created_manifest = 4242, public, manifest
        return JSONResponse({"id": 4242, "slug": slug, "name": manifest.get("name"), "node_id": "A_1",
                             "owner": {"login": fake.user_login}, "html_url": f"https://github.com/apps/{slug}",
                             "client_id": "Iv1.fakeclient", "client_secret": secrets.token_hex(20),
                             "webhook_secret": secrets.token_hex(20), "pem": pem,
                             "permissions": manifest.get("default_permissions", {}),
                             "events": manifest.get("default_events", [])}, status_code=201)

    return [
        Route("/settings/apps/new", create, methods=["POST"]),
        Route("/organizations/{org}/settings/apps/new", create, methods=["POST"]),
        Route("/app-manifests/{code}/conversions", conversions, methods=["POST"]),
    ]
