"""Interop: PAR + JAR + DPoP + private_key_jwt built in Python, independently of Signet's kit.

The request object, the client assertions and the DPoP proofs are made with joserfc (the
JOSE library behind authlib), the login page is driven with plain `requests`, and the
DPoP-bound access token is then used at userinfo. This is the FAPI 2.0 shape Singpass asks
of its relying parties.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
import urllib.parse

import requests
from joserfc import jwt
from joserfc.jwk import ECKey

from signet_helpers import (
    TIMEOUT,
    assertion_params,
    client_assertion,
    describe,
    make_pkce,
    oauth_error,
    open_login_page,
    parse_redirect,
)

REDIRECT = "dev.signet.demo:/callback"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def dpop_proof(key: ECKey, method: str, url: str, access_token: str | None = None) -> str:
    """An RFC 9449 proof: typ dpop+jwt, the public jwk, htm, htu, iat, jti (and ath)."""
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.as_dict(private=False)}
    claims = {"htm": method, "htu": url, "iat": int(time.time()), "jti": secrets.token_urlsafe(16)}
    if access_token is not None:
        claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
    return jwt.encode(header, claims, key)


def request_object(signet, challenge: str, state: str, nonce: str) -> str:
    """An RFC 9101 request object signed with the demo backend's key."""
    now = int(time.time())
    claims = {
        "iss": signet.demo["backend_client_id"], "aud": signet.issuer, "iat": now, "nbf": now, "exp": now + 300,
        "jti": secrets.token_urlsafe(16), "response_type": "code", "client_id": signet.demo["backend_client_id"],
        "redirect_uri": REDIRECT, "scope": "openid profile", "state": state, "nonce": nonce,
        "code_challenge": challenge, "code_challenge_method": "S256",
    }
    header = {"alg": "ES256", "typ": "oauth-authz-req+jwt", "kid": signet.backend_kid}
    return jwt.encode(header, claims, signet.backend_key)


def assertion(signet) -> dict:
    return assertion_params(client_assertion(signet.demo["backend_client_id"], signet.backend_key, signet.issuer, kid=signet.backend_kid))


def test_par_jar_dpop_private_key_jwt_from_python(signet):
    metadata = signet.metadata
    assert metadata["pushed_authorization_request_endpoint"].endswith("/par")
    assert metadata["request_parameter_supported"] is True
    assert "ES256" in metadata["dpop_signing_alg_values_supported"]
    par, token_endpoint, userinfo = metadata["pushed_authorization_request_endpoint"], metadata["token_endpoint"], metadata["userinfo_endpoint"]

    dpop_key = ECKey.generate_key("P-256")
    verifier, challenge = make_pkce()
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)

    # 1. Push the signed request, with a DPoP proof that binds the code to our key.
    pushed = requests.post(
        par, data={"request": request_object(signet, challenge, state, nonce), **assertion(signet)},
        headers={"DPoP": dpop_proof(dpop_key, "POST", par)}, timeout=TIMEOUT)
    assert pushed.status_code == 201, describe(pushed)
    request_uri = pushed.json()["request_uri"]
    assert request_uri.startswith("urn:ietf:params:oauth:request_uri:")
    assert 0 < pushed.json()["expires_in"] <= 60

    # 2. The app carries only client_id and request_uri.
    url = metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode({"client_id": signet.demo["backend_client_id"], "request_uri": request_uri})
    page = open_login_page(requests.Session(), url)
    resp = page.submit(signet.demo["username"], signet.demo["password"])
    assert resp.status_code == 303, describe(resp)
    base, params = parse_redirect(resp.headers["Location"])
    assert base == REDIRECT and params["state"] == state and params["iss"] == signet.issuer

    form = {"grant_type": "authorization_code", "code": params["code"], "redirect_uri": REDIRECT, "code_verifier": verifier}
    # 3. The code is bound to the PAR proof's key: another key, or none, is refused (and does not spend it).
    other = requests.post(token_endpoint, data={**form, **assertion(signet)}, headers={"DPoP": dpop_proof(ECKey.generate_key("P-256"), "POST", token_endpoint)}, timeout=TIMEOUT)
    assert other.status_code == 400 and oauth_error(other) == "invalid_grant", describe(other)
    bare = requests.post(token_endpoint, data={**form, **assertion(signet)}, timeout=TIMEOUT)
    assert oauth_error(bare) == "invalid_grant", describe(bare)
    tokens = requests.post(token_endpoint, data={**form, **assertion(signet)}, headers={"DPoP": dpop_proof(dpop_key, "POST", token_endpoint)}, timeout=TIMEOUT)
    assert tokens.status_code == 200, describe(tokens)
    body = tokens.json()
    assert body["token_type"] == "DPoP"
    access_token = body["access_token"]
    payload = access_token.split(".")[1]
    decoded = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert decoded["cnf"]["jkt"] == dpop_key.thumbprint()

    # 4. userinfo: the DPoP scheme with a proof of the same key; Bearer is refused.
    info = requests.get(userinfo, headers={"Authorization": f"DPoP {access_token}", "DPoP": dpop_proof(dpop_key, "GET", userinfo, access_token)}, timeout=TIMEOUT)
    assert info.status_code == 200, describe(info)
    assert info.json()["sub"] == decoded["sub"]
    bearer = requests.get(userinfo, headers={"Authorization": f"Bearer {access_token}"}, timeout=TIMEOUT)
    assert bearer.status_code == 401
    assert bearer.headers["WWW-Authenticate"].startswith("DPoP ")


def test_parameters_beside_a_request_uri_must_repeat_pushed_ones_and_a_request_uri_is_used_once(signet):
    metadata = signet.metadata
    verifier, challenge = make_pkce()
    pushed = requests.post(
        metadata["pushed_authorization_request_endpoint"],
        data={"request": request_object(signet, challenge, "s", "n"), **assertion(signet)}, timeout=TIMEOUT)
    assert pushed.status_code == 201, describe(pushed)
    query = {"client_id": signet.demo["backend_client_id"], "request_uri": pushed.json()["request_uri"]}
    for differing in ({"state": "mine"}, {"scope": "openid"}, {"prompt": "login"}):
        extra = requests.get(metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode({**query, **differing}), allow_redirects=False, timeout=TIMEOUT)
        assert extra.status_code == 400 and "Location" not in extra.headers, describe(extra)
        assert "invalid_request" in extra.text and "invalid_request_uri" not in extra.text, describe(extra)
    # A refused use does not consume it; the first real use does (OIDC Core §6.2: response_type,
    # scope and redirect_uri repeated as pushed), and only once.
    oidc = {**query, "response_type": "code", "scope": "openid profile", "redirect_uri": REDIRECT}
    first = requests.get(metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode(oidc), allow_redirects=False, timeout=TIMEOUT)
    assert first.status_code == 200, describe(first)
    again = requests.get(metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode(query), allow_redirects=False, timeout=TIMEOUT)
    assert again.status_code == 400 and "invalid_request_uri" in again.text


def test_fapi2_client_from_python(signet):
    """The demo's FAPI 2.0 client (fapi2 flag): the same flow, plus the profile's own rules."""
    metadata = signet.metadata
    bank = signet.demo["fapi_client_id"]
    redirect = signet.demo["fapi_redirect_uri"]
    par, token_endpoint = metadata["pushed_authorization_request_endpoint"], metadata["token_endpoint"]

    def bank_assertion(audience=None) -> dict:
        return assertion_params(client_assertion(bank, signet.backend_key, audience or signet.issuer, kid=signet.backend_kid))

    verifier, challenge = make_pkce()
    request = {"response_type": "code", "client_id": bank, "redirect_uri": redirect, "scope": "openid offline_access",
               "state": secrets.token_urlsafe(8), "code_challenge": challenge, "code_challenge_method": "S256"}
    # §5.3.2.2: not pushed → refused back to the client; §5.3.2.1: an assertion naming the token endpoint → invalid_client.
    plain = requests.get(metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode(request), allow_redirects=False, timeout=TIMEOUT)
    assert plain.status_code == 302 and parse_redirect(plain.headers["Location"])[1]["error"] == "invalid_request", describe(plain)
    wrong_aud = requests.post(par, data={**request, **bank_assertion(token_endpoint)}, timeout=TIMEOUT)
    assert wrong_aud.status_code == 401 and oauth_error(wrong_aud) == "invalid_client", describe(wrong_aud)

    pushed = requests.post(par, data={**request, **bank_assertion()}, timeout=TIMEOUT)
    assert pushed.status_code == 201, describe(pushed)
    url = metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode({"client_id": bank, "request_uri": pushed.json()["request_uri"]})
    resp = open_login_page(requests.Session(), url).submit(signet.demo["username"], signet.demo["password"])
    assert resp.status_code == 303, describe(resp)
    code = parse_redirect(resp.headers["Location"])[1]["code"]

    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "code_verifier": verifier}
    # §5.3.2.1: only sender-constrained tokens — no proof, no token (and the code is not spent).
    bare = requests.post(token_endpoint, data={**form, **bank_assertion()}, timeout=TIMEOUT)
    assert bare.status_code == 400 and oauth_error(bare) == "invalid_dpop_proof", describe(bare)
    dpop_key = ECKey.generate_key("P-256")
    tokens = requests.post(token_endpoint, data={**form, **bank_assertion()}, headers={"DPoP": dpop_proof(dpop_key, "POST", token_endpoint)}, timeout=TIMEOUT)
    assert tokens.status_code == 200 and tokens.json()["token_type"] == "DPoP", describe(tokens)
    refresh_token = tokens.json()["refresh_token"]

    # §5.3.2.1: no rotation — the same refresh token works twice and no new one is returned.
    for _ in range(2):
        refreshed = requests.post(
            token_endpoint, data={"grant_type": "refresh_token", "refresh_token": refresh_token, **bank_assertion()},
            headers={"DPoP": dpop_proof(dpop_key, "POST", token_endpoint)}, timeout=TIMEOUT)
        assert refreshed.status_code == 200, describe(refreshed)
        assert "refresh_token" not in refreshed.json() and refreshed.json()["token_type"] == "DPoP"
