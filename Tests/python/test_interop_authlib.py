"""Interop: an independent OAuth/OIDC client library (authlib) against Signet.

authlib performs the authorization code flow for the demo confidential
client (`demo-backend`, private_key_jwt with ES256) and for the demo public
native client (`demo-app`), validates ID tokens with `authlib.jose`, calls
userinfo, refreshes and revokes. The hosted login page is driven with plain
`requests`, like a browser without JavaScript would.
"""

from __future__ import annotations

import secrets
import urllib.parse

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, JsonWebToken

from signet_helpers import (
    TIMEOUT,
    b64url,
    ShortLivedPrivateKeyJWT,
    assertion_params,
    authorize_url,
    client_assertion,
    describe,
    half_hash,
    make_pkce,
    oauth_error,
    open_login_page,
    parse_redirect,
)

BACKEND_REDIRECT = "dev.signet.demo:/callback"


# ------------------------------------------------------------------ helpers


class ResponseRecorder:
    """requests response hook: keeps every raw response an OAuth2Session saw."""

    def __init__(self):
        self.responses: list[requests.Response] = []

    def __call__(self, resp, *args, **kwargs):
        self.responses.append(resp)
        return resp

    @property
    def last(self) -> requests.Response:
        return self.responses[-1]


def backend_session(signet, redirect_uri=BACKEND_REDIRECT) -> tuple[OAuth2Session, ResponseRecorder]:
    client = OAuth2Session(
        client_id=signet.demo["backend_client_id"],
        client_secret=signet.backend_key,
        token_endpoint_auth_method="private_key_jwt",
        revocation_endpoint_auth_method="private_key_jwt",
        scope=signet.scope(),
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        default_timeout=TIMEOUT,
    )
    client.register_client_auth_method(
        ShortLivedPrivateKeyJWT(signet.metadata["token_endpoint"], kid=signet.backend_kid)
    )
    recorder = ResponseRecorder()
    client.hooks["response"].append(recorder)
    return client, recorder


def login_via_requests(signet, url: str, expected_redirect: str) -> tuple[str, dict]:
    """Drives the hosted login page; returns (Location, its query params)."""
    browser = requests.Session()
    page = open_login_page(browser, url)
    resp = page.submit(signet.demo["username"], signet.demo["password"])
    assert resp.status_code == 303, "login POST did not answer 303:\n" + describe(resp)
    location = resp.headers["Location"]
    base, params = parse_redirect(location)
    assert base == expected_redirect, f"redirected to {location!r}, expected {expected_redirect!r}"
    assert "error" not in params, f"authorization error in {location}"
    return location, params


def authlib_code_flow(signet, redirect_uri=BACKEND_REDIRECT):
    """Full authorization code flow driven by authlib. Returns a dict of facts."""
    client, recorder = backend_session(signet, redirect_uri)
    verifier = generate_token(64)
    nonce = generate_token(24)
    url, state = client.create_authorization_url(
        signet.metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce
    )
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert q["code_challenge_method"] == "S256" and q["code_challenge"] and q["nonce"] == nonce

    location, params = login_via_requests(signet, url, redirect_uri)
    assert params.get("state") == state
    assert params.get("iss") == signet.issuer, "RFC 9207 iss missing or wrong in " + location
    assert params.get("code")

    token = client.fetch_token(
        signet.metadata["token_endpoint"],
        authorization_response=location,
        state=state,
        code_verifier=verifier,
    )
    token_resp = recorder.last
    return dict(
        client=client,
        recorder=recorder,
        token=dict(token),
        token_resp=token_resp,
        nonce=nonce,
        state=state,
        code=params["code"],
        verifier=verifier,
    )


def validate_id_token(signet, id_token: str, *, client_id: str, nonce: str | None):
    jwt = JsonWebToken(["ES256"])
    keyset = JsonWebKey.import_key_set(signet.jwks)
    options = {
        "iss": {"essential": True, "value": signet.issuer},
        "aud": {"essential": True, "value": client_id},
        "sub": {"essential": True},
        "exp": {"essential": True},
        "iat": {"essential": True},
    }
    if nonce is not None:
        options["nonce"] = {"essential": True, "value": nonce}
    claims = jwt.decode(id_token, keyset, claims_options=options)
    claims.validate(leeway=5)
    assert claims.header["alg"] == "ES256"
    assert claims.header.get("kid"), "ID token header has no kid"
    aud = claims["aud"]
    if isinstance(aud, list) and len(aud) > 1:
        assert claims.get("azp") == client_id, "multi-audience ID token needs azp"
    return claims


def token_request(signet, data: dict, assertion: str | None = None) -> requests.Response:
    client_id = signet.demo["backend_client_id"]
    if assertion is None:
        assertion = client_assertion(
            client_id, signet.backend_key, signet.metadata["token_endpoint"], kid=signet.backend_kid
        )
    body = {"client_id": client_id, **data, **assertion_params(assertion)}
    return requests.post(signet.metadata["token_endpoint"], data=body, timeout=TIMEOUT, allow_redirects=False)


def fresh_code(signet, redirect_uri=BACKEND_REDIRECT) -> tuple[str, str]:
    """A new authorization code for demo-backend (PKCE made here). Returns (code, verifier)."""
    verifier, challenge = make_pkce()
    state = secrets.token_urlsafe(16)
    url = authorize_url(
        signet.metadata,
        signet.demo["backend_client_id"],
        redirect_uri,
        challenge,
        state=state,
        nonce=secrets.token_urlsafe(16),
        scope=signet.scope(),
    )
    _, params = login_via_requests(signet, url, redirect_uri)
    assert params.get("state") == state
    return params["code"], verifier


def code_grant(code, verifier, redirect_uri=BACKEND_REDIRECT) -> dict:
    return {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": redirect_uri,
    }


# -------------------------------------------------------------------- tests


def test_discovery_document(signet):
    md = signet.metadata
    issuer = signet.issuer
    assert md["issuer"] == issuer
    expected = {
        "authorization_endpoint": "/authorize",
        "token_endpoint": "/token",
        "userinfo_endpoint": "/userinfo",
        "jwks_uri": "/jwks",
        "revocation_endpoint": "/revoke",
        "end_session_endpoint": "/logout",
    }
    for key, path in expected.items():
        assert md.get(key) == issuer + path, f"{key}: {md.get(key)!r}"
    # OIDC Discovery 1.0 §3 REQUIRED members
    for key in ("response_types_supported", "subject_types_supported", "id_token_signing_alg_values_supported"):
        assert md.get(key), f"discovery lacks REQUIRED {key}"
    assert "code" in md["response_types_supported"]
    assert "ES256" in md["id_token_signing_alg_values_supported"]
    assert "S256" in md.get("code_challenge_methods_supported", []), "S256 not advertised"
    assert "plain" not in md.get("code_challenge_methods_supported", [])
    assert "private_key_jwt" in md.get("token_endpoint_auth_methods_supported", [])
    assert "openid" in md.get("scopes_supported", ["openid"])
    # JWKS: public EC keys only
    keys = signet.jwks.get("keys")
    assert keys, "JWKS has no keys"
    for k in keys:
        assert "d" not in k, "private key material in the JWKS!"
        assert k.get("kid")


def test_authlib_full_flow_private_key_jwt(signet):
    flow = authlib_code_flow(signet)
    client, recorder, token = flow["client"], flow["recorder"], flow["token"]
    token_resp = flow["token_resp"]
    client_id = signet.demo["backend_client_id"]

    # --- token response (RFC 6749 §5.1)
    assert token_resp.status_code == 200, describe(token_resp)
    assert "no-store" in token_resp.headers.get("Cache-Control", ""), describe(token_resp)
    assert token["token_type"].lower() == "bearer"
    assert token.get("access_token") and token.get("id_token")
    assert isinstance(token.get("expires_in"), int) and token["expires_in"] > 0
    assert token.get("refresh_token"), "no refresh_token issued: " + token_resp.text

    # --- ID token, validated by authlib.jose against the JWKS
    claims = validate_id_token(signet, token["id_token"], client_id=client_id, nonce=flow["nonce"])
    assert claims.get("at_hash"), "ID token has no at_hash"
    assert claims["at_hash"] == half_hash(token["access_token"]), "at_hash does not match the access token"
    assert claims["exp"] > claims["iat"]

    # --- userinfo (authlib puts the bearer token in the Authorization header)
    ui = client.get(signet.metadata["userinfo_endpoint"])
    assert ui.status_code == 200, describe(ui)
    assert ui.headers.get("Content-Type", "").startswith("application/json"), describe(ui)
    assert ui.json()["sub"] == claims["sub"]

    # userinfo without a token: RFC 6750 §3
    anon = requests.get(signet.metadata["userinfo_endpoint"], timeout=TIMEOUT)
    assert anon.status_code == 401, describe(anon)
    assert anon.headers.get("WWW-Authenticate", "").lower().startswith("bearer"), describe(anon)

    # --- refresh: the refresh token rotates
    old_refresh = token["refresh_token"]
    client.refresh_token(signet.metadata["token_endpoint"], refresh_token=old_refresh)
    refresh_resp = recorder.last
    assert refresh_resp.status_code == 200, describe(refresh_resp)
    refreshed = refresh_resp.json()
    assert refreshed.get("access_token")
    assert refreshed.get("refresh_token"), "refresh response has no new refresh_token"
    assert refreshed["refresh_token"] != old_refresh, "refresh token did not rotate"
    if refreshed.get("id_token"):
        # OIDC Core 12.2: iss/sub/aud as before, no nonce required
        again = validate_id_token(signet, refreshed["id_token"], client_id=client_id, nonce=None)
        assert again["sub"] == claims["sub"]

    # the new access token works
    ui2 = requests.get(
        signet.metadata["userinfo_endpoint"],
        headers={"Authorization": "Bearer " + refreshed["access_token"]},
        timeout=TIMEOUT,
    )
    assert ui2.status_code == 200, describe(ui2)

    # replaying the old refresh token is refused
    replay = token_request(signet, {"grant_type": "refresh_token", "refresh_token": old_refresh})
    assert replay.status_code == 400, describe(replay)
    assert oauth_error(replay) == "invalid_grant", describe(replay)

    # --- revoke (RFC 7009) via authlib, then the token is dead
    new_refresh = refreshed["refresh_token"]
    rv = client.revoke_token(
        signet.metadata["revocation_endpoint"], token=new_refresh, token_type_hint="refresh_token"
    )
    assert rv.status_code == 200, describe(rv)
    dead = token_request(signet, {"grant_type": "refresh_token", "refresh_token": new_refresh})
    assert dead.status_code == 400, describe(dead)
    assert oauth_error(dead) == "invalid_grant", describe(dead)


def test_revoked_refresh_token_cannot_refresh(signet):
    flow = authlib_code_flow(signet)
    client, token = flow["client"], flow["token"]
    rv = client.revoke_token(
        signet.metadata["revocation_endpoint"], token=token["refresh_token"], token_type_hint="refresh_token"
    )
    assert rv.status_code == 200, describe(rv)
    # RFC 7009 §2.2: revoking an already invalid token still answers 200
    rv2 = client.revoke_token(
        signet.metadata["revocation_endpoint"], token=token["refresh_token"], token_type_hint="refresh_token"
    )
    assert rv2.status_code == 200, describe(rv2)
    resp = token_request(signet, {"grant_type": "refresh_token", "refresh_token": token["refresh_token"]})
    assert resp.status_code == 400 and oauth_error(resp) == "invalid_grant", describe(resp)


def test_revoked_access_token_rejected_by_userinfo(signet):
    flow = authlib_code_flow(signet)
    client, token = flow["client"], flow["token"]
    ok = requests.get(
        signet.metadata["userinfo_endpoint"],
        headers={"Authorization": "Bearer " + token["access_token"]},
        timeout=TIMEOUT,
    )
    assert ok.status_code == 200, describe(ok)
    rv = client.revoke_token(
        signet.metadata["revocation_endpoint"], token=token["access_token"], token_type_hint="access_token"
    )
    assert rv.status_code == 200, describe(rv)
    after = requests.get(
        signet.metadata["userinfo_endpoint"],
        headers={"Authorization": "Bearer " + token["access_token"]},
        timeout=TIMEOUT,
    )
    assert after.status_code == 401, "revoked access token still accepted:\n" + describe(after)


def test_replayed_client_assertion_is_refused(signet):
    """RFC 7523 §3 item 7: a jti may be used once. Same assertion twice -> 401."""
    client_id = signet.demo["backend_client_id"]
    assertion = client_assertion(
        client_id,
        signet.backend_key,
        signet.metadata["token_endpoint"],
        kid=signet.backend_kid,
        jti=secrets.token_urlsafe(24),
    )
    code1, verifier1 = fresh_code(signet)
    first = token_request(signet, code_grant(code1, verifier1), assertion)
    assert first.status_code == 200, describe(first)

    code2, verifier2 = fresh_code(signet)
    second = token_request(signet, code_grant(code2, verifier2), assertion)
    assert second.status_code == 401, "replayed client assertion accepted:\n" + describe(second)
    assert oauth_error(second) == "invalid_client", describe(second)

    # the code itself was fine: a fresh assertion redeems it
    third = token_request(signet, code_grant(code2, verifier2))
    assert third.status_code == 200, describe(third)


def test_client_assertion_with_issuer_audience_is_accepted(signet):
    code, verifier = fresh_code(signet)
    assertion = client_assertion(
        signet.demo["backend_client_id"], signet.backend_key, signet.issuer, kid=signet.backend_kid
    )
    resp = token_request(signet, code_grant(code, verifier), assertion)
    assert resp.status_code == 200, describe(resp)


def test_long_lived_client_assertion_is_refused(signet):
    """Signet accepts assertions expiring at most 5 minutes ahead (authlib's default is 1 hour)."""
    code, verifier = fresh_code(signet)
    assertion = client_assertion(
        signet.demo["backend_client_id"],
        signet.backend_key,
        signet.metadata["token_endpoint"],
        kid=signet.backend_kid,
        lifetime=3600,
    )
    resp = token_request(signet, code_grant(code, verifier), assertion)
    assert resp.status_code == 401 and oauth_error(resp) == "invalid_client", describe(resp)


def test_authorization_code_is_single_use_and_pkce_bound(signet):
    code, verifier = fresh_code(signet)
    wrong = token_request(signet, code_grant(code, make_pkce()[0]))
    assert wrong.status_code == 400 and oauth_error(wrong) == "invalid_grant", describe(wrong)

    code, verifier = fresh_code(signet)
    ok = token_request(signet, code_grant(code, verifier))
    assert ok.status_code == 200, describe(ok)
    again = token_request(signet, code_grant(code, verifier))
    assert again.status_code == 400 and oauth_error(again) == "invalid_grant", describe(again)


@pytest.mark.parametrize(
    "pkce",
    [
        pytest.param({}, id="no-code-challenge"),
        pytest.param({"code_challenge": "x" * 43, "code_challenge_method": "plain"}, id="plain"),
    ],
)
def test_authorize_requires_pkce_s256(signet, pkce):
    params = {
        "response_type": "code",
        "client_id": signet.demo["backend_client_id"],
        "redirect_uri": BACKEND_REDIRECT,
        "scope": "openid",
        "state": "s-" + secrets.token_urlsafe(8),
        **pkce,
    }
    url = signet.metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode(params)
    resp = requests.get(url, allow_redirects=False, timeout=TIMEOUT)
    if resp.status_code in (302, 303):
        base, q = parse_redirect(resp.headers["Location"])
        assert base == BACKEND_REDIRECT and q.get("error") == "invalid_request", describe(resp)
        assert q.get("state") == params["state"]
    else:
        assert 400 <= resp.status_code < 500, describe(resp)
        assert 'id="login-form"' not in resp.text, "login page shown without PKCE S256"


def test_native_public_client_flow(signet):
    """demo-app: a public native client (no client authentication), PKCE only."""
    demo = signet.demo
    client = OAuth2Session(
        client_id=demo["native_client_id"],
        token_endpoint_auth_method="none",
        scope=signet.scope(),
        redirect_uri=demo["native_redirect_uri"],
        code_challenge_method="S256",
        default_timeout=TIMEOUT,
    )
    verifier = generate_token(64)
    nonce = generate_token(24)
    url, state = client.create_authorization_url(
        signet.metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce
    )
    location, params = login_via_requests(signet, url, demo["native_redirect_uri"])
    assert params.get("state") == state and params.get("iss") == signet.issuer
    token = client.fetch_token(
        signet.metadata["token_endpoint"], authorization_response=location, state=state, code_verifier=verifier
    )
    claims = validate_id_token(signet, token["id_token"], client_id=demo["native_client_id"], nonce=nonce)
    assert claims["at_hash"] == half_hash(token["access_token"])


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://attacker.example/callback",
        "http://127.0.0.1:4444/other-path",  # loopback: any port, but the path must match
        "http://127.0.0.1.attacker.example/callback",
        "dev.signet.demo:/callback/../evil",
        "dev.signet.demo:/callback?x=1",
    ],
)
def test_authorize_never_redirects_to_unregistered_uri(signet, redirect_uri):
    """RFC 6749 §4.1.2.1 / §10.15: an unregistered redirect_uri gets an error page, no redirect."""
    verifier, challenge = make_pkce()
    url = authorize_url(
        signet.metadata, signet.demo["backend_client_id"], redirect_uri, challenge, state="s", scope="openid"
    )
    resp = requests.get(url, allow_redirects=False, timeout=TIMEOUT)
    assert 400 <= resp.status_code < 500, describe(resp)
    assert "Location" not in resp.headers, describe(resp)
    assert 'id="login-form"' not in resp.text


def _compact_jwt(header: dict, payload: dict, key=None) -> str:
    """A JWS compact serialisation made with joserfc (authlib's JOSE layer),
    or an unsigned `alg: none` one when key is None."""
    import json

    from joserfc import jws

    if key is None:
        enc = lambda d: b64url(json.dumps(d).encode())  # noqa: E731
        return enc(header) + "." + enc(payload) + "."
    return jws.serialize_compact(header, json.dumps(payload), key)


@pytest.mark.parametrize(
    "case", ["other-key", "wrong-audience", "iss-not-client", "sub-not-client", "expired", "no-jti", "alg-none"]
)
def test_bad_client_assertions_are_refused(signet, case):
    """RFC 7523 §3: each of these assertions must fail client authentication (401 invalid_client)."""
    import time

    from joserfc.jwk import ECKey

    client_id = signet.demo["backend_client_id"]
    now = int(time.time())
    header = {"alg": "ES256", "kid": signet.backend_kid}
    payload = {
        "iss": client_id,
        "sub": client_id,
        "aud": signet.metadata["token_endpoint"],
        "iat": now,
        "exp": now + 60,
        "jti": secrets.token_urlsafe(16),
    }
    key = signet.backend_key
    if case == "other-key":
        key = ECKey.generate_key("P-256")
    elif case == "wrong-audience":
        payload["aud"] = signet.issuer + "/somewhere-else"
    elif case == "iss-not-client":
        payload["iss"] = "someone-else"
    elif case == "sub-not-client":
        payload["sub"] = "someone-else"
    elif case == "expired":
        payload["iat"], payload["exp"] = now - 600, now - 300
    elif case == "no-jti":
        del payload["jti"]
    elif case == "alg-none":
        header, key = {"alg": "none", "typ": "JWT"}, None
    assertion = _compact_jwt(header, payload, key)
    code, verifier = fresh_code(signet)
    resp = token_request(signet, code_grant(code, verifier), assertion)
    assert resp.status_code == 401 and oauth_error(resp) == "invalid_client", describe(resp)

    # the same code is still good with a proper assertion
    ok = token_request(signet, code_grant(code, verifier))
    assert ok.status_code == 200, describe(ok)


def test_code_is_bound_to_redirect_uri_and_client(signet):
    # redirect_uri in the token request differs from the authorization request
    code, verifier = fresh_code(signet)
    other = {**code_grant(code, verifier), "redirect_uri": "http://127.0.0.1/callback"}
    resp = token_request(signet, other)
    assert resp.status_code == 400 and oauth_error(resp) == "invalid_grant", describe(resp)

    # another (public) client tries to redeem demo-backend's code
    code, verifier = fresh_code(signet)
    resp = requests.post(
        signet.metadata["token_endpoint"],
        data={**code_grant(code, verifier), "client_id": signet.demo["native_client_id"]},
        timeout=TIMEOUT,
    )
    assert resp.status_code in (400, 401), describe(resp)
    assert oauth_error(resp) in ("invalid_grant", "invalid_client"), describe(resp)
