"""GitHub's OAuth web flow for people signing in to the status page (plain httpx).

`authorize_url` sends the browser to `<web>/login/oauth/authorize`; GitHub comes back to our
callback with `code` and the `state` we chose; `exchange_code` trades the code for a user
token at `<web>/login/oauth/access_token`, and `user_login` asks `GET <api>/user` who it is.
The user token is used for that one question and then dropped: permissions on a repository
are asked with the App's own credentials.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import httpx

TIMEOUT_S = 15.0


class OAuthError(RuntimeError):
    """The sign-in did not complete; the message is safe to show to the person."""


@dataclass(frozen=True)
class OAuthApp:
    client_id: str
    client_secret: str
    web_url: str  # https://github.com
    api_url: str  # https://api.github.com

    def authorize_url(self, redirect_uri: str, state: str) -> str:
        query = urlencode({"client_id": self.client_id, "redirect_uri": redirect_uri, "state": state,
                           "allow_signup": "false"})
        return f"{self.web_url.rstrip('/')}/login/oauth/authorize?{query}"

    def exchange_code(self, code: str, redirect_uri: str) -> str:
        data = {"client_id": self.client_id, "client_secret": self.client_secret, "code": code,
                "redirect_uri": redirect_uri}
        try:
            response = httpx.post(f"{self.web_url.rstrip('/')}/login/oauth/access_token", data=data,
                                  headers={"Accept": "application/json"}, timeout=TIMEOUT_S)
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise OAuthError(f"GitHub did not answer the sign-in ({type(exc).__name__})") from None
        token = body.get("access_token") if isinstance(body, dict) else None
        if response.status_code != 200 or not isinstance(token, str) or not token:
            reason = body.get("error_description") or body.get("error") if isinstance(body, dict) else None
            raise OAuthError(f"GitHub refused the sign-in: {reason or response.status_code}")
        return token

    def user_login(self, token: str) -> str:
        try:
            response = httpx.get(f"{self.api_url.rstrip('/')}/user", timeout=TIMEOUT_S,
                                 headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"})
            login = response.json().get("login") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            raise OAuthError(f"GitHub did not say who signed in ({type(exc).__name__})") from None
        if not isinstance(login, str) or not login:
            raise OAuthError(f"GitHub did not say who signed in (HTTP {response.status_code})")
        return login
