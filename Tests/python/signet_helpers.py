"""Small helpers shared by the Python interop and browser tests.

Everything here is written against the public protocol (OpenID Connect,
RFC 6749/7636/7523/9207) and the hosted login page contract, never against
Signet's Swift internals.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
import urllib.parse
from html.parser import HTMLParser

import requests
from authlib.oauth2.rfc7523 import PrivateKeyJWT, private_key_jwt_sign
from joserfc.jwk import ECKey

TIMEOUT = 15  # seconds, for every HTTP request the tests make
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# Signet accepts client assertions that expire at most 5 minutes ahead.
ASSERTION_LIFETIME = 120


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def make_pkce() -> tuple[str, str]:
    """Returns (code_verifier, S256 code_challenge) per RFC 7636."""
    verifier = b64url(secrets.token_bytes(48))  # 64 chars, within 43..128
    challenge = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
    return verifier, challenge


def half_hash(value: str, alg: str = "ES256") -> str:
    """OIDC Core 3.1.3.6 at_hash / c_hash: left half of the hash, base64url."""
    bits = int(alg[2:])
    digest = {256: hashlib.sha256, 384: hashlib.sha384, 512: hashlib.sha512}[bits](
        value.encode("ascii")
    ).digest()
    return b64url(digest[: len(digest) // 2])


def load_backend_key(demo: dict) -> tuple[dict, ECKey]:
    import json

    with open(demo["backend_private_jwk_path"], encoding="utf-8") as f:
        jwk = json.load(f)
    return jwk, ECKey.import_key(jwk)


class ShortLivedPrivateKeyJWT(PrivateKeyJWT):
    """authlib's PrivateKeyJWT, with a short assertion lifetime.

    authlib's own `PrivateKeyJWT.sign` always signs with its default one-hour
    lifetime (`expires_in=3600`), which Signet (like many providers) refuses:
    it accepts at most 5 minutes. Everything else - claims (iss = sub =
    client_id, aud = token endpoint, a fresh random jti, iat, exp), the
    serialisation and the signature - is authlib's own code.
    """

    name = "private_key_jwt"

    def __init__(self, token_endpoint, *, kid=None, lifetime=ASSERTION_LIFETIME):
        super().__init__(token_endpoint, alg="ES256")
        self.kid = kid
        self.lifetime = lifetime

    def sign(self, auth, token_endpoint):
        return private_key_jwt_sign(
            auth.client_secret,
            client_id=auth.client_id,
            token_endpoint=token_endpoint,
            alg=self.alg,
            claims={},  # a new dict each call: authlib stores the jti in it
            header={"kid": self.kid} if self.kid else {},
            expires_in=self.lifetime,
        )


def client_assertion(
    client_id: str,
    key: ECKey,
    audience: str,
    *,
    kid: str | None = None,
    jti: str | None = None,
    lifetime: int = ASSERTION_LIFETIME,
) -> str:
    """An RFC 7523 client assertion made by authlib, for hand-made requests."""
    claims = {"jti": jti} if jti else {}
    return private_key_jwt_sign(
        key,
        client_id=client_id,
        token_endpoint=audience,
        alg="ES256",
        claims=claims,
        header={"kid": kid} if kid else {},
        expires_in=lifetime,
    )


def assertion_params(assertion: str) -> dict:
    return {"client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion}


def oauth_error(resp: requests.Response) -> str | None:
    try:
        return resp.json().get("error")
    except ValueError:
        return None


def describe(resp: requests.Response) -> str:
    """One readable line (plus body) for assertion messages."""
    body = resp.text
    if len(body) > 800:
        body = body[:800] + "..."
    return f"{resp.request.method} {resp.request.url} -> {resp.status_code} {dict(resp.headers)}\n{body}"


# ---------------------------------------------------------------- login page


VOID_ELEMENTS = {
    "area", "base", "br", "col", "embed", "hr", "img", "input",
    "link", "meta", "source", "track", "wbr",
}


class LoginFormParser(HTMLParser):
    """Finds <form id="login-form"> and collects its inputs."""

    def __init__(self):
        super().__init__()
        self.form_attrs: dict | None = None
        self.inputs: dict[str, dict] = {}
        self._in_form = False
        self.alerts: list[str] = []
        self._alert_depth = 0
        self._alert_text: list[str] = []
        self.has_submit_button = False
        self.meta_viewport: str | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "meta" and a.get("name", "").lower() == "viewport":
            self.meta_viewport = a.get("content", "")
        if tag == "form" and a.get("id") == "login-form":
            self.form_attrs = a
            self._in_form = True
        elif self._in_form and tag == "input" and a.get("name"):
            self.inputs[a["name"]] = a
        elif self._in_form and tag == "button" and a.get("type", "submit") == "submit":
            self.has_submit_button = True
        if tag in VOID_ELEMENTS:
            return
        if self._alert_depth:
            self._alert_depth += 1
        elif a.get("role") == "alert":
            self._alert_depth = 1
            self._alert_text = []

    def handle_endtag(self, tag):
        if tag == "form" and self._in_form:
            self._in_form = False
        if tag in VOID_ELEMENTS:
            return
        if self._alert_depth:
            self._alert_depth -= 1
            if self._alert_depth == 0:
                self.alerts.append(" ".join("".join(self._alert_text).split()))

    def handle_startendtag(self, tag, attrs):
        # <input ... /> and the like: no content, no end tag
        self.handle_starttag(tag, attrs)
        if tag not in VOID_ELEMENTS:
            self.handle_endtag(tag)

    def handle_data(self, data):
        if self._alert_depth:
            self._alert_text.append(data)


def parse_login_page(html: str) -> LoginFormParser:
    p = LoginFormParser()
    p.feed(html)
    p.close()
    return p


def authorize_url(
    metadata: dict,
    client_id: str,
    redirect_uri: str,
    challenge: str,
    *,
    state: str,
    nonce: str | None = None,
    scope: str = "openid",
    **extra,
) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if nonce:
        params["nonce"] = nonce
    params.update(extra)
    return metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode(params)


class LoginPage:
    """The login page as fetched by a `requests.Session` acting as a browser."""

    def __init__(self, session: requests.Session, response: requests.Response):
        self.session = session
        self.response = response
        self.parsed = parse_login_page(response.text)
        assert self.parsed.form_attrs is not None, (
            "no <form id=\"login-form\"> on the login page:\n" + describe(response)
        )

    @property
    def action_url(self) -> str:
        return urllib.parse.urljoin(self.response.url, self.parsed.form_attrs.get("action", ""))

    def hidden_fields(self) -> dict[str, str]:
        return {
            name: a.get("value", "")
            for name, a in self.parsed.inputs.items()
            if a.get("type", "").lower() == "hidden"
        }

    def submit(self, username: str, password: str, *, drop=(), override=None, cookies=True):
        data = self.hidden_fields()
        data["username"] = username
        data["password"] = password
        for name in drop:
            data.pop(name, None)
        data.update(override or {})
        kwargs = dict(data=data, allow_redirects=False, timeout=TIMEOUT)
        if cookies:
            return self.session.post(self.action_url, **kwargs)
        # same request, but without the browser's cookies
        return requests.post(self.action_url, **kwargs)


def open_login_page(session: requests.Session, url: str) -> LoginPage:
    resp = session.get(url, timeout=TIMEOUT)
    assert resp.status_code == 200, "GET authorize did not show the login page:\n" + describe(resp)
    return LoginPage(session, resp)


def parse_redirect(location: str) -> tuple[str, dict[str, str]]:
    """Splits a redirect Location into (uri without query, single-valued params)."""
    parts = urllib.parse.urlsplit(location)
    params = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    for k, v in params.items():
        assert len(v) == 1, f"parameter {k} repeated in {location}"
    base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return base, {k: v[0] for k, v in params.items()}


def now() -> int:
    return int(time.time())
