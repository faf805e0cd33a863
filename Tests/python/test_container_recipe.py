"""The container recipe and the deployment examples, checked without a container engine.

CI has no Docker, so the image is never built here. What is checked instead:

- `scripts/container-build install` (the step the Dockerfile runs) lays out an image root,
  and the `signet` in it serves with the settings the image gives it: the installed
  /etc/signet/signet.yaml and the Dockerfile's SIGNET_ variables (host, port and issuer moved
  to loopback for the test), with /metrics on the admin port only.
  `scripts/container-build healthcheck`, the image's HEALTHCHECK,
  passes only on a 200 from /health/ready, with curl and with bash's /dev/tcp (the image has
  no curl). SIGTERM stops the server with status 0.
- `build` runs the release build the image needs (with a stand-in `swift`) and installs it.
- deploy/signet.yaml passes `signet config check` as shipped and with every optional
  setting switched on; so do compose.yaml's settings for `signet` and the systemd unit's.
- The Dockerfile, .dockerignore, compose.yaml and deploy/signet.service say what
  docs/operations.md says they do.

Like test_uaf_client.py this file starts its own server, so it needs no SIGNET_TEST_*
variables besides, optionally, SIGNET_TEST_BINARY:

    python3 -m pytest -q Tests/python/test_container_recipe.py
"""

from __future__ import annotations

import filecmp
import json
import os
import pathlib
import re
import shlex
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import time
import urllib.parse

import pytest
import requests
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "container-build"
EXAMPLE_CONFIG = REPO / "deploy" / "signet.yaml"
UNIT = REPO / "deploy" / "signet.service"
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
COMPOSE = REPO / "compose.yaml"
DEFAULT_BINARY = REPO / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "signet"
START_TIMEOUT = 60  # seconds for the server to be ready
TIMEOUT = 15  # seconds, for every HTTP request and command

# Where `install` puts things (the Dockerfile relies on these paths).
INSTALLED_BINARY = "usr/local/bin/signet"
INSTALLED_SCRIPT = "usr/local/libexec/signet/container-build"
INSTALLED_CONFIG = "etc/signet/signet.yaml"
INSTALLED_DATA = "data"
IMAGE_UID = 10001


# ---- helpers -------------------------------------------------------------------------


def signet_binary() -> str:
    binary = os.environ.get("SIGNET_TEST_BINARY") or str(DEFAULT_BINARY)
    assert os.access(binary, os.X_OK), f"no signet binary at {binary} (set SIGNET_TEST_BINARY)"
    return binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**settings: str) -> dict[str, str]:
    """This process's environment without any SIGNET_ variable, plus `settings`.

    signet refuses SIGNET_ variables that are not settings and reads the ones that are, so
    nothing of the caller's (scripts/test exports SIGNET_TEST_*) may leak into a check."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    env.update(settings)
    return env


def run(args: list[str], env: dict[str, str] | None = None, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args], env=env if env is not None else clean_env(),
        capture_output=True, text=True, timeout=timeout,
    )


def config_check(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return run([signet_binary(), "config", "check", *args], env=env)


def report_sources(report: str) -> dict[str, str]:
    """`config check` output: each key's source, the text in its last [...]."""
    sources = {}
    for line in report.splitlines():
        match = re.match(r"^(\S+)\s.*\[([^\]]*)\]\s*$", line)
        if match:
            sources[match.group(1)] = match.group(2)
    return sources


def uncomment_optional_settings(text: str) -> tuple[str, int]:
    """deploy/signet.yaml with its "#key: value" lines switched on, and how many there were.

    The file's convention: an optional setting (or list item) is commented out with a "#"
    in front of its own indentation; prose comments are sentences, never "key:"."""
    lines, count = [], 0
    for line in text.splitlines():
        match = re.match(r"^(\s*)#(\s*)([a-z][A-Za-z]*:(\s.*)?|- \S.*)$", line)
        if match:
            lines.append(match.group(1) + match.group(2) + match.group(3))
            count += 1
        else:
            lines.append(line)
    return "\n".join(lines) + "\n", count


def flatten(mapping: dict, prefix: str = "") -> dict[str, object]:
    leaves = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            leaves.update(flatten(value, name + "."))
        else:
            leaves[name] = value
    return leaves


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    instructions, pending = [], ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        pending += line
        word, _, rest = pending.strip().partition(" ")
        instructions.append((word.upper(), rest.strip()))
        pending = ""
    assert not pending, "Dockerfile ends inside a continued line"
    return instructions


def dockerfile_env() -> dict[str, str]:
    env = {}
    for word, args in dockerfile_instructions():
        if word == "ENV":
            for pair in shlex.split(args):
                name, _, value = pair.partition("=")
                env[name] = value
    return env


def unit_directives() -> dict[str, list[str]]:
    """deploy/signet.service as section.Key -> values (keys may repeat)."""
    directives: dict[str, list[str]] = {}
    section = ""
    for raw in UNIT.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, _, value = line.partition("=")
        directives.setdefault(f"{section}.{key.strip()}", []).append(value.strip())
    return directives


def healthcheck(script: pathlib.Path, *args: str, client: str | None = None, **env: str) -> subprocess.CompletedProcess:
    extra = dict(env)
    if client:
        extra["HEALTHCHECK_CLIENT"] = client
    return run([script, "healthcheck", *args], env=clean_env(**extra))


def clients() -> list[str]:
    """The healthcheck's two ways: /dev/tcp always, curl where this machine has it."""
    return ["tcp"] + (["curl"] if shutil.which("curl") else [])


# ---- install -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def image_root(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("image-root")
    result = run([SCRIPT, "install", signet_binary(), root])
    assert result.returncode == 0, result.stderr
    return root


def test_install_lays_out_the_image_root(image_root):
    binary = image_root / INSTALLED_BINARY
    assert binary.is_file() and os.access(binary, os.X_OK)
    assert filecmp.cmp(binary, signet_binary(), shallow=False)

    script = image_root / INSTALLED_SCRIPT
    assert script.is_file() and os.access(script, os.X_OK)
    assert filecmp.cmp(script, SCRIPT, shallow=False), "the image's healthcheck must be this script"

    config = image_root / INSTALLED_CONFIG
    assert config.read_text(encoding="utf-8") == EXAMPLE_CONFIG.read_text(encoding="utf-8")
    assert stat.S_IMODE(config.stat().st_mode) == 0o644

    data = image_root / INSTALLED_DATA
    assert data.is_dir()
    assert stat.S_IMODE(data.stat().st_mode) == 0o700, "the data folder holds the signing keys"
    if os.geteuid() == 0:
        assert (data.stat().st_uid, data.stat().st_gid) == (IMAGE_UID, IMAGE_UID)


def test_install_refuses_a_missing_binary(tmp_path):
    result = run([SCRIPT, "install", tmp_path / "no-such-signet", tmp_path / "root"])
    assert result.returncode != 0
    assert "no executable" in result.stderr
    assert not (tmp_path / "root").exists()


def test_build_makes_a_static_release_build_and_installs_it(tmp_path):
    """`build` with a stand-in `swift`: the arguments it passes, and what it installs."""
    fake_bin, built = tmp_path / "fake-bin", tmp_path / "release"
    fake_bin.mkdir()
    built.mkdir()
    (built / "signet").write_text("#!/bin/sh\necho fake signet\n")
    (built / "signet").chmod(0o755)
    calls = tmp_path / "swift-calls"
    swift = fake_bin / "swift"
    swift.write_text(
        "#!/usr/bin/env bash\n"
        f'printf "%s\\n" "$*" >> {shlex.quote(str(calls))}\n'
        f'case " $* " in *" --show-bin-path "*) echo {shlex.quote(str(built))} ;; esac\n'
    )
    swift.chmod(0o755)
    out = tmp_path / "out"
    env = clean_env(PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    result = run([SCRIPT, "build", out], env=env)
    assert result.returncode == 0, result.stderr
    first = calls.read_text().splitlines()[0].split()
    assert first[0] == "build"
    for expected in (["-c", "release"], ["--product", "signet"], ["--static-swift-stdlib"]):
        assert any(first[i:i + len(expected)] == expected for i in range(len(first))), first
    assert (out / INSTALLED_BINARY).read_text() == "#!/bin/sh\necho fake signet\n"
    assert (out / INSTALLED_CONFIG).is_file()
    assert (out / INSTALLED_SCRIPT).is_file()


# ---- the installed server and its healthcheck ------------------------------------------


def test_installed_server_serves_answers_the_healthcheck_and_stops_on_sigterm(image_root, tmp_path):
    port, admin_port, closed_port = free_port(), free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    # The Dockerfile's environment, with the listener moved to loopback (the image listens on
    # 0.0.0.0, which needs an https issuer and TLS or proxies) and free ports.
    image_env = dockerfile_env()
    settings = dict(image_env)
    settings.update(
        SIGNET_DATA_DIR=str(image_root / INSTALLED_DATA),
        SIGNET_CONFIG=str(image_root / INSTALLED_CONFIG),
        SIGNET_HOST="127.0.0.1",
        SIGNET_PORT=str(port),
        SIGNET_ISSUER=base,
        SIGNET_ADMIN_PORT=str(admin_port),
        SIGNET_PASSWORD_HASH_COST="4",
    )
    env = clean_env(**settings)

    # The settings come from where the image says: the installed file and the variables.
    check = config_check(env)
    assert check.returncode == 0, check.stderr
    assert f"configuration file: {image_root / INSTALLED_CONFIG}" in check.stdout
    sources = report_sources(check.stdout)
    assert sources["log.level"] == f"{image_root / INSTALLED_CONFIG}: log.level"
    assert sources["dataDir"] == "environment SIGNET_DATA_DIR"

    script = image_root / INSTALLED_SCRIPT
    ready_url = f"{base}/health/ready"
    log = tmp_path / "server.log"
    with open(log, "wb") as log_file:
        process = subprocess.Popen(
            [str(image_root / INSTALLED_BINARY), "serve"], env=env,
            stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while healthcheck(script, ready_url, client="tcp").returncode != 0:
            assert process.poll() is None, f"signet serve exited {process.returncode}:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"not ready within {START_TIMEOUT} s:\n{log.read_text()}"
            time.sleep(0.25)

        ready = requests.get(ready_url, timeout=TIMEOUT)
        assert ready.status_code == 200 and ready.json()["status"] == "ready", ready.text
        assert requests.get(f"{base}/health/live", timeout=TIMEOUT).status_code == 200
        # The admin listener (the image's second port) has /metrics; the public port has not.
        metrics = requests.get(f"http://127.0.0.1:{admin_port}/metrics", timeout=TIMEOUT)
        assert metrics.status_code == 200 and "signet_build_info" in metrics.text, metrics.text[:300]
        assert requests.get(f"{base}/metrics", timeout=TIMEOUT).status_code == 404

        for client in clients():
            ok = healthcheck(script, ready_url, client=client)
            assert ok.returncode == 0, (client, ok.stderr)
            # Without a URL it follows SIGNET_PORT, as in the image.
            default = healthcheck(script, client=client, SIGNET_PORT=str(port))
            assert default.returncode == 0, (client, default.stderr)
            # Anything but 200 fails: a path that answers 404, a port nobody listens on.
            missing = healthcheck(script, f"{base}/health/no-such-check", client=client)
            assert missing.returncode != 0, client
            assert "404" in missing.stderr, (client, missing.stderr)
            closed = healthcheck(script, f"http://127.0.0.1:{closed_port}/health/ready", client=client)
            assert closed.returncode != 0, client

        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, log.read_text()
        assert healthcheck(script, ready_url, client="tcp").returncode != 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # The store is in the data folder the image declares as its volume.
    assert (image_root / INSTALLED_DATA / "signet.sqlite").is_file()


# ---- the example configuration -----------------------------------------------------------


def test_example_config_is_valid_as_shipped():
    """As shipped, the file knows no issuer: config check makes serve's own checks and refuses
    plain HTTP on 0.0.0.0 (the image must not start wrongly); given the site's issuer and proxy,
    as the Dockerfile's users do through variables, it is valid."""
    refused = config_check(clean_env(), "--config", str(EXAMPLE_CONFIG))
    assert refused.returncode == 1
    assert "TLS is required outside loopback" in refused.stderr
    assert "unknown key" not in refused.stderr
    # Off loopback SMS codes need the gateway: without it, the refusal names sms.webhookUrl.
    site = dict(SIGNET_ISSUER="https://id.example.com", SIGNET_TRUSTED_PROXIES="10.0.0.10")
    no_gateway = config_check(clean_env(**site), "--config", str(EXAMPLE_CONFIG))
    assert no_gateway.returncode == 1
    assert "sms.webhookUrl" in no_gateway.stderr and "sms.outbox" in no_gateway.stderr, no_gateway.stderr
    result = config_check(
        clean_env(**site, SIGNET_SMS_WEBHOOK_URL="https://sms.example.com/signet", SIGNET_SMS_WEBHOOK_SECRET=secrets.token_hex(16)),
        "--config", str(EXAMPLE_CONFIG))
    assert result.returncode == 0, result.stderr
    assert "configuration is valid" in result.stdout


def test_example_config_optional_settings_are_valid(tmp_path):
    """Every "#key: value" switched on, secret files made: still valid, every key known."""
    text, count = uncomment_optional_settings(EXAMPLE_CONFIG.read_text(encoding="utf-8"))
    assert count >= 10, f"only {count} optional settings found; the convention changed?"
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    referenced = sorted(set(re.findall(r"/run/secrets/([\w.-]+)", text)))
    assert referenced, "the example names no secret file"
    for name in referenced:
        (secrets_dir / name).write_text(secrets.token_hex(32) + "\n")
    full = tmp_path / "signet.yaml"
    full.write_text(text.replace("/run/secrets/", f"{secrets_dir}/"))

    result = config_check(clean_env(), "--config", str(full))
    assert result.returncode == 0, result.stderr
    sources = report_sources(result.stdout)
    for key in ("issuer", "tls.certificate", "tls.key", "trustedProxies", "database", "databasePassword",
                "sms.webhookUrl", "sms.webhookSecret", "admin.token", "dataDir", "clientCertificateHeader"):
        assert sources.get(key, "default") != "default", f"{key} is not set by the example"

    # Secrets only through …File keys; the database URL carries no password.
    leaves = flatten(yaml.safe_load(text))
    for secret in ("databasePassword", "sms.webhookSecret", "admin.token"):
        assert secret not in leaves and f"{secret}File" in leaves, secret
    assert urllib.parse.urlsplit(leaves["database"]).password is None
    assert isinstance(leaves["trustedProxies"], list)


# ---- Dockerfile and .dockerignore --------------------------------------------------------


def test_dockerfile_is_a_two_stage_build_running_the_tested_script():
    instructions = dockerfile_instructions()
    froms = [args for word, args in instructions if word == "FROM"]
    assert len(froms) == 2, froms
    assert re.match(r"swift:6\.(\d+)-bookworm\s+AS\s+build$", froms[0], re.IGNORECASE), froms[0]
    assert int(re.match(r"swift:6\.(\d+)", froms[0]).group(1)) >= 2, "the package needs Swift 6.2 tools"
    assert froms[1] == "debian:bookworm-slim"

    second = max(i for i, (word, _) in enumerate(instructions) if word == "FROM")
    build_stage, runtime = instructions[:second], instructions[second:]
    assert any(w == "RUN" and "scripts/container-build build /out" in a for w, a in build_stage)
    assert ("COPY", "--from=build /out/ /") in runtime

    # Only what the binary needs at run time.
    installs = " ".join(a for w, a in runtime if w == "RUN" and "apt-get install" in a)
    packages = set(installs.split("--no-install-recommends", 1)[1].split("&&")[0].split())
    assert packages == {"ca-certificates", "libcurl4"}, packages

    # A fixed non-root user, used from USER on.
    assert any(w == "RUN" and f"--uid {IMAGE_UID}" in a and "useradd" in a for w, a in runtime)
    users = [a for w, a in runtime if w == "USER"]
    assert users and users[-1] == "signet"
    assert users[-1] not in ("root", "0")

    # /data: given to that user before VOLUME freezes it.
    volume_index = next(i for i, (w, a) in enumerate(runtime) if w == "VOLUME")
    assert runtime[volume_index][1] == "/data"
    assert any(w == "RUN" and "chown signet:signet /data" in a for w, a in runtime[:volume_index])

    healthchecks = [a for w, a in runtime if w == "HEALTHCHECK"]
    assert len(healthchecks) == 1
    command = json.loads(healthchecks[0].split("CMD", 1)[1])
    assert command == ["/" + INSTALLED_SCRIPT, "healthcheck"]

    assert set(" ".join(a for w, a in runtime if w == "EXPOSE").split()) == {"8080", "9090"}
    assert [a for w, a in runtime if w == "ENTRYPOINT"] == ['["signet"]']
    assert [a for w, a in runtime if w == "CMD"] == ['["serve"]']

    env = dockerfile_env()
    assert env == {
        "SIGNET_DATA_DIR": "/data",
        "SIGNET_HOST": "0.0.0.0",
        "SIGNET_LOG_FORMAT": "json",
        "SIGNET_CONFIG": "/" + INSTALLED_CONFIG,
    }
    assert env["SIGNET_DATA_DIR"] == "/" + INSTALLED_DATA


def test_dockerignore_keeps_build_output_history_and_secrets_out():
    patterns = {
        line.strip() for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    for pattern in (".build*", ".git", ".signet", "Tests/python/__pycache__", "secrets"):
        assert pattern in patterns, pattern


# ---- compose.yaml ------------------------------------------------------------------------


def test_compose_file_has_postgres_and_signet():
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    services = compose["services"]
    assert set(services) == {"postgres", "signet"}

    postgres = services["postgres"]
    assert postgres["image"].startswith("postgres:16")
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert postgres["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres-password"
    volume = postgres["volumes"][0].split(":")[0]
    assert volume in compose["volumes"], "postgres keeps its data in a named volume"

    signet = services["signet"]
    assert signet["build"] == "."
    assert signet["depends_on"]["postgres"]["condition"] == "service_healthy"
    env = signet["environment"]
    assert env["SIGNET_DATABASE"] == "postgres://signet@postgres:5432/signet"
    assert env["SIGNET_ISSUER"].startswith("https://")
    # The admin listener is published on the host's loopback only.
    ports = [str(p) for p in signet["ports"]]
    assert "127.0.0.1:9090:9090" in ports
    assert not any(p.endswith(":9090") and not p.startswith("127.0.0.1:") for p in ports)
    assert int(str(env["SIGNET_ADMIN_PORT"])) == 9090 and env["SIGNET_ADMIN_HOST"] == "0.0.0.0"

    # Every secret file a service names is one it mounts, from ./secrets/.
    for name, service in services.items():
        mounted = set(service.get("secrets", []))
        for key, value in service["environment"].items():
            if key.endswith("_FILE") and str(value).startswith("/run/secrets/"):
                assert value.removeprefix("/run/secrets/") in mounted, (name, key)
        for secret in mounted:
            assert compose["secrets"][secret]["file"].startswith("./secrets/")

    # Trusted proxies: the network compose gives the services.
    subnet = compose["networks"]["signet"]["ipam"]["config"][0]["subnet"]
    assert env["SIGNET_TRUSTED_PROXIES"] == subnet

    grace = yaml.safe_load(EXAMPLE_CONFIG.read_text(encoding="utf-8"))["shutdown"]["gracePeriod"]
    assert int(signet["stop_grace_period"].rstrip("s")) > grace


def test_compose_settings_for_signet_are_valid(image_root, tmp_path):
    """The image's variables, then compose's, over the installed file: what `compose up` runs."""
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    for name in compose["secrets"]:
        (secrets_dir / name).write_text(secrets.token_hex(32) + "\n")
    settings = dockerfile_env()
    settings.update({k: str(v) for k, v in compose["services"]["signet"]["environment"].items()})
    settings = {k: v.replace("/run/secrets/", f"{secrets_dir}/") for k, v in settings.items()}
    settings.update(SIGNET_CONFIG=str(image_root / INSTALLED_CONFIG), SIGNET_DATA_DIR=str(tmp_path / "data"))
    result = config_check(clean_env(**settings))
    assert result.returncode == 0, result.stderr
    sources = report_sources(result.stdout)
    assert sources["admin.token"].startswith(f"file {secrets_dir}/admin-token")
    assert sources["databasePassword"].startswith(f"file {secrets_dir}/postgres-password")


# ---- the systemd unit --------------------------------------------------------------------


def test_systemd_unit_runs_serve_sandboxed():
    unit = unit_directives()
    exec_start = shlex.split(unit["Service.ExecStart"][0])
    assert exec_start == ["/usr/local/bin/signet", "serve", "--config", "/etc/signet/signet.yaml"]
    assert unit["Service.StateDirectory"] == ["signet"]
    assert "SIGNET_DATA_DIR=/var/lib/signet" in unit["Service.Environment"]
    assert unit["Service.KillSignal"] == ["SIGTERM"]
    assert unit["Service.Restart"] == ["on-failure"]
    grace = yaml.safe_load(EXAMPLE_CONFIG.read_text(encoding="utf-8"))["shutdown"]["gracePeriod"]
    assert int(unit["Service.TimeoutStopSec"][0]) > grace
    expected = {
        "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
        "PrivateDevices": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
        "ProtectKernelLogs": "yes", "ProtectControlGroups": "yes", "RestrictNamespaces": "yes",
        "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "SystemCallFilter": "@system-service",
        "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "CapabilityBoundingSet": "",
    }
    for key, value in expected.items():
        assert unit.get(f"Service.{key}") == [value], key
    assert "admin-token:/etc/signet/credentials/admin-token" in unit["Service.LoadCredential"]
    assert "SIGNET_ADMIN_TOKEN_FILE=%d/admin-token" in unit["Service.Environment"]


def test_systemd_unit_settings_are_valid(tmp_path):
    """The unit's SIGNET_ variables (credentials in a stand-in %d) over the example file."""
    unit = unit_directives()
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    for entry in unit["Service.LoadCredential"]:
        name = entry.split(":", 1)[0]
        (credentials / name).write_text(secrets.token_hex(32) + "\n")
    settings = {}
    for entry in unit["Service.Environment"]:
        name, _, value = entry.partition("=")
        settings[name] = value.replace("%d", str(credentials))
    settings["SIGNET_DATA_DIR"] = str(tmp_path / "state")
    # The site's issuer and proxy are the operator's to add (the unit's comments say so); without
    # them config check, like serve, refuses plain HTTP on 0.0.0.0.
    refused = config_check(clean_env(**settings), "--config", str(EXAMPLE_CONFIG))
    assert refused.returncode == 1 and "TLS is required outside loopback" in refused.stderr
    settings.update(SIGNET_ISSUER="https://id.example.com", SIGNET_TRUSTED_PROXIES="127.0.0.1")
    # And the SMS gateway (the unit's commented credential): without it, refused naming sms.webhookUrl.
    no_gateway = config_check(clean_env(**settings), "--config", str(EXAMPLE_CONFIG))
    assert no_gateway.returncode == 1 and "sms.webhookUrl" in no_gateway.stderr, no_gateway.stderr
    (credentials / "sms-webhook-secret").write_text(secrets.token_hex(32) + "\n")
    settings.update(SIGNET_SMS_WEBHOOK_URL="https://sms.example.com/signet", SIGNET_SMS_WEBHOOK_SECRET_FILE=str(credentials / "sms-webhook-secret"))
    result = config_check(clean_env(**settings), "--config", str(EXAMPLE_CONFIG))
    assert result.returncode == 0, result.stderr
    assert report_sources(result.stdout)["admin.token"].startswith(f"file {credentials}/admin-token")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_unit_passes_systemd_analyze_verify(tmp_path):
    # verify checks that ExecStart exists: point it at the binary under test.
    text = UNIT.read_text(encoding="utf-8").replace("ExecStart=/usr/local/bin/signet", f"ExecStart={signet_binary()}")
    copy = tmp_path / "signet.service"
    copy.write_text(text)
    result = run(["systemd-analyze", "verify", copy], timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "signet.service" not in result.stderr, result.stderr
