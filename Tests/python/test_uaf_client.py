"""An independent FIDO UAF 1.1 client against `signet serve --dev-tls`.

Everything here is written from the FIDO UAF 1.1 specifications (Protocol,
Authenticator Commands, Registry of Predefined Values, AppID and Facet) and
Signet's public HTTP contract, never from Signet's Swift sources: it plays a
PIN authenticator (AAID F1D0#1001) on an activated device, registers it and
logs in with it.

This file starts its own server (with --dev-tls) on a free loopback port, so
it needs no SIGNET_TEST_* variables besides, optionally, SIGNET_TEST_BINARY:

    python3 -m pytest -q Tests/python/test_uaf_client.py
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pathlib
import secrets
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import NameOID

REPO = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_BINARY = REPO / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "signet"
TIMEOUT = 15  # seconds, for every HTTP request
START_TIMEOUT = 60  # seconds for the server to answer discovery

# ---- FIDO UAF Registry of Predefined Values v1.1 and Authenticator Commands
# v1.1 §3.1 ("Tags"): the TLV tags of the UAFV1TLV assertion scheme; then the
# Registry's algorithm and key encoding values
TAG_UAFV1_REG_ASSERTION = 0x3E01
TAG_UAFV1_AUTH_ASSERTION = 0x3E02
TAG_UAFV1_KRD = 0x3E03
TAG_UAFV1_SIGNED_DATA = 0x3E04
TAG_SIGNATURE = 0x2E06
TAG_ATTESTATION_BASIC_SURROGATE = 0x3E08
TAG_KEYID = 0x2E09
TAG_FINAL_CHALLENGE_HASH = 0x2E0A
TAG_AAID = 0x2E0B
TAG_PUB_KEY = 0x2E0C
TAG_COUNTERS = 0x2E0D
TAG_ASSERTION_INFO = 0x2E0E
TAG_AUTHENTICATOR_NONCE = 0x2E0F
TAG_TRANSACTION_CONTENT_HASH = 0x2E10
TAG_EXTENSION = 0x3E11  # critical extension
TAG_EXTENSION_ID = 0x2E13
TAG_EXTENSION_DATA = 0x2E14

ALG_SIGN_SECP256R1_ECDSA_SHA256_DER = 0x0002
ALG_KEY_ECC_X962_DER = 0x0101

AAID = "F1D0#1001"  # Signet's iOS PIN authenticator
AUTHENTICATOR_VERSION = 1
AUTHENTICATION_MODE_USER_VERIFIED = 0x01  # no transaction confirmation

# Signet's PIN extension (not part of FIDO; described in the test brief)
PIN_KEY_EXTENSION = "signet-pin-key"
PIN_PROOF_EXTENSION = "signet-pin-proof"
PIN_PROOF_CONTEXT = b"signet-pin-proof-v1"
PIN_ITERATIONS = 1000  # the real client uses 210000; the server never sees it
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551

PIN = "147258"
WRONG_PIN = "000000"


# ---- encodings ---------------------------------------------------------------


def b64url(data: bytes) -> str:
    """base64url without padding, as the UAF Protocol v1.1 encodes all binary values."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def tlv(tag: int, value: bytes) -> bytes:
    """One TLV item: tag UINT16 LE, length UINT16 LE, value (Authenticator Commands §3.1)."""
    assert len(value) <= 0xFFFF
    return struct.pack("<HH", tag, len(value)) + value


def parse_tlv(data: bytes) -> list[tuple[int, bytes]]:
    """The top-level items of a TLV byte string (Authenticator Commands §3.1)."""
    items, offset = [], 0
    while offset < len(data):
        tag, length = struct.unpack_from("<HH", data, offset)
        offset += 4
        assert offset + length <= len(data), "TLV item runs past the end"
        items.append((tag, data[offset : offset + length]))
        offset += length
    return items


def jwt_payload(token: str) -> dict:
    """The claims of a JWS compact serialisation (signature not checked)."""
    return json.loads(b64url_decode(token.split(".")[1]))


def pkce() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge) per RFC 7636 §4.1-4.2."""
    verifier = b64url(secrets.token_bytes(32))
    return verifier, b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def describe(response: requests.Response) -> str:
    return f"{response.request.method} {response.url} -> {response.status_code}: {response.text[:800]}"


# ---- the PIN authenticator -----------------------------------------------------


def pin_private_key(pin: str, salt: bytes) -> ec.EllipticCurvePrivateKey | None:
    """Signet's PIN key: PBKDF2-HMAC-SHA256(PIN, salt) as a P-256 scalar, or None if out of range."""
    seed = hashlib.pbkdf2_hmac("sha256", pin.encode("utf-8"), salt, PIN_ITERATIONS, dklen=32)
    scalar = int.from_bytes(seed, "big")
    if not 1 <= scalar < P256_ORDER:
        return None
    return ec.derive_private_key(scalar, ec.SECP256R1())


def sign(key: ec.EllipticCurvePrivateKey, data: bytes) -> bytes:
    """ALG_SIGN_SECP256R1_ECDSA_SHA256_DER (Registry, "Authentication Algorithms"): DER ECDSA, SHA-256."""
    return key.sign(data, ec.ECDSA(hashes.SHA256()))


def extension(ext_id: str, data: bytes) -> bytes:
    """A critical extension TAG_EXTENSION{TAG_EXTENSION_ID, TAG_EXTENSION_DATA} (Authenticator Commands, "Tags")."""
    return tlv(TAG_EXTENSION, tlv(TAG_EXTENSION_ID, ext_id.encode("ascii")) + tlv(TAG_EXTENSION_DATA, data))


def final_challenge(app_id: str, challenge: str, facet_id: str) -> tuple[str, bytes]:
    """fcParams = base64url(FinalChallengeParams JSON) and its SHA-256, the final challenge hash.

    UAF Protocol v1.1, "FinalChallengeParams Dictionary"; the ASM hashes the
    fcParams string itself (UAF ASM API v1.1, Register/Sign request processing).
    """
    params = {"appID": app_id, "challenge": challenge, "facetID": facet_id, "channelBinding": {}}
    fc_params = b64url(json.dumps(params, separators=(",", ":")).encode("utf-8"))
    return fc_params, hashlib.sha256(fc_params.encode("ascii")).digest()


@dataclass
class PinAuthenticator:
    """A software UAF authenticator with first-party PIN verification (surrogate attestation)."""

    uauth_key: ec.EllipticCurvePrivateKey
    key_id: bytes
    pin_salt: bytes
    sign_counter: int = 0

    @classmethod
    def new(cls, pin: str) -> "PinAuthenticator":
        while True:  # a salt whose PBKDF2 output is a valid P-256 scalar
            salt = secrets.token_bytes(32)
            if pin_private_key(pin, salt) is not None:
                break
        return cls(uauth_key=ec.generate_private_key(ec.SECP256R1()), key_id=secrets.token_bytes(32), pin_salt=salt)

    def pin_key(self, pin: str) -> ec.EllipticCurvePrivateKey:
        key = pin_private_key(pin, self.pin_salt)
        assert key is not None, "this PIN maps to no P-256 scalar under the salt"
        return key

    def register(self, final_challenge_hash: bytes, pin: str) -> bytes:
        """TAG_UAFV1_REG_ASSERTION with surrogate basic attestation (Authenticator Commands, Register Command)."""
        assertion_info = struct.pack(
            "<HBHH",
            AUTHENTICATOR_VERSION,
            AUTHENTICATION_MODE_USER_VERIFIED,
            ALG_SIGN_SECP256R1_ECDSA_SHA256_DER,
            ALG_KEY_ECC_X962_DER,
        )
        spki = self.uauth_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        pin_public = self.pin_key(pin).public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        krd = tlv(
            TAG_UAFV1_KRD,
            tlv(TAG_AAID, AAID.encode("ascii"))
            + tlv(TAG_ASSERTION_INFO, assertion_info)
            + tlv(TAG_FINAL_CHALLENGE_HASH, final_challenge_hash)
            + tlv(TAG_KEYID, self.key_id)
            + tlv(TAG_COUNTERS, struct.pack("<II", 0, 1))  # sign counter, reg counter
            + tlv(TAG_PUB_KEY, spki)
            + extension(PIN_KEY_EXTENSION, pin_public),
        )
        # Surrogate basic attestation: the new UAuth key signs the whole KRD item, tag and length included.
        surrogate = tlv(TAG_ATTESTATION_BASIC_SURROGATE, tlv(TAG_SIGNATURE, sign(self.uauth_key, krd)))
        return tlv(TAG_UAFV1_REG_ASSERTION, krd + surrogate)

    def authenticate(self, final_challenge_hash: bytes, pin: str) -> bytes:
        """TAG_UAFV1_AUTH_ASSERTION (Authenticator Commands, Sign Command): UAuth signs the SIGNED_DATA item.

        The sign counter goes up on every signature, successful login or not.
        """
        self.sign_counter += 1
        assertion_info = struct.pack(
            "<HBH", AUTHENTICATOR_VERSION, AUTHENTICATION_MODE_USER_VERIFIED, ALG_SIGN_SECP256R1_ECDSA_SHA256_DER
        )
        pin_proof = sign(self.pin_key(pin), PIN_PROOF_CONTEXT + final_challenge_hash + self.key_id)
        signed_data = tlv(
            TAG_UAFV1_SIGNED_DATA,
            tlv(TAG_AAID, AAID.encode("ascii"))
            + tlv(TAG_ASSERTION_INFO, assertion_info)
            + tlv(TAG_AUTHENTICATOR_NONCE, secrets.token_bytes(16))
            + tlv(TAG_FINAL_CHALLENGE_HASH, final_challenge_hash)
            + tlv(TAG_TRANSACTION_CONTENT_HASH, b"")
            + tlv(TAG_KEYID, self.key_id)
            + tlv(TAG_COUNTERS, struct.pack("<I", self.sign_counter))
            + extension(PIN_PROOF_EXTENSION, pin_proof),
        )
        return tlv(TAG_UAFV1_AUTH_ASSERTION, signed_data + tlv(TAG_SIGNATURE, sign(self.uauth_key, signed_data)))


# ---- the FIDO client (UAF Protocol v1.1) --------------------------------------


def unwrap_uaf_request(returned: dict, op: str) -> dict:
    """The one request in a ReturnUAFRequest (UAF Application API and Transport Binding v1.1)."""
    assert returned["statusCode"] == 1200, returned  # UAF status code OK (Protocol, "UAF Status Codes")
    assert returned["op"] == op, returned
    assert returned["lifetimeMillis"] > 0, returned
    messages = json.loads(returned["uafRequest"])
    assert isinstance(messages, list) and len(messages) == 1, messages
    request = messages[0]
    header = request["header"]
    assert header["upv"] == {"major": 1, "minor": 1}, header
    assert header["op"] == op, header
    return request


def policy_allows(policy: dict, aaid: str, key_id: bytes | None = None) -> bool:
    """Whether a one-authenticator combination of the policy matches us.

    UAF Protocol v1.1, "Policy Dictionary" and "MatchCriteria Dictionary"
    (only the members this authenticator is judged by: aaid, keyIDs).
    """

    def matches(criteria: dict) -> bool:
        if "aaid" in criteria and aaid not in criteria["aaid"]:
            return False
        if "keyIDs" in criteria and (key_id is None or b64url(key_id) not in criteria["keyIDs"]):
            return False
        return True

    if any(matches(c) for c in policy.get("disallowed", [])):
        return False
    return any(len(combo) == 1 and matches(combo[0]) for combo in policy["accepted"])


def check_facet(app_id: str, facet_id: str, ca: str) -> None:
    """Fetch the TrustedFacets list and find our facet in it.

    FIDO AppID and Facet Specification v1.1, "Determining if a Caller's FacetID
    is Authorized for an AppID": HTTPS GET, no unapproved redirects, type
    application/fido.trusted-apps+json, the entry for our protocol version.
    """
    response = requests.get(app_id, verify=ca, allow_redirects=False, timeout=TIMEOUT)
    assert response.status_code == 200, describe(response)
    assert response.headers["Content-Type"].split(";")[0].strip() == "application/fido.trusted-apps+json"
    lists = [f for f in response.json()["trustedFacets"] if f["version"] == {"major": 1, "minor": 1}]
    assert lists and any(facet_id in f["ids"] for f in lists), response.text


def uaf_response(request: dict, facet_id: str, make_assertion) -> dict:
    """A RegistrationResponse or AuthenticationResponse: the request's header, fcParams, assertions (Protocol)."""
    header = request["header"]
    fc_params, fch = final_challenge(header["appID"], request["challenge"], facet_id)
    return {
        "header": header,
        "fcParams": fc_params,
        "assertions": [{"assertionScheme": "UAFV1TLV", "assertion": b64url(make_assertion(fch))}],
    }


def send_uaf_response(response: dict) -> dict:
    """A SendUAFResponse body: the message array as JSON text (Application API and Transport Binding)."""
    return {"uafResponse": json.dumps([response])}


# ---- the server ---------------------------------------------------------------


@dataclass
class Server:
    base: str
    data_dir: pathlib.Path
    ca: str
    demo: dict
    log: pathlib.Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    binary = os.environ.get("SIGNET_TEST_BINARY") or str(DEFAULT_BINARY)
    assert os.access(binary, os.X_OK), f"no signet binary at {binary} (set SIGNET_TEST_BINARY)"
    data_dir = pathlib.Path(tempfile.mkdtemp(prefix="signet-uaf-"))
    port = free_port()
    base = f"https://127.0.0.1:{port}"
    log = data_dir / "server.log"
    with open(log, "wb") as log_file:
        process = subprocess.Popen(
            [binary, "serve", "--dev-tls", "--host", "127.0.0.1", "--port", str(port),
             "--data-dir", str(data_dir), "--issuer", base, "--password-hash-cost", "4"],
            stdout=log_file, stderr=subprocess.STDOUT,
        )
    try:
        ca = data_dir / "dev-tls" / "ca.pem"
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert process.poll() is None, f"signet serve exited {process.returncode}:\n{log.read_text()}"
            try:
                if ca.is_file() and requests.get(
                    base + "/.well-known/openid-configuration", verify=str(ca), timeout=2
                ).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, f"no discovery within {START_TIMEOUT} s:\n{log.read_text()}"
            time.sleep(0.2)
        demo = json.loads((data_dir / "demo.json").read_text(encoding="utf-8"))
        yield Server(base=base, data_dir=data_dir, ca=str(ca), demo=demo, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(data_dir, ignore_errors=True)


# ---- Signet's login and device API -----------------------------------------------


def authorize_params(server: Server, scope: str, nonce: str) -> tuple[dict, str]:
    """The /authorize parameters of a native login, and the PKCE verifier (RFC 7636)."""
    verifier, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": server.demo["native_client_id"],
        "redirect_uri": server.demo["native_redirect_uri"],
        "scope": scope,
        "state": b64url(secrets.token_bytes(16)),
        "nonce": nonce,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    return params, verifier


def redeem(session: requests.Session, server: Server, code: str, verifier: str) -> dict:
    """Authorization code grant at /token (RFC 6749 §4.1.3, RFC 7636 §4.5)."""
    response = session.post(server.base + "/token", data={
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": server.demo["native_redirect_uri"],
        "code_verifier": verifier,
        "client_id": server.demo["native_client_id"],
    }, timeout=TIMEOUT)
    assert response.status_code == 200, describe(response)
    return response.json()


def password_login(session: requests.Session, server: Server, scope: str, nonce: str, sms: bool = False) -> dict:
    """Signet's native login, scenario username + password (and the SMS code with `sms`), then
    /token: the token response. The SMS code is read from the server's development outbox."""
    params, verifier = authorize_params(server, scope, nonce)
    client_id = params["client_id"]
    start = session.post(server.base + "/login/native/start", json=params, timeout=TIMEOUT)
    assert start.status_code == 201, describe(start)
    assert start.json()["next_step"] == "select_scenario", start.text
    login_session = start.json()["login_session"]
    scenario = "s_mobile_authn_un_pwd_sms" if sms else "s_mobile_authn_un_pwd"
    step = session.post(server.base + "/login/native/scenario", json={
        "login_session": login_session, "client_id": client_id, "scenario": scenario,
    }, timeout=TIMEOUT)
    assert step.status_code == 200, describe(step)
    assert step.json()["next_step"] == "username_password", step.text
    done = session.post(server.base + "/login/native/username_password", json={
        "login_session": login_session, "client_id": client_id,
        "username": server.demo["username"], "password": server.demo["password"],
    }, timeout=TIMEOUT)
    assert done.status_code == 200, describe(done)
    if sms:
        assert done.json()["next_step"] == "sms_code", done.text
        done = session.post(server.base + "/login/native/sms_code", json={
            "login_session": login_session, "client_id": client_id, "code": last_sms_code(server),
        }, timeout=TIMEOUT)
        assert done.status_code == 200, describe(done)
    finished = done.json()
    assert finished["next_step"] == "finished", finished
    assert finished["state"] == params["state"] and finished["iss"] == server.base, finished
    return redeem(session, server, finished["authorization_code"], verifier)


def last_sms_code(server: Server) -> str:
    """The newest login code in the development outbox (one JSON message a line; the code ends the text after '#')."""
    lines = (server.data_dir / "outbox.jsonl").read_text(encoding="utf-8").splitlines()
    codes = [json.loads(line) for line in lines if line.strip()]
    codes = [message for message in codes if message.get("purpose") == "login_otp"]
    assert codes, "no login code in the outbox"
    return codes[-1]["body"].rsplit("#", 1)[-1].strip()


def https_session(server: Server) -> requests.Session:
    """A session that trusts the dev-tls CA.

    trust_env is off: otherwise REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE in the
    environment silently win over Session.verify (requests issue #3829).
    """
    session = requests.Session()
    session.trust_env = False
    session.verify = server.ca
    return session


@dataclass
class Device:
    mtls: requests.Session  # presents the device certificate
    subject: str  # `sub` of the activation login
    thumbprint: str  # x5t#S256 of the device certificate (RFC 8705 §3.1)


@pytest.fixture(scope="module")
def device(server: Server) -> Device:
    """An activated device (docs/devices.md): instance id, login, CSR, certificate."""
    plain = https_session(server)
    instance = plain.post(server.base + "/devices/instances",
                          data={"client_id": server.demo["native_client_id"]}, timeout=TIMEOUT)
    assert instance.status_code == 201, describe(instance)
    instance_id = instance.json()["instance_id"]

    tokens = password_login(plain, server, "openid device", instance_id)
    subject = jwt_payload(tokens["id_token"])["sub"]

    key = ec.generate_private_key(ec.SECP256R1())
    csr = (x509.CertificateSigningRequestBuilder()
           .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "uaf test device")]))
           .sign(key, hashes.SHA256()))
    activation = plain.post(server.base + "/devices/activation", json={
        "csr": csr.public_bytes(serialization.Encoding.PEM).decode("ascii"), "platform": "linux",
    }, headers={"Authorization": "Bearer " + tokens["access_token"]}, timeout=TIMEOUT)
    assert activation.status_code == 201, describe(activation)
    chain = activation.json()["certificate_chain"]
    assert len(chain) == 2, chain

    files = server.data_dir / "uaf-test-device"  # removed with the data dir
    files.mkdir()
    (files / "chain.pem").write_text("".join(c if c.endswith("\n") else c + "\n" for c in chain))
    (files / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    mtls = https_session(server)
    mtls.cert = (str(files / "chain.pem"), str(files / "key.pem"))
    leaf = x509.load_pem_x509_certificate(chain[0].encode("ascii"))
    thumbprint = b64url(hashlib.sha256(leaf.public_bytes(serialization.Encoding.DER)).digest())
    return Device(mtls=mtls, subject=subject, thumbprint=thumbprint)


@dataclass
class Registered:
    authenticator: PinAuthenticator
    answer: dict  # the server's 201 body


@pytest.fixture(scope="module")
def registered(server: Server, device: Device) -> Registered:
    """The PIN authenticator registered on the device (Protocol, "Registration Operation")."""
    facet_id = server.demo["facet_id"]
    # Two factors: an authenticator enrolled after a password alone could assert no more than one.
    tokens = password_login(device.mtls, server, "openid", b64url(secrets.token_bytes(16)), sms=True)
    assert_bound(tokens, device)
    bearer = {"Authorization": "Bearer " + tokens["access_token"]}

    response = device.mtls.post(server.base + "/uaf/registration/request", json={}, headers=bearer, timeout=TIMEOUT)
    assert response.status_code == 200, describe(response)
    request = unwrap_uaf_request(response.json(), "Reg")
    app_id = request["header"]["appID"]
    assert app_id == f"{server.base}/uaf/facets/{server.demo['native_client_id']}", app_id
    assert request["username"] == server.demo["username"], request
    assert policy_allows(request["policy"], AAID), request["policy"]
    check_facet(app_id, facet_id, server.ca)

    authenticator = PinAuthenticator.new(PIN)
    body = send_uaf_response(uaf_response(request, facet_id, lambda fch: authenticator.register(fch, PIN)))
    answer = device.mtls.post(server.base + "/uaf/registration/response", json=body, headers=bearer, timeout=TIMEOUT)
    assert answer.status_code == 201, describe(answer)
    return Registered(authenticator=authenticator, answer=answer.json())


def assert_bound(tokens: dict, device: Device) -> None:
    """A JWT access token obtained over mutual TLS carries cnf.x5t#S256 (RFC 8705 §3.1)."""
    if tokens["access_token"].count(".") == 2:
        assert jwt_payload(tokens["access_token"]).get("cnf") == {"x5t#S256": device.thumbprint}, tokens


def verify_id_token(server: Server, id_token: str) -> dict:
    """Check an ES256 ID token's signature against the provider's JWKS (RFC 7515 §5.2, RFC 7518 §3.4)."""
    header = json.loads(b64url_decode(id_token.split(".")[0]))
    assert header["alg"] == "ES256", header
    metadata = requests.get(server.base + "/.well-known/openid-configuration", verify=server.ca, timeout=TIMEOUT).json()
    keys = requests.get(metadata["jwks_uri"], verify=server.ca, timeout=TIMEOUT).json()["keys"]
    [jwk] = [k for k in keys if k.get("kid") == header.get("kid")]
    public_key = ec.EllipticCurvePublicNumbers(
        int.from_bytes(b64url_decode(jwk["x"]), "big"), int.from_bytes(b64url_decode(jwk["y"]), "big"), ec.SECP256R1()
    ).public_key()
    signing_input, _, signature = id_token.rpartition(".")
    raw = b64url_decode(signature)
    assert len(raw) == 64, "an ES256 signature is R || S, 32 bytes each"
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public_key.verify(der, signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))  # raises if wrong
    return jwt_payload(id_token)


def start_device_login(server: Server, device: Device, authenticator: PinAuthenticator) -> tuple[dict, dict, str]:
    """POST /login/device/start: (authorize params, AuthenticationRequest, PKCE verifier)."""
    params, verifier = authorize_params(server, "openid", b64url(secrets.token_bytes(16)))
    response = device.mtls.post(server.base + "/login/device/start", json=params, timeout=TIMEOUT)
    assert response.status_code == 201, describe(response)
    assert response.json()["expires_in"] > 0, response.text
    request = unwrap_uaf_request(response.json()["uaf_request"], "Auth")
    assert policy_allows(request["policy"], AAID, authenticator.key_id), request["policy"]
    return params, request, verifier


def finish_device_login(server: Server, device: Device, body: dict) -> requests.Response:
    return device.mtls.post(server.base + "/login/device/finish", json=body, timeout=TIMEOUT)


def authentication_body(server: Server, request: dict, authenticator: PinAuthenticator, pin: str) -> dict:
    return send_uaf_response(uaf_response(
        request, server.demo["facet_id"], lambda fch: authenticator.authenticate(fch, pin)))


def device_login(server: Server, device: Device, authenticator: PinAuthenticator, pin: str = PIN) -> dict:
    """A whole device login with the PIN authenticator: the /token response."""
    params, request, verifier = start_device_login(server, device, authenticator)
    done = finish_device_login(server, device, authentication_body(server, request, authenticator, pin))
    assert done.status_code == 200, describe(done)
    finished = done.json()
    assert finished["next_step"] == "finished", finished
    assert finished["state"] == params["state"] and finished["iss"] == server.base, finished
    tokens = redeem(device.mtls, server, finished["authorization_code"], verifier)
    assert verify_id_token(server, tokens["id_token"])["nonce"] == params["nonce"]
    assert_bound(tokens, device)
    return tokens


# UAF Protocol 1.1, "UAF Status Codes", as the FIDO UAF server conformance tests use them.
UNAUTHORIZED, REQUEST_INVALID, UNACCEPTABLE_CONTENT = 1401, 1491, 1498


def assert_error(response: requests.Response, status: int, error: str, uaf_status: int) -> dict:
    assert response.status_code == status, describe(response)
    body = response.json()
    assert body["error"] == error, body
    assert body["uaf_status_code"] == uaf_status, body
    assert "authorization_code" not in body, body
    return body


# ---- the tests -----------------------------------------------------------------


def test_register_and_log_in_with_the_pin(server, device, registered):
    """Registration then a PIN login (Protocol, Registration and Authentication Operations): level 2, a key + pin.

    The device key is not attested (the development verifier), so RFC 8176 `swk`, not `hwk`."""
    authenticator = registered.answer["authenticator"]
    assert authenticator["aaid"] == AAID, authenticator
    assert authenticator["key_id"] == b64url(registered.authenticator.key_id), authenticator
    assert authenticator["pin"]["state"] == "unlocked", authenticator

    tokens = device_login(server, device, registered.authenticator)
    claims = jwt_payload(tokens["id_token"])
    assert claims["acr"] == "urn:signet:loa:2", claims
    assert claims["amr"] == ["swk", "pin", "mfa"], claims
    assert claims["sub"] == device.subject, claims
    assert claims["iss"] == server.base and claims["aud"] in (
        server.demo["native_client_id"], [server.demo["native_client_id"]]), claims


def test_wrong_pin_is_counted_and_the_right_pin_still_works(server, device, registered):
    """A PIN proof from a key derived from another PIN is refused and counted."""
    _, request, _ = start_device_login(server, device, registered.authenticator)
    body = authentication_body(server, request, registered.authenticator, WRONG_PIN)
    wrong = finish_device_login(server, device, body)
    body = assert_error(wrong, 401, "wrong_pin", UNAUTHORIZED)
    assert body["pin"]["state"] == "last_attempt_failed", body
    assert body["pin"]["remaining_tries"] == 4, body

    claims = jwt_payload(device_login(server, device, registered.authenticator)["id_token"])
    assert claims["amr"] == ["swk", "pin", "mfa"], claims
    # a right PIN gives the tries back (GET /devices/status, docs/devices.md)
    status = device.mtls.get(server.base + "/devices/status", timeout=TIMEOUT)
    assert status.status_code == 200, describe(status)
    [mine] = [a for a in status.json()["authenticators"] if a["key_id"] == b64url(registered.authenticator.key_id)]
    assert mine["pin"]["state"] == "unlocked" and mine["pin"]["remaining_tries"] == 5, mine


def test_the_same_response_twice_is_refused(server, device, registered):
    """A replayed AuthenticationResponse gets no second code: the server accepts a challenge once."""
    _, request, verifier = start_device_login(server, device, registered.authenticator)
    body = authentication_body(server, request, registered.authenticator, PIN)
    first = finish_device_login(server, device, body)
    assert first.status_code == 200, describe(first)
    code = first.json()["authorization_code"]

    replay = finish_device_login(server, device, body)
    assert_error(replay, 400, "uaf_request_used", REQUEST_INVALID)
    # the one code issued still works, once
    assert redeem(device.mtls, server, code, verifier)["id_token"]


def test_a_flipped_signature_byte_is_refused(server, device, registered):
    """The server verifies the UAuth signature over TAG_UAFV1_SIGNED_DATA."""
    _, request, _ = start_device_login(server, device, registered.authenticator)
    response = uaf_response(request, server.demo["facet_id"],
                            lambda fch: registered.authenticator.authenticate(fch, PIN))
    assertion = bytearray(b64url_decode(response["assertions"][0]["assertion"]))
    # TAG_SIGNATURE is the last item inside TAG_UAFV1_AUTH_ASSERTION: flip its last byte.
    [(tag, inner)] = parse_tlv(bytes(assertion))
    assert tag == TAG_UAFV1_AUTH_ASSERTION and parse_tlv(inner)[-1][0] == TAG_SIGNATURE
    assertion[-1] ^= 0x01
    response["assertions"][0]["assertion"] = b64url(bytes(assertion))
    refused = finish_device_login(server, device, send_uaf_response(response))
    assert_error(refused, 401, "invalid_signature", UNACCEPTABLE_CONTENT)
    # the challenge was spent before the signature was checked: the untouched answer is too late
    response["assertions"][0]["assertion"] = b64url(bytes(assertion[:-1]) + bytes([assertion[-1] ^ 0x01]))
    late = finish_device_login(server, device, send_uaf_response(response))
    assert_error(late, 400, "uaf_request_used", REQUEST_INVALID)
