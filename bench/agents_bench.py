#!/usr/bin/env python3
"""Node agents end to end: a real allotd and two real allot-agents (8 fake H100s each, bubblewrap,
cgroups) on loopback.

  (i)  assignment-to-process-start latency: one 1-GPU command job at a time on an idle fleet, on
       the host's root and in a busybox image by turns; from the API's 201 to the moment the task's
       first act (making a file) happened, by the file's mtime; p50/p99.
  (ii) throughput of short jobs: N 1-GPU jobs running /bin/true, submitted back to back; from the
       first submit to the last one finished, jobs/s.
Peak RSS (VmHWM) of allotd and each agent at the end.

usage: agents_bench.py BUILD_DIR OUT_DIR [--latency-jobs 50] [--jobs 500]
"""
import argparse, json, os, shutil, signal, subprocess, sys, time, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("out")
ap.add_argument("--latency-jobs", type=int, default=50)
ap.add_argument("--jobs", type=int, default=500)
a = ap.parse_args()
B = os.path.abspath(a.build)
OUT = os.path.abspath(os.path.join(a.out, "agents"))
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
port = 18000 + os.getpid() % 1000
url = f"http://127.0.0.1:{port}"
procs = []


def call(method, path, body=None, token=None):
    req = urllib.request.Request(url + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {token or admin}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def wait(pred, seconds, what):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return
        time.sleep(0.02)
    sys.exit(f"timed out: {what}")


def hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))


with open(f"{OUT}/tenants.yaml", "w") as f:
    f.write("tenants:\n  - {path: bench}\n")
allotd = subprocess.Popen([f"{B}/allotd", "--listen", f"127.0.0.1:{port}", "--data", f"{OUT}/data", "--tenants",
                           f"{OUT}/tenants.yaml", "--pass-interval", "1s"], stderr=open(f"{OUT}/allotd.log", "w"))
procs.append(allotd)
try:
    wait(lambda: os.path.exists(f"{OUT}/data/admin-token"), 20, "allotd's admin token")
    time.sleep(0.2)
    admin = open(f"{OUT}/data/admin-token").read().strip()
    wait(lambda: call("GET", "/readyz")[0] == 200, 20, "allotd ready")
    code, tok = call("POST", "/v1/tokens", {"principal": "*", "role": "node", "scope": ""})
    assert code == 201, tok
    with open(f"{OUT}/node-token", "w") as f:
        f.write(tok["token"] + "\n")
    agents = {}
    for node in ("bench-a", "bench-b"):
        home = f"{OUT}/{node}"
        os.makedirs(home)
        with open(f"{home}/nvml.conf", "w") as f:
            f.write('driver version=550.54.15\ngpus count=8 name="NVIDIA H100 80GB HBM3"\nnvswitch count=4\n')
        env = dict(os.environ, FAKE_NVML_CONFIG=f"{home}/nvml.conf")
        subprocess.run(["scripts/fake-gpu-node", f"{home}/gpu"], check=True)
        agents[node] = subprocess.Popen(
            [f"{B}/allot-agent", "--server", url, "--token-file", f"{OUT}/node-token", "--node", node, "--nvml",
             f"{B}/libnvidia-ml-fake.so", "--work-dir", f"{home}/work", "--cpu", "16", "--memory", "64Gi",
             "--cgroup-group", f"allot-bench-{os.getpid()}-{node}", "--device-root", f"{home}/gpu/dev",
             "--proc-driver-root", f"{home}/gpu/proc"], env=env, stderr=open(f"{home}/agent.log", "w"))
        procs.append(agents[node])
    for node in agents:
        wait(lambda: call("GET", f"/v1/nodes/{node}")[1].get("condition") == "ready", 30, f"{node} ready")

    def state(name):
        return call("GET", f"/v1/jobs/{name}")[1].get("state")

    # (i) latency, one job at a time, alternating a job on the host's root with one in a busybox
    # image (scripts/busybox-image): the task's first act makes a file, whose mtime is the moment.
    subprocess.run(["scripts/busybox-image", f"{OUT}/image"], check=True, stdout=subprocess.DEVNULL)
    lat = {"host root": [], "image": []}
    for i in range(a.latency_jobs):
        for kind in lat:
            name = f"lat-{i}-{'img' if kind == 'image' else 'host'}"
            job = {"name": name, "tenant": "bench", "tasks": {"gpus": 1, "cpu": 1, "memory": "64Mi"},
                   "command": ["/bin/sh", "-c", f": > started-{name}"]}
            if kind == "image":
                job["image"] = f"{OUT}/image/rootfs"
            code, body = call("POST", "/v1/jobs", job)
            t0 = time.time()
            assert code == 201, body
            wait(lambda: state(name) in ("finished", "failed"), 30, name)
            assert state(name) == "finished", call("GET", f"/v1/jobs/{name}")[1]
            marks = [f"{OUT}/{n}/work/tenants/bench/work/started-{name}" for n in agents]
            t1 = next(os.stat(m).st_mtime_ns / 1e9 for m in marks if os.path.exists(m))
            lat[kind].append(t1 - t0)
    for kind, v in lat.items():
        v.sort()
        pct = lambda p: v[min(len(v) - 1, int(p / 100 * len(v)))] * 1000
        print(f"latency ({kind}), 201 to the task's first instruction over {len(v)} jobs: p50 {pct(50):.0f} ms, "
              f"p99 {pct(99):.0f} ms, max {v[-1] * 1000:.0f} ms")

    # (ii) throughput of short jobs.
    t0 = time.time()
    for i in range(a.jobs):
        code, body = call("POST", "/v1/jobs", {"name": f"t-{i}", "tenant": "bench", "command": ["/bin/true"],
                                               "tasks": {"gpus": 1, "cpu": 1, "memory": "64Mi"}})
        assert code == 201, body
    submitted = time.time() - t0

    def done():
        jobs, after = [], None
        while True:
            code, page = call("GET", "/v1/jobs?limit=1000" + (f"&after={after}" if after is not None else ""))
            jobs += page["jobs"]
            after = page.get("next_after")
            if after is None:
                break
        t = [j for j in jobs if j["name"].startswith("t-")]
        return sum(j["state"] in ("finished", "failed") for j in t), sum(j["state"] == "failed" for j in t)

    wait(lambda: done()[0] == a.jobs, 600, "all throughput jobs")
    wall = time.time() - t0
    print(f"throughput: {a.jobs} one-GPU /bin/true jobs on 2 agents x 8 GPUs: submitted in {submitted:.1f} s, "
          f"all ended in {wall:.1f} s = {a.jobs / wall:.1f} jobs/s ({done()[1]} failed)")
    print(f"peak RSS (VmHWM): allotd {hwm(allotd.pid) // 1024} MiB; agents " +
          ", ".join(f"{n} {hwm(p.pid) // 1024} MiB" for n, p in agents.items()))
finally:
    for p in reversed(procs):
        p.send_signal(signal.SIGTERM)
    for p in reversed(procs):
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
