"""The native login API's OpenAPI document is valid OpenAPI 3, and the server behaves as it says.

An independent check: the document is validated with openapi-spec-validator, and a
stepwise login is driven with plain HTTP using only what the document names.
"""
import base64
import hashlib
import json
import pathlib
import secrets

import requests
import yaml
from openapi_spec_validator import validate

TIMEOUT = 10


def _document(signet):
    response = requests.get(signet.issuer + "/login/native/openapi.yaml", timeout=TIMEOUT)
    assert response.status_code == 200
    return yaml.safe_load(response.text)


def test_native_login_document_is_valid_openapi(signet):
    document = _document(signet)
    validate(document)
    paths = document["paths"]
    for step in ["start", "scenario", "username_password", "password", "sms_code", "sms_code/resend"]:
        assert f"/login/native/{step}" in paths


def test_native_login_follows_the_document(signet):
    document = _document(signet)
    demo = signet.demo
    verifier = secrets.token_urlsafe(32)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    start = {
        "client_id": demo["native_client_id"], "redirect_uri": demo["native_redirect_uri"], "response_type": "code",
        "scope": "openid", "state": "s-1", "nonce": "n-1", "code_challenge": challenge, "code_challenge_method": "S256",
    }
    for field in document["components"]["schemas"]["StartRequest"]["required"]:
        assert field in start
    first = requests.post(signet.issuer + "/login/native/start", json=start, timeout=TIMEOUT)
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["next_step"] in document["components"]["schemas"]["StepResponse"]["properties"]["next_step"]["enum"]
    session = body["login_session"]
    step = requests.post(signet.issuer + "/login/native/scenario", json={"login_session": session, "client_id": demo["native_client_id"], "scenario": "s_mobile_authn_un_pwd_sms"}, timeout=TIMEOUT)
    assert step.json()["next_step"] == "username_password"
    step = requests.post(signet.issuer + "/login/native/username_password", json={"login_session": session, "client_id": demo["native_client_id"], "username": demo["username"], "password": demo["password"]}, timeout=TIMEOUT)
    assert step.status_code == 200, step.text
    assert step.json()["next_step"] == "sms_code"
    outbox = pathlib.Path(signet.data_dir) / "outbox.jsonl"
    code = json.loads(outbox.read_text().strip().splitlines()[-1])["body"].split("#")[-1]
    malformed = requests.post(signet.issuer + "/login/native/sms_code", json={"login_session": session, "client_id": demo["native_client_id"], "code": "x"}, timeout=TIMEOUT)
    assert malformed.status_code == 400 and malformed.json()["error"] == "invalid_request"
    wrong_code = "111111" if code == "000000" else "000000"
    wrong = requests.post(signet.issuer + "/login/native/sms_code", json={"login_session": session, "client_id": demo["native_client_id"], "code": wrong_code}, timeout=TIMEOUT)
    assert wrong.status_code == 401
    assert wrong.json()["error"] in document["components"]["schemas"]["Error"]["properties"]["error"]["enum"]
    assert wrong.json()["attempts_left"] == 2
    done = requests.post(signet.issuer + "/login/native/sms_code", json={"login_session": session, "client_id": demo["native_client_id"], "code": code}, timeout=TIMEOUT)
    assert done.status_code == 200, done.text
    finished = done.json()
    assert finished["next_step"] == "finished" and finished["state"] == "s-1" and finished["iss"] == signet.issuer
    tokens = requests.post(signet.metadata["token_endpoint"], data={
        "grant_type": "authorization_code", "code": finished["authorization_code"], "redirect_uri": demo["native_redirect_uri"],
        "code_verifier": verifier, "client_id": demo["native_client_id"]}, timeout=TIMEOUT)
    assert tokens.status_code == 200, tokens.text
    assert "id_token" in tokens.json()
