#!/usr/bin/env python3
"""Black-box check of the SMS try limit under parallel, pipelined requests.

Starts `signet serve` (the binary given) on a free loopback port with a fresh data folder,
runs a native login for the demo user up to the SMS step, then sends WRONG codes at once:
CONNECTIONS connections, each pipelining PER_CONNECTION requests. Prints how the server
answered, how many tries the stored login recorded, and whether the right code is still
accepted afterwards (it must not be: at most 3 tries per code).

    python3 scripts/parallel-codes.py .build/debug/signet [CONNECTIONS] [PER_CONNECTION] [ROUNDS]

With ROUNDS > 1 it plays an attacker instead: each round is a fresh login whose burst carries
the right code as the last request of one connection (behind the wrong ones), and it counts
the rounds in which the right code finished the login. With at most 3 tries per code it should
win only when it happens to be among the first 3 tries checked.
"""
import base64, collections, hashlib, json, os, shutil, socket, sqlite3, subprocess, sys, tempfile, threading, time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, path, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def pipelined(port, bodies, answers):
    """Sends every body on one connection before reading any answer."""
    raw = b"".join(
        f"POST /login/native/sms_code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(b)}\r\n\r\n".encode() + b
        for b in bodies)
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(raw)
        data = b""
        while data.count(b"HTTP/1.1 ") < len(bodies) or not data.rstrip().endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    for part in data.split(b"HTTP/1.1 ")[1:]:
        status = int(part[:3])
        body = part.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in part else b"{}"
        try:
            error = json.loads(body).get("error", "ok")
        except ValueError:
            error = "?"
        answers.append((status, error))


def sms_step(port, data, demo):
    """A fresh native login for the demo user at the SMS step: its step fields and the code sent."""
    verifier = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    status, started = post(port, "/login/native/start", {
        "response_type": "code", "client_id": demo["native_client_id"], "redirect_uri": demo["native_redirect_uri"], "scope": "openid",
        "state": "s", "nonce": "n", "code_challenge": challenge, "code_challenge_method": "S256"})
    step = {"login_session": started["login_session"], "client_id": demo["native_client_id"]}
    post(port, "/login/native/scenario", {**step, "scenario": "s_mobile_authn_un_pwd_sms"})
    status, answer = post(port, "/login/native/username_password", {**step, "username": demo["username"], "password": demo["password"]})
    assert answer.get("next_step") == "sms_code", answer
    lines = open(os.path.join(data, "outbox.jsonl")).read().strip().splitlines()
    return step, json.loads(lines[-1])["body"].split("#")[-1].strip()


def main():
    binary = os.path.abspath(sys.argv[1])
    connections = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    per_connection = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    data = tempfile.mkdtemp(prefix="signet-parallel-")
    port = free_port()
    server = subprocess.Popen([binary, "serve", "--data-dir", data, "--port", str(port), "--password-hash-cost", "4", "--log-level", "error"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              # Many rounds for one account: lift the per-account SMS budgets (not what is measured here).
                              env={**os.environ, "SIGNET_ACCOUNT_SEND_LIMIT": "100000", "SIGNET_ACCOUNT_WRONG_CODE_LIMIT": "100000"})
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/.well-known/openid-configuration", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        demo = json.load(open(os.path.join(data, "demo.json")))
        won = 0
        for round_number in range(rounds):
            step, code = sms_step(port, data, demo)
            wrong = "111111" if code == "000000" else "000000"
            answers = []
            body = json.dumps({**step, "code": wrong}).encode()
            batches = [[body] * per_connection for _ in range(connections)]
            if rounds > 1:
                batches[-1][-1] = json.dumps({**step, "code": code}).encode()
            threads = [threading.Thread(target=pipelined, args=(port, batch, answers)) for batch in batches]
            for thread in threads: thread.start()
            for thread in threads: thread.join()
            if rounds > 1:
                won += sum(1 for status, error in answers if status == 200)
                continue
            row = sqlite3.connect(os.path.join(data, "signet.sqlite")).execute("SELECT data FROM signet_login_sessions").fetchone()
            sms = json.loads(row[0]).get("sms", {}) if row else {}
            tries = sms.get("attempts", sms.get("wrongAttempts"))
            status, right = post(port, "/login/native/sms_code", {**step, "code": code})
            print(f"wrong codes sent: {connections * per_connection} ({connections} connections x {per_connection} pipelined)")
            print("answers:", dict(collections.Counter(f"{s} {e}" for s, e in answers)))
            print(f"tries recorded in the stored login: {tries}")
            print(f"right code afterwards: {status} {right.get('error') or right.get('next_step')}")
        if rounds > 1:
            print(f"right code sent last on one of {connections} connections x {per_connection}: finished the login in {won} of {rounds} rounds")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
