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
import argparse, os, shutil, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cluster import Cluster, hwm, wait  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("out")
ap.add_argument("--latency-jobs", type=int, default=50)
ap.add_argument("--jobs", type=int, default=500)
a = ap.parse_args()
OUT = os.path.abspath(os.path.join(a.out, "agents"))
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)

with Cluster(a.build, OUT, ["bench"]) as cluster:
    call = cluster.call
    allotd = cluster.allotd
    agents = {node: cluster.start_agent(node) for node in ("bench-a", "bench-b")}

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
