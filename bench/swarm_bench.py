#!/usr/bin/env python3
"""Many simulated node agents on one real allotd (issue 19): bench/load/agent_swarm against allotd,
with a job stream, and allotd killed (SIGKILL) mid-run and restarted on its journal.

For each N in --agents: a fresh allotd (--pass-interval 1s, SQLite journal), a node token, and
agent_swarm registering N nodes of 8 H100s; once they are in, the job stream is submitted through
the API: --jobs-per-day compressed --compress times (30,000 a day compressed 24× is ~8.3 jobs/s
for 6,250 nodes; scaled by N/6,250 for smaller fleets, so every node sees the same load, but at
least --min-rate 1 job/s, so that a small fleet's run measures something), 1, 2, 4
or 8 GPUs each (60/20/10/10 %), each running `sleep S` for S uniform in --task-seconds (the
declared duration the swarm "runs"). With --restart, allotd is killed at the middle of the
measured window and started again on the same data; then:
  - every node must be ready again (each agent reconnected, or fenced and registered again);
  - no task run may have started twice (the swarm's record: each (job, task, run) once);
  - submissions keep going (failures during the outage are retried).
Prints the swarm's line per N, the checks, and allotd's peak RSS.

usage: swarm_bench.py BUILD_DIR OUT_DIR [--agents 100,1000] [--duration 60] [--restart]
       [--jobs-per-day 30000] [--compress 24] [--task-seconds 5-60] [--port 23600]
"""
import argparse, http.client, json, os, random, shutil, signal, subprocess, sys, threading, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cluster import hwm, wait  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("out")
ap.add_argument("--agents", default="100,1000")
ap.add_argument("--duration", type=float, default=60)
ap.add_argument("--restart", action="store_true")
ap.add_argument("--jobs-per-day", type=float, default=30000)
ap.add_argument("--compress", type=float, default=24)
ap.add_argument("--task-seconds", default="5-60")
ap.add_argument("--port", type=int, default=23600)
ap.add_argument("--min-rate", type=float, default=1.0, help="jobs/s at least, however small the fleet")
ap.add_argument("--ramp", type=float, default=0, help="seconds over which agents register (default N/250)")
ap.add_argument("--threads", type=int, default=0, help="the swarm's threads (default: 1 per 2,000 agents)")
ap.add_argument("--allotd", action="append", default=[],
                help="an allotd binary to measure (repeatable: each N is run with each, by turns, for a before/after on "
                     "one machine at one time); default BUILD/allotd")
a = ap.parse_args()
BUILD = os.path.abspath(a.build)
ALLOTDS = [os.path.abspath(x) for x in a.allotd] or [f"{BUILD}/allotd"]
lo_s, hi_s = (float(x) for x in a.task_seconds.split("-"))
if a.restart and a.duration < 40:  # before anything is started
    sys.exit("--restart needs --duration 40 or more: the check looks 17 s after the restart")


class Allotd:
    def __init__(self, out, port, binary):
        self.out, self.port, self.binary = out, port, binary
        self.url = f"http://127.0.0.1:{port}"
        with open(f"{out}/tenants.yaml", "w") as f:
            f.write("tenants:\n" + "".join(f"  - {{path: t{i}}}\n" for i in range(4)))
        self.peak_kib = 0
        self.start()
        self.admin = open(f"{out}/data/admin-token").read().strip()
        code, tok = self.call("POST", "/v1/tokens", {"principal": "*", "role": "node", "scope": ""})
        assert code == 201, tok
        with open(f"{out}/node-token", "w") as f:
            f.write(tok["token"] + "\n")

    def start(self):
        self.proc = subprocess.Popen([self.binary, "--listen", f"127.0.0.1:{self.port}", "--data", f"{self.out}/data",
                                      "--tenants", f"{self.out}/tenants.yaml", "--pass-interval", "1s"],
                                     stderr=open(f"{self.out}/allotd.log", "a"))
        wait(lambda: os.path.exists(f"{self.out}/data/admin-token"), 30, "allotd's admin token")
        self.admin = open(f"{self.out}/data/admin-token").read().strip()
        wait(lambda: self.call("GET", "/readyz")[0] == 200, 60, "allotd ready")

    def kill(self):
        self.peak_kib = max(self.peak_kib, hwm(self.proc.pid))
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.peak_kib = max(self.peak_kib, hwm(self.proc.pid))
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def call(self, method, path, body=None, timeout=30):
        req = urllib.request.Request(self.url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {getattr(self, 'admin', '')}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")
        except OSError as e:
            return 0, str(e)


def submit_stream(d, rate, stop, counts):
    """Submits jobs at `rate` per second (Poisson arrivals) until `stop` is set; retries a job
    refused for want of allotd (restarting)."""
    rng = random.Random(42)
    i, next_at = 0, time.time()
    conn = None
    while not stop.is_set():
        next_at += rng.expovariate(rate)
        time.sleep(max(0, next_at - time.time()))
        gpus = rng.choices([1, 2, 4, 8], [60, 20, 10, 10])[0]
        secs = round(rng.uniform(lo_s, hi_s), 1)
        job = {"name": f"s-{i}", "tenant": f"t{i % 4}", "command": ["sleep", str(secs)], "duration": f"{int(secs) + 1}s",
               "tasks": {"gpus": gpus, "cpu": gpus * 8, "memory": f"{gpus * 64}Gi"}}
        body = json.dumps(job)
        while not stop.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
                conn.request("POST", "/v1/jobs", body, {"Authorization": f"Bearer {d.admin}", "Content-Type": "application/json"})
                r = conn.getresponse()
                r.read()
                if r.status == 201:
                    counts["submitted"] += 1
                    break
                if r.status == 409:  # a retry of one that was journaled before the answer was lost
                    counts["submitted"] += 1
                    break
                counts["refused"] += 1
                time.sleep(0.2)
            except OSError:
                conn = None
                counts["retried"] += 1
                time.sleep(0.2)
        i += 1


def run(n, binary, tag):
    out = os.path.abspath(os.path.join(a.out, f"swarm-{n}{tag}"))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    port = a.port + n % 100
    d = Allotd(out, port, binary)
    ramp = a.ramp or max(2.0, n / 250)
    swarm_cmd = [f"{BUILD}/bench/agent_swarm", "--server", d.url, "--token-file", f"{out}/node-token", "--agents", str(n),
                 "--duration", f"{a.duration}s", "--gpus-per-node", "8", "--ramp", f"{ramp}s", "--report", f"{out}/swarm.json",
                 "--threads", str(a.threads or max(1, (n + 1999) // 2000))]
    print("  $ " + " ".join(swarm_cmd[:1] + [x.replace(out, "OUT") for x in swarm_cmd[1:]]), flush=True)
    swarm = subprocess.Popen(swarm_cmd, stdout=subprocess.PIPE, stderr=open(f"{out}/swarm.log", "w"), text=True)
    wait(lambda: "measuring" in open(f"{out}/swarm.log").read() or swarm.poll() is not None, 2 * ramp + 60, "the swarm registered")
    t0 = time.time()
    rate = max(a.min_rate, a.jobs_per_day / 86400 * a.compress * n / 6250)
    stop, counts = threading.Event(), {"submitted": 0, "refused": 0, "retried": 0}
    submitter = threading.Thread(target=submit_stream, args=(d, rate, stop, counts), daemon=True)
    submitter.start()
    restart = {}
    if a.restart:
        time.sleep(max(0, t0 + a.duration / 2 - time.time()))
        d.kill()
        down = time.time()
        d.start()
        restart["down_s"] = time.time() - down

        # Past the node timeout (15 s) after the restart, every node must still be ready and heard
        # from within the last 3 s: its agent reconnected (a node whose agent was not heard from
        # is lost at the timeout, its jobs requeued).
        time.sleep(max(0, down + 17 - time.time()))
        code, body = d.call("GET", "/v1/nodes")
        ours = [x for x in body["nodes"] if x["name"].startswith("swarm-")] if code == 200 else []
        heard = [x for x in ours if x.get("condition") == "ready" and (x.get("agent") or {}).get("heartbeat_age_s") is not None
                 and x["agent"]["heartbeat_age_s"] <= 3]
        restart["heard"] = len(heard)
    line = swarm.stdout.read().strip()
    swarm.wait()
    stop.set()
    submitter.join(5)
    d.stop()
    rep = json.load(open(f"{out}/swarm.json"))
    print(f"  {line}")
    print(f"  jobs submitted {counts['submitted']} at {rate:.2f}/s (refused {counts['refused']}, retried {counts['retried']}); "
          f"task runs started {rep['tasks_started']}, exited {rep['tasks_exited']}, killed {rep['tasks_killed']}, "
          f"preempted {rep['tasks_preempted']}; heartbeat p50 {rep['heartbeat_ms']['p50']:.1f} ms max {rep['heartbeat_ms']['max']:.0f} ms; "
          f"assignment p50 {rep['assignment_ms']['p50']:.1f} ms max {rep['assignment_ms']['max']:.0f} ms; "
          f"registrations {rep['registrations']}, fences {rep['fences']}, reconnects {rep['reconnects']}; "
          f"the swarm used {rep['swarm_cpu_percent']:.0f}% of a core on {rep['threads']} thread(s)")
    print(f"  allotd peak RSS (VmHWM, both lives) {d.peak_kib // 1024} MiB")
    # The robust figure on a shared machine: allotd's CPU time per heartbeat (its CPU share over the
    # window is what the other engineers' builds leave it; the work per heartbeat is not).
    if rep["heartbeats_per_s"] > 0:
        print(f"  allotd CPU per heartbeat {rep['allotd_cpu_percent'] / 100 / rep['heartbeats_per_s'] * 1000:.3f} ms "
              f"({rep['allotd_cpu_percent']:.0f}% of a core at {rep['heartbeats_per_s']:.0f} heartbeats/s); "
              f"load average at the end {' '.join(open('/proc/loadavg').read().split()[:3])}")
    for kind, what in rep["first_errors"].items():
        print(f"  first {kind}: {what}")
    ok = swarm.returncode == 0 and rep["tasks_started"] > 0
    if a.restart:
        twice = [k for k, v in rep["starts"].items() if v["times"] > 1]
        print(f"  restart: allotd killed and back in {restart['down_s']:.1f} s; 17 s later {restart['heard']} of {n} nodes ready and "
              f"heard from within 3 s; agents fenced {rep['fences']}; task runs started twice: {len(twice)}"
              + (f" ({twice[:5]})" if twice else ""))
        ok = ok and not twice and restart["heard"] == n
    if rep["tasks_started"] == 0:
        print("  no task run started: nothing measured")
    return ok


ok = True
for n in [int(x) for x in a.agents.split(",")]:
    for k, binary in enumerate(ALLOTDS):
        print(f"== {n} agents ({n * 8} GPUs), {a.duration:.0f} s measured" + (", allotd killed and restarted mid-run" if a.restart else "")
              + (f", allotd {binary}" if len(ALLOTDS) > 1 else ""), flush=True)
        ok = run(n, binary, f"-{k}" if len(ALLOTDS) > 1 else "") and ok
sys.exit(0 if ok else 1)
