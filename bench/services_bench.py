#!/usr/bin/env python3
"""Inference services end to end (docs/services.md): a real allotd and two real allot-agents (8
fake H100s each, bubblewrap, cgroups) on loopback, one service of replicas that run until a
"stop-<slot>" file appears in their directory and report the number in their "load" file through
ALLOT_LOAD_FILE.

  (i)  replacement: replicas' tasks exit with code 3, one replica at a time (each its first
       failure, which is restarted at once; a crash loop's back-off is docs/services.md's); measured
       from the moment the bench makes it exit to the moment GET /v1/services/NAME shows that
       replica running again with its restart counted.
  (ii) scaling: an autoscaled service (target 10 per replica, min 1, max 4) at a load of 10 on its
       one replica; the load doubles to 20; measured from the doubling to the second replica
       running. Then the load drops to 0 and the count must fall back to 1.
Goal (issue 18): a failed replica replaced and running within 5 s; a doubled load answered by a
new replica within 10 s. Prints one line with the figures and the peak RSS of allotd and the
agents; exits non-zero if it measured nothing or a goal was missed.

usage: services_bench.py BUILD_DIR OUT_DIR [--failures 10] [--doublings 3]
"""
import argparse, os, shutil, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cluster import Cluster, hwm, wait  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("out")
ap.add_argument("--failures", type=int, default=10)
ap.add_argument("--doublings", type=int, default=3)
a = ap.parse_args()
OUT = os.path.abspath(os.path.join(a.out, "services"))
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
NODES = ("gpu-a", "gpu-b")
REPLICA = ("while [ ! -f stop-$ALLOT_REPLICA ]; do [ -f load ] && cat load >> \"$ALLOT_LOAD_FILE\"; sleep 0.2; done; "
           "rm -f stop-$ALLOT_REPLICA; exit 3")


def task_dir(node):
    return f"{OUT}/{node}/work/tenants/serve/work"


def load(value):
    """The load every replica reports from now (each node's replicas read their node's file)."""
    for node in NODES:
        os.makedirs(task_dir(node), exist_ok=True)
        with open(f"{task_dir(node)}/load.tmp", "w") as f:
            f.write(f"{value}\n")
        os.rename(f"{task_dir(node)}/load.tmp", f"{task_dir(node)}/load")


load(10)
# allotd on 21400-21499 (Cluster adds pid % 1000 to the base; this keeps it within the range).
with Cluster(a.build, OUT, ["serve"], port_base=21400 - os.getpid() % 1000 + os.getpid() % 100) as cluster:
    call = cluster.call
    agents = [cluster.start_agent(n) for n in NODES]

    def service(name):
        return call("GET", f"/v1/services/{name}")[1]

    def replica(name, slot):
        return next((r for r in service(name).get("replicas", []) if r["slot"] == slot), {})

    def create(body):
        code, reply = call("POST", "/v1/jobs", dict(body, tenant="serve", kind="service",
                                                     command=["/bin/sh", "-c", REPLICA], tasks={"gpus": 1, "cpu": 1}))
        assert code == 201, reply

    # (i) replacement of failed replicas: the first failure of each replica restarts at once.
    replicas = max(a.failures, 2)
    create({"name": "web", "replicas": replicas, "spread": "none"})
    wait(lambda: service("web").get("running") == replicas, 60, "web's replicas running")
    replaced = []
    for slot in range(a.failures):
        r = replica("web", slot)
        t0 = time.time()
        open(f"{task_dir(r['node'])}/stop-{slot}", "w").close()
        wait(lambda: (lambda x: x.get("restarts") == 1 and x.get("state") == "running")(replica("web", slot)), 30,
             f"replica {slot} running again")
        replaced.append(time.time() - t0)
    call("DELETE", "/v1/services/web")

    # (ii) a doubled load: 10 -> 20 at a target of 10 per replica.
    create({"name": "chat", "replicas": 1, "min_replicas": 1, "max_replicas": 4,
            "autoscale": {"target": 10, "stable_window": "20s", "panic_window": "3s", "scale_down_delay": "5s"}})
    # Each replica reports the file's number, so the total follows the count: the load goes to 0
    # until the service is back at one replica, then to 10 (one replica's worth), then doubles.
    answered = []
    for k in range(a.doublings):
        load(0)
        wait(lambda: service("chat").get("desired") == 1 and service("chat").get("running") == 1, 120, f"round {k}: one replica")
        load(10)
        time.sleep(3)
        t0 = time.time()
        load(20)
        wait(lambda: service("chat").get("running", 0) >= 2, 30, f"round {k}: a second replica")
        answered.append(time.time() - t0)
    if not replaced or not answered:
        sys.exit("services_bench: measured nothing")
    ok = max(replaced) <= 5 and max(answered) <= 10
    rss = " ".join(f"{n} {hwm(p.pid) // 1024} MiB" for n, p in zip(NODES, agents))
    print(f"services: {len(replaced)} failed replicas running again in {min(replaced):.2f}-{max(replaced):.2f} s "
          f"(median {sorted(replaced)[len(replaced) // 2]:.2f} s; goal 5 s); {len(answered)} doubled loads answered by a "
          f"running replica in {min(answered):.2f}-{max(answered):.2f} s (goal 10 s); peak RSS (VmHWM) allotd "
          f"{hwm(cluster.allotd.pid) // 1024} MiB, agents {rss}{'' if ok else '  GOAL MISSED'}")
    sys.exit(0 if ok else 1)
