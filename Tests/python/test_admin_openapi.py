"""The admin API's OpenAPI document is valid OpenAPI 3.1, and every operation it names is served.

An independent check, written against the document only: openapi-spec-validator validates it,
then each path and method is called on the admin listener of a real `signet serve` with the
bearer token, and must answer one of the statuses the document lists for it.
"""
import contextlib
import os
import pathlib
import secrets
import socket
import subprocess
import time

import requests
import yaml
from openapi_spec_validator import validate

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "Sources" / "SignetServer" / "Admin" / "admin.openapi.yaml"
TIMEOUT = 10


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def admin_listener(tmp_path: pathlib.Path, token: str):
    """`signet serve` on loopback with its admin listener and the admin API on; yields the admin URL."""
    binary = os.environ.get("SIGNET_TEST_BINARY") or str(ROOT / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "signet")
    port, admin_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    env.update(SIGNET_ADMIN_TOKEN=token, SIGNET_LOG_FORMAT="json")
    process = subprocess.Popen(
        [binary, "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port), "--admin-port", str(admin_port), "--password-hash-cost", "4"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{admin_port}"
    try:
        for _ in range(150):
            try:
                if requests.get(base + "/health/live", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_admin_document_is_valid_openapi():
    document = yaml.safe_load(DOCUMENT.read_text())
    validate(document)
    assert set(document["paths"]) >= {"/admin/clients", "/admin/clients/{client_id}", "/admin/users", "/admin/audit"}


def test_every_documented_operation_answers_as_documented(tmp_path):
    token = secrets.token_hex(32)
    with admin_listener(tmp_path, token) as base:
        document = yaml.safe_load(requests.get(base + "/admin/openapi.yaml", timeout=TIMEOUT).text)
        assert document == yaml.safe_load(DOCUMENT.read_text())
        headers = {"Authorization": "Bearer " + token}
        bodies = {
            ("post", "/admin/clients"): {"client_id": "doc-client", "token_endpoint_auth_method": "none", "redirect_uris": ["com.example.doc:/cb"]},
            ("put", "/admin/clients/{client_id}"): {"token_endpoint_auth_method": "none", "redirect_uris": ["com.example.doc:/cb2"]},
            ("post", "/admin/users"): {"username": "doc-user", "password": "a long password"},
            ("patch", "/admin/users/{username}"): {"name": "Doc"},
        }
        order = ["post", "get", "put", "patch", "delete"]
        for path, item in document["paths"].items():
            for method in sorted((m for m in item if m in order), key=order.index):
                concrete = path.replace("{client_id}", "doc-client").replace("{username}", "doc-user")
                body = bodies.get((method, path))
                response = requests.request(method.upper(), base + concrete, json=body, headers=headers, timeout=TIMEOUT)
                documented = set(item[method]["responses"])
                assert str(response.status_code) in documented, f"{method.upper()} {path}: {response.status_code} {response.text[:200]}"
                if method != "delete" and "json" in response.headers.get("Content-Type", ""):
                    response.json()
        # Without the token every operation but the document is refused with a challenge.
        refused = requests.get(base + "/admin/clients", timeout=TIMEOUT)
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")
