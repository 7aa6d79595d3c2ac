#!/usr/bin/env python3
"""A real allotd under a crowd of slow and idle clients on loopback: N idle connections, M parked
long polls (/v1/events?wait=30, spread over tokens), K clients sending a request head one byte
every 3 s. Meanwhile, one request at a time: GET /healthz and POST /v1/jobs, R times each, on a
fresh connection each; p50/p99/max latency, and errors (a timeout counts). Peak RSS (VmHWM) and
threads of allotd at the end.

usage: slow_clients.py ALLOTD OUT_DIR [--idle 1000] [--long-polls 300] [--slow 300] [--rounds 20]
"""
import argparse, json, os, resource, shutil, socket, subprocess, sys, threading, time, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("allotd")
ap.add_argument("out")
ap.add_argument("--idle", type=int, default=1000)
ap.add_argument("--long-polls", type=int, default=300)
ap.add_argument("--slow", type=int, default=300)
ap.add_argument("--rounds", type=int, default=20)
a = ap.parse_args()
OUT = os.path.abspath(os.path.join(a.out, "slow-clients"))
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port = 19000 + os.getpid() % 1000
url = f"http://127.0.0.1:{port}"


def call(method, path, body=None, token=None, timeout=40):
    req = urllib.request.Request(url + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {token or admin}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


with open(f"{OUT}/tenants.yaml", "w") as f:
    f.write("tenants:\n  - {path: bench}\n")
fleet = f"{OUT}/fleet.yaml"
with open(fleet, "w") as f:
    f.write("fleet:\n  - {prefix: n-, count: 4, zone: z, rack: r, cpu: 64, memory: 512Gi, gpus: {model: H100-80GB, count: 8}}\n")
allotd = subprocess.Popen([a.allotd, "--listen", f"127.0.0.1:{port}", "--data", f"{OUT}/data", "--tenants",
                           f"{OUT}/tenants.yaml", "--simulated-fleet", fleet], stderr=open(f"{OUT}/allotd.log", "w"))
socks = []
stop = threading.Event()
try:
    end = time.time() + 30
    while not os.path.exists(f"{OUT}/data/admin-token") and time.time() < end:
        time.sleep(0.05)
    time.sleep(0.2)
    admin = open(f"{OUT}/data/admin-token").read().strip()
    while time.time() < end:
        try:
            if call("GET", "/readyz")[0] == 200:
                break
        except Exception:
            pass
        time.sleep(0.05)
    tokens = []
    for i in range((a.long_polls + 99) // 100):
        code, tok = call("POST", "/v1/tokens", {"principal": f"watcher{i}", "role": "member", "scope": "bench"})
        assert code == 201, tok
        tokens.append(tok["token"])
    since = call("GET", "/v1/events?since=0")[1]["last"]
    t0 = time.time()
    for _ in range(a.idle):
        socks.append(connect())
    for i in range(a.long_polls):
        s = connect()
        s.sendall(f"GET /v1/events?since={since}&wait=30 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tokens[i % len(tokens)]}\r\n\r\n".encode())
        socks.append(s)
    slow = []
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
    for _ in range(a.slow):
        s = connect()
        s.sendall(head[:1])
        slow.append(s)
        socks.append(s)

    def drip():
        at = 1
        while not stop.wait(3):
            for s in slow:
                try:
                    s.sendall(head[at:at + 1])
                except OSError:
                    pass
            at += 1

    threading.Thread(target=drip, daemon=True).start()
    opened = time.time() - t0
    health, submit, errors = [], [], 0
    for r in range(a.rounds):
        t = time.time()
        try:
            code, _ = call("GET", "/healthz", timeout=10)
            health.append((time.time() - t) * 1000)
            errors += code != 200
        except Exception:
            errors += 1
        t = time.time()
        try:
            code, body = call("POST", "/v1/jobs", {"name": f"j{r}", "tenant": "bench", "duration": "1h", "tasks": {"gpus": 1}},
                              timeout=10)
            submit.append((time.time() - t) * 1000)
            if code != 201:
                errors += 1
                print(f"submission answered {code}: {body}", file=sys.stderr)
        except Exception:
            errors += 1
        time.sleep(0.5)
    with open(f"/proc/{allotd.pid}/status") as f:
        status = {l.split(":")[0]: l.split(":")[1].strip() for l in f}
    print(f"crowd: {a.idle} idle, {a.long_polls} long polls, {a.slow} slow heads (opened in {opened:.1f} s)")
    print(f"/healthz   p50 {pct(health, 50):.1f} ms  p99 {pct(health, 99):.1f} ms  max {max(health or [float('nan')]):.1f} ms")
    print(f"submission p50 {pct(submit, 50):.1f} ms  p99 {pct(submit, 99):.1f} ms  max {max(submit or [float('nan')]):.1f} ms")
    print(f"errors {errors} of {2 * a.rounds}   allotd peak RSS {int(status['VmHWM'].split()[0]) / 1024:.0f} MiB, "
          f"threads {status['Threads']}")
    sys.exit(1 if errors or not health else 0)
finally:
    stop.set()
    for s in socks:
        s.close()
    allotd.terminate()
    allotd.wait(timeout=30)
