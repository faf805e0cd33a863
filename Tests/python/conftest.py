"""Fixtures for the Python interop and headless-browser tests.

These tests talk to a running `signet serve`. scripts/test starts one on a
free loopback port with a fresh data directory and exports:

  SIGNET_TEST_ISSUER     the issuer / base URL, e.g. http://127.0.0.1:PORT
  SIGNET_TEST_DATA_DIR   the server's --data-dir (holds demo.json)
  SIGNET_TEST_ARTIFACTS  where screenshots go (default /tmp/signet-artifacts)

To run them by hand against your own server:
  SIGNET_TEST_ISSUER=http://127.0.0.1:8080 SIGNET_TEST_DATA_DIR=/path \
      python3 -m pytest -q Tests/python
"""

from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass, field

import pytest
import requests

from signet_helpers import TIMEOUT, describe, load_backend_key


@dataclass
class Signet:
    issuer: str
    data_dir: pathlib.Path
    demo: dict
    metadata: dict
    jwks: dict
    backend_jwk: dict = field(repr=False)
    backend_key: object = field(repr=False)

    @property
    def backend_kid(self) -> str | None:
        return self.backend_jwk.get("kid")

    def scope(self) -> str:
        """openid, plus profile/offline_access when the server advertises them."""
        supported = self.metadata.get("scopes_supported") or []
        wanted = ["openid"] + [s for s in ("profile", "offline_access") if s in supported]
        return " ".join(wanted)


def _require_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(
            f"{name} is not set. These tests need a running Signet server; "
            "run them through scripts/test (which starts one), or set "
            "SIGNET_TEST_ISSUER and SIGNET_TEST_DATA_DIR yourself.",
            pytrace=False,
        )
    return value


@pytest.fixture(scope="session")
def signet() -> Signet:
    issuer = _require_env("SIGNET_TEST_ISSUER").rstrip("/")
    data_dir = pathlib.Path(_require_env("SIGNET_TEST_DATA_DIR"))
    demo_path = data_dir / "demo.json"
    assert demo_path.is_file(), f"{demo_path} missing: the server did not seed demo data"
    demo = json.loads(demo_path.read_text(encoding="utf-8"))
    # demo.json may hold a relative key path (relative to the data dir)
    key_path = pathlib.Path(demo["backend_private_jwk_path"])
    if not key_path.is_absolute():
        key_path = data_dir / key_path
    demo["backend_private_jwk_path"] = str(key_path)

    resp = requests.get(issuer + "/.well-known/openid-configuration", timeout=TIMEOUT)
    assert resp.status_code == 200, describe(resp)
    metadata = resp.json()
    jwks_resp = requests.get(metadata["jwks_uri"], timeout=TIMEOUT)
    assert jwks_resp.status_code == 200, describe(jwks_resp)
    jwk, key = load_backend_key(demo)
    return Signet(
        issuer=issuer,
        data_dir=data_dir,
        demo=demo,
        metadata=metadata,
        jwks=jwks_resp.json(),
        backend_jwk=jwk,
        backend_key=key,
    )


@pytest.fixture(scope="session")
def artifacts_dir() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("SIGNET_TEST_ARTIFACTS") or "/tmp/signet-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Lets fixtures see whether the test body failed (item.rep_call)."""
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call":
        item.rep_call = rep
