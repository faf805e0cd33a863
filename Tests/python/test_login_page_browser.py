"""The hosted login page in a real browser (headless Debian chromium + selenium).

A tiny HTTP server on a free loopback port plays the native app's loopback
redirect target (RFC 8252 §7.3: `http://127.0.0.1:<any port>/callback`).
Screenshots go to $SIGNET_TEST_ARTIFACTS (default /tmp/signet-artifacts).
"""

from __future__ import annotations

import http.server
import json
import os
import pathlib
import secrets
import threading
import urllib.parse

import pytest
import requests
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from signet_helpers import (
    TIMEOUT,
    authorize_url,
    client_assertion,
    assertion_params,
    describe,
    make_pkce,
    open_login_page,
    parse_login_page,
)

CHROMIUM = os.environ.get("SIGNET_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SIGNET_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")
WAIT = 20  # seconds for page transitions

PHONE = (390, 844)
DESKTOP = (1280, 800)


# ------------------------------------------------------------ callback server


class CallbackServer:
    """Records every request to http://127.0.0.1:<port>/... ."""

    def __init__(self):
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                parts = urllib.parse.urlsplit(self.path)
                if parts.path == "/favicon.ico":  # the browser asks on its own
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                hits.append((parts.path, dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))))
                body = b"<!doctype html><title>callback</title><h1>callback received</h1>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.redirect_uri = f"http://127.0.0.1:{self.port}/callback"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def callback_server():
    server = CallbackServer()
    yield server
    server.close()


@pytest.fixture
def callback(callback_server):
    callback_server.hits.clear()
    return callback_server


# ------------------------------------------------------------------- browser


@pytest.fixture(scope="session")
def browser_paths():
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not (os.path.isfile(p) and os.access(p, os.X_OK))]
    if missing:
        pytest.fail(
            f"missing {', '.join(missing)}: run scripts/setup-test-env "
            "(installs Debian's chromium and chromium-driver)",
            pytrace=False,
        )
    return CHROMIUM, CHROMEDRIVER


@pytest.fixture
def driver(browser_paths, artifacts_dir, request):
    chromium, chromedriver = browser_paths
    os.environ.setdefault("SE_OFFLINE", "true")  # never let selenium download anything
    opts = Options()
    opts.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--password-store=basic",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
        "--lang=en-US",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    service = Service(executable_path=chromedriver, log_output=str(artifacts_dir / "chromedriver.log"))
    drv = webdriver.Chrome(options=opts, service=service)
    drv.set_page_load_timeout(WAIT)
    yield drv
    # keep a picture of whatever a failed test left on screen (rep_call: conftest.py)
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        try:
            drv.save_screenshot(str(artifacts_dir / f"FAILED-{request.node.name}.png"))
        except Exception:
            pass
    drv.quit()


def document_statuses(drv) -> list[tuple[str, int]]:
    """(url, HTTP status) of every top-level document the browser received."""
    out = []
    for entry in drv.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.responseReceived" and msg["params"].get("type") == "Document":
            resp = msg["params"]["response"]
            out.append((resp["url"], resp["status"]))
    return out


def wait_for(drv, condition, what: str, timeout: float = WAIT):
    try:
        return WebDriverWait(drv, timeout).until(condition)
    except TimeoutException:
        raise AssertionError(
            f"timed out waiting for {what}; url={drv.current_url}\n{drv.page_source[:2000]}"
        ) from None


# ------------------------------------------------------------------- helpers


def new_authorization(signet, callback):
    verifier, challenge = make_pkce()
    state = secrets.token_urlsafe(16)
    url = authorize_url(
        signet.metadata,
        signet.demo["backend_client_id"],
        callback.redirect_uri,
        challenge,
        state=state,
        nonce=secrets.token_urlsafe(16),
        scope="openid",
    )
    return url, state, verifier


def open_login(drv, url):
    drv.get(url)
    form = wait_for(drv, lambda d: d.find_elements(By.ID, "login-form"), "the login form")[0]
    return form


def fill_and_submit(drv, username, password):
    form = drv.find_element(By.ID, "login-form")
    user = form.find_element(By.NAME, "username")
    pw = form.find_element(By.NAME, "password")
    user.clear()
    user.send_keys(username)
    pw.clear()
    pw.send_keys(password)
    old_page = drv.find_element(By.TAG_NAME, "html")
    form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
    return old_page


def wait_new_page(drv, old_html_element, what):
    def gone(d):
        try:
            old_html_element.tag_name  # raises once the old document is gone
            return False
        except Exception:
            return d.execute_script("return document.readyState") == "complete"

    wait_for(drv, gone, what)


def screenshot(drv, artifacts_dir: pathlib.Path, name: str) -> pathlib.Path:
    path = artifacts_dir / name
    drv.save_screenshot(str(path))
    return path


# --------------------------------------------------------------------- tests


def test_browser_login_redirects_to_loopback_callback(signet, driver, callback, artifacts_dir):
    url, state, verifier = new_authorization(signet, callback)
    open_login(driver, url)
    screenshot(driver, artifacts_dir, "login-desktop-before-submit.png")
    fill_and_submit(driver, signet.demo["username"], signet.demo["password"])

    wait_for(driver, lambda d: callback.hits, "the loopback callback to be called")
    assert len(callback.hits) == 1, callback.hits
    path, params = callback.hits[0]
    assert path == "/callback"
    assert params.get("code"), params
    assert params.get("state") == state, params
    assert params.get("iss") == signet.issuer, params
    assert "error" not in params
    assert driver.current_url.startswith(callback.redirect_uri + "?")

    # the code is good: redeem it with PKCE + private_key_jwt, same loopback redirect
    body = {
        "grant_type": "authorization_code",
        "code": params["code"],
        "code_verifier": verifier,
        "redirect_uri": callback.redirect_uri,
        "client_id": signet.demo["backend_client_id"],
        **assertion_params(
            client_assertion(
                signet.demo["backend_client_id"],
                signet.backend_key,
                signet.metadata["token_endpoint"],
                kid=signet.backend_kid,
            )
        ),
    }
    resp = requests.post(signet.metadata["token_endpoint"], data=body, timeout=TIMEOUT)
    assert resp.status_code == 200, describe(resp)
    assert resp.json().get("id_token")


def test_wrong_password_shows_alert_and_does_not_redirect(signet, driver, callback, artifacts_dir):
    url, _, _ = new_authorization(signet, callback)
    open_login(driver, url)
    driver.get_log("performance")  # drop the log so far
    old = fill_and_submit(driver, signet.demo["username"], signet.demo["password"] + "-wrong")
    wait_new_page(driver, old, "the login page to come back")

    alert = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[role="alert"]'), "the alert")[0]
    assert alert.is_displayed()
    assert alert.text.strip(), "the alert is empty"
    assert signet.demo["password"] not in driver.page_source
    assert driver.find_elements(By.ID, "login-form"), "login form not shown again"
    statuses = document_statuses(driver)
    assert any(u.split("?")[0].endswith("/login") and s == 401 for u, s in statuses), statuses
    assert not callback.hits, callback.hits
    assert not driver.current_url.startswith(callback.redirect_uri)
    driver.set_window_size(*PHONE)
    screenshot(driver, artifacts_dir, "login-phone-wrong-password.png")

    # the correct password still works on the re-shown page
    fill_and_submit(driver, signet.demo["username"], signet.demo["password"])
    wait_for(driver, lambda d: callback.hits, "the callback after a retry")
    assert callback.hits[0][1].get("code")


def test_wrong_password_and_unknown_user_look_the_same(signet):
    """The alert is generic: it doesn't tell which of username/password was wrong."""
    texts = {}
    for label, user, pw in (
        ("wrong-password", signet.demo["username"], "not-" + signet.demo["password"]),
        ("unknown-user", "nobody-" + secrets.token_hex(4), "whatever-password"),
    ):
        verifier, challenge = make_pkce()
        url = authorize_url(
            signet.metadata,
            signet.demo["backend_client_id"],
            "http://127.0.0.1/callback",
            challenge,
            state="s",
            scope="openid",
        )
        page = open_login_page(requests.Session(), url)
        resp = page.submit(user, pw)
        assert resp.status_code == 401, describe(resp)
        parsed = parse_login_page(resp.text)
        assert parsed.alerts and parsed.alerts[0], "no role=alert text:\n" + describe(resp)
        texts[label] = parsed.alerts
    assert texts["wrong-password"] == texts["unknown-user"], texts


def test_form_without_csrf_token_is_refused(signet, driver, callback, artifacts_dir):
    url, _, _ = new_authorization(signet, callback)
    open_login(driver, url)
    removed = driver.execute_script(
        "const i = document.querySelector('#login-form input[name=\"csrf_token\"]');"
        "if (!i) return false; i.remove(); return true;"
    )
    assert removed, "the form has no csrf_token input"
    driver.get_log("performance")
    old = fill_and_submit(driver, signet.demo["username"], signet.demo["password"])
    wait_new_page(driver, old, "the answer to the forged POST")
    screenshot(driver, artifacts_dir, "login-csrf-403.png")

    statuses = document_statuses(driver)
    assert any(u.split("?")[0].endswith("/login") and s == 403 for u, s in statuses), statuses
    assert not callback.hits, callback.hits
    assert not driver.current_url.startswith(callback.redirect_uri)


def test_form_without_browser_cookie_is_refused(signet, driver, callback):
    url, _, _ = new_authorization(signet, callback)
    open_login(driver, url)
    driver.delete_all_cookies()
    driver.get_log("performance")
    old = fill_and_submit(driver, signet.demo["username"], signet.demo["password"])
    wait_new_page(driver, old, "the answer to the cookie-less POST")
    statuses = document_statuses(driver)
    assert any(u.split("?")[0].endswith("/login") and s == 403 for u, s in statuses), statuses
    assert not callback.hits, callback.hits


def test_csrf_refusals_without_browser(signet):
    """Same checks at HTTP level: missing token, wrong token, missing cookie -> 403."""
    verifier, challenge = make_pkce()
    url = authorize_url(
        signet.metadata, signet.demo["backend_client_id"], "http://127.0.0.1/callback", challenge, state="s"
    )
    for case in ("no-token", "bad-token", "no-cookie"):
        page = open_login_page(requests.Session(), url)
        kwargs = {
            "no-token": dict(drop=("csrf_token",)),
            "bad-token": dict(override={"csrf_token": "AAAA" + secrets.token_urlsafe(16)}),
            "no-cookie": dict(cookies=False),
        }[case]
        resp = page.submit(signet.demo["username"], signet.demo["password"], **kwargs)
        assert resp.status_code == 403, f"{case}:\n" + describe(resp)
        assert "Location" not in resp.headers, f"{case}:\n" + describe(resp)


def _check_page_headers(resp, what):
    h = resp.headers
    csp = h.get("Content-Security-Policy", "")
    assert "frame-ancestors 'none'" in csp, f"{what}: CSP {csp!r}\n" + describe(resp)
    assert h.get("X-Frame-Options", "").upper() == "DENY", f"{what}: " + describe(resp)
    assert "no-store" in h.get("Cache-Control", ""), f"{what}: " + describe(resp)
    assert h.get("Content-Type", "").startswith("text/html"), f"{what}: " + describe(resp)


def test_login_page_security_headers(signet):
    verifier, challenge = make_pkce()
    url = authorize_url(
        signet.metadata, signet.demo["backend_client_id"], "http://127.0.0.1/callback", challenge, state="s"
    )
    session = requests.Session()
    page = open_login_page(session, url)
    _check_page_headers(page.response, "login page")

    # every Set-Cookie on the page: HttpOnly; SameSite=Lax
    set_cookies = []
    for r in [*page.response.history, page.response]:
        set_cookies += r.raw.headers.getlist("Set-Cookie")
    assert set_cookies, "the login page set no cookie (the form must be bound to the browser)"
    for c in set_cookies:
        attrs = [a.strip().lower() for a in c.split(";")[1:]]
        assert "httponly" in attrs, f"cookie not HttpOnly: {c}"
        assert "samesite=lax" in attrs, f"cookie not SameSite=Lax: {c}"

    assert page.parsed.form_attrs.get("method", "").lower() == "post"
    assert urllib.parse.urlsplit(page.action_url).path == "/login"
    for name in ("username", "password", "authorization", "csrf_token"):
        assert name in page.parsed.inputs, f"input {name} missing"
    assert page.parsed.inputs["authorization"].get("type") == "hidden"
    assert page.parsed.inputs["csrf_token"].get("type") == "hidden"
    assert page.parsed.inputs["password"].get("type") == "password"
    assert page.parsed.has_submit_button

    # the error pages carry the same headers
    wrong = page.submit(signet.demo["username"], "wrong-" + signet.demo["password"])
    assert wrong.status_code == 401, describe(wrong)
    _check_page_headers(wrong, "401 page")
    page2 = open_login_page(requests.Session(), url)
    forged = page2.submit(signet.demo["username"], signet.demo["password"], drop=("csrf_token",))
    assert forged.status_code == 403, describe(forged)
    _check_page_headers(forged, "403 page")


def _layout_facts(drv):
    return drv.execute_script(
        """
        const de = document.documentElement;
        const form = document.getElementById('login-form');
        const controls = [...form.querySelectorAll('input:not([type=hidden]), button')];
        return {
          innerWidth: window.innerWidth,
          scrollWidth: de.scrollWidth,
          bodyScrollWidth: document.body.scrollWidth,
          controls: controls.map(e => {
            const r = e.getBoundingClientRect();
            return {name: e.name || e.type, left: r.left, right: r.right, width: r.width, height: r.height};
          }),
        };
        """
    )


def _assert_fits(facts, label):
    w = facts["innerWidth"]
    assert facts["scrollWidth"] <= w, f"{label}: horizontal scroll ({facts})"
    assert facts["bodyScrollWidth"] <= w, f"{label}: body wider than viewport ({facts})"
    for c in facts["controls"]:
        assert c["width"] > 0 and c["height"] > 0, f"{label}: control not visible {c}"
        assert c["left"] >= 0 and c["right"] <= w + 0.5, f"{label}: control outside viewport {c}"


@pytest.mark.parametrize("size,label", [(PHONE, "phone"), (DESKTOP, "desktop")], ids=["phone", "desktop"])
def test_login_page_fits_viewport(signet, driver, callback, artifacts_dir, size, label):
    url, _, _ = new_authorization(signet, callback)
    driver.set_window_size(*size)
    open_login(driver, url)
    facts = _layout_facts(driver)
    path = screenshot(driver, artifacts_dir, f"login-{label}.png")
    _assert_fits(facts, label)
    assert path.stat().st_size > 0


def test_login_page_on_emulated_phone(signet, driver, callback, artifacts_dir):
    """Real mobile emulation: a page without a proper <meta viewport> would get
    a 980px layout viewport here, and look tiny on a phone."""
    parsed_viewport = None
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 2, "mobile": True},
    )
    url, _, _ = new_authorization(signet, callback)
    open_login(driver, url)
    parsed_viewport = driver.execute_script(
        "const m = document.querySelector('meta[name=viewport]'); return m && m.content;"
    )
    facts = _layout_facts(driver)
    screenshot(driver, artifacts_dir, "login-phone-emulated.png")
    assert parsed_viewport and "width=device-width" in parsed_viewport.replace(" ", ""), parsed_viewport
    assert facts["innerWidth"] == PHONE[0], facts
    _assert_fits(facts, "emulated phone")
