#!/usr/bin/env python3
"""allot vs a private Slurm, end to end, side by side on the same machine and workload (issue 19,
point 5): 2 nodes × 8 GPUs, N one-GPU jobs of /bin/true submitted back to back, each system
in turn.

  Slurm:  Debian's slurm-wlm: a private munged, slurmctld and two slurmd (-N node-a/-N node-b)
          on loopback, 8 GPU gres each (mknod'd device files, gres.conf), 16 CPUs each
          (config_overrides), tuned for short jobs (below). Jobs go in with sbatch, one process
          per job, as a Slurm user submits them.
  allot:  a real allotd and two real allot-agents on the fake NVML (8 H100s each: allot's own
          sandbox as root, else bubblewrap; --sandbox picks; cgroups, the tenant's uid), as bench/agents_bench.py. Jobs go in through the
          REST API (POST /v1/jobs), one request per job on one keep-alive connection.

Each job's one process is `/bin/sh -c ': > s-NAME; : > e-NAME'`, i.e. /bin/true that leaves two
empty files in its working directory: the first one's mtime is the moment the job's process
started, the second one's the moment it ended (both on this host's clock, as the submit times).
  jobs/s         N / (the last job's end - the first submit)
  start latency  each job's submit (the moment its submit call returned) → its process start; p50, p99
Peak RSS (VmHWM) of each system's daemons at the end.

usage: slurm_vs_allot.py BUILD_DIR OUT_DIR [--jobs 500] [--port-base 24000] [--only slurm|allot]
Needs root (bubblewrap and cgroups for the agents; slurmd; mknod).
"""
import argparse, http.client, json, os, shutil, signal, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cluster import Cluster, hwm, wait  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("out")
ap.add_argument("--jobs", type=int, default=500)
ap.add_argument("--port-base", type=int, default=24000)
ap.add_argument("--only", choices=["slurm", "allot"])
ap.add_argument("--latency-jobs", type=int, default=30)
ap.add_argument("--sandbox", default="auto", choices=["auto", "native", "bwrap"],
                help="the agents' task sandbox (auto: allot's own as root)")
a = ap.parse_args()
OUT = os.path.abspath(os.path.join(a.out, "slurm-vs-allot"))
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
NODES = ("node-a", "node-b")
GPUS = 8


def cpu(pid):
    """(own, reaped children's) CPU seconds of a process so far: /proc/PID/stat utime+stime, cutime+cstime."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    hz = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / hz, (int(fields[13]) + int(fields[14])) / hz


def cpu_since(before, procs):
    """CPU seconds each of `procs` ({name: pid}) spent since `before` (the same dict of cpu()), own + children."""
    out = {}
    for name, pid in procs.items():
        now = cpu(pid)
        out[name] = round(now[0] - before[name][0] + now[1] - before[name][1], 2)
    return out


def all_ended(marks_dirs, names):
    """Whether every job in `names` left its end mark: a look at directories, so the waiting
    costs the system measured nothing (polling its API every 20 ms would)."""
    seen = set()
    for d in marks_dirs:
        # A node none of whose tasks has started yet has no directory of marks: nothing ended there.
        if os.path.isdir(d):
            seen.update(f[2:] for f in os.listdir(d) if f.startswith("e-"))
    return all(n in seen for n in names)


def one_at_a_time(system, submit, marks_dirs):
    """Start latency on an idle cluster: --latency-jobs jobs, each submitted once the one before
    has ended (its end mark is there); submit return → the process's start mark, p50/p99 ms."""
    lat = []
    for i in range(a.latency_jobs):
        name = f"idle{i}"
        submit(name)
        t = time.time()
        marks = wait(lambda: next(((os.path.join(d, f"s-{name}"), os.path.join(d, f"e-{name}")) for d in marks_dirs
                                   if os.path.exists(os.path.join(d, f"e-{name}"))), None), 60, f"{system} {name}")
        lat.append((os.stat(marks[0]).st_mtime_ns / 1e9 - t) * 1000)
    return {"jobs": len(lat), "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99)}


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


def script(name):
    return f": > s-{name}; : > e-{name}"


def read_marks(marks_dirs):
    """{("s" or "e", job name): mtime} of every start and end mark. A node that ran none of the
    jobs (a short run can fit on one node) has no directory of marks: it adds nothing."""
    mark = {}
    for d in marks_dirs:
        if not os.path.isdir(d):
            continue
        for f in os.listdir(d):
            if f[:2] in ("s-", "e-"):
                mark[(f[0], f[2:])] = os.stat(os.path.join(d, f)).st_mtime_ns / 1e9
    return mark


def figures(system, marks_dirs, submitted, t_first):
    """jobs/s and start latency from the marks: submitted = {name: time its submit returned}."""
    starts, ends = {}, {}
    for (kind, name), t in read_marks(marks_dirs).items():
        (starts if kind == "s" else ends)[name] = t
    missing = [n for n in submitted if n not in ends or n not in starts]
    if missing:
        sys.exit(f"{system}: {len(missing)} jobs left no marks (e.g. {missing[:3]}); nothing measured")
    lat = [(starts[n] - t) * 1000 for n, t in submitted.items()]
    last_end = max(ends[n] for n in submitted)
    r = {"jobs": len(submitted), "wall_s": last_end - t_first, "jobs_per_s": len(submitted) / (last_end - t_first),
         "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "max_ms": max(lat)}
    return r


# ---------------------------------------------------------------------------------------- Slurm
# Tuned for many short jobs as Slurm's high-throughput guide says: no accounting, no job
# completion log, no task/proctrack plugins that set up cgroups, quiet logs, an immediate
# scheduler on every submit and end (the main scheduler at most 1 s apart, the backfill one off
# the critical path), no prolog/epilog, slurmctld state on a tmpfs-like local dir.
SLURM_TUNING = [
    "SchedulerType=sched/builtin",
    "SchedulerParameters=default_queue_depth=1000,sched_min_interval=0,batch_sched_delay=0,max_rpc_cnt=0,"
    "sched_interval=1",
    "SlurmctldDebug=error",
    "SlurmdDebug=error",
    "MessageTimeout=30",
    "KillWait=1",
    "MinJobAge=300",
    "MaxJobCount=100000",
    "InactiveLimit=0",
    "PrologFlags=NoHold",
]


def slurm_conf(d, port):
    lines = [
        "ClusterName=bench",
        f"SlurmctldHost=localhost(127.0.0.1)",
        f"SlurmctldPort={port}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={d}/munge/sock",
        f"StateSaveLocation={d}/ctld",
        f"SlurmctldPidFile={d}/ctld/slurmctld.pid",
        f"SlurmctldLogFile={d}/ctld/slurmctld.log",
        f"SlurmdSpoolDir={d}/spool/%n",
        f"SlurmdPidFile={d}/spool/%n/slurmd.pid",
        f"SlurmdLogFile={d}/spool/%n/slurmd.log",
        "SlurmdParameters=config_overrides",
        "DebugFlags=NO_CONF_HASH",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "MailProg=/bin/true",
        "PropagateResourceLimits=NONE",
        "ReturnToService=2",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "DefMemPerCPU=1024",
        "GresTypes=gpu",
        *SLURM_TUNING,
    ]
    for i, n in enumerate(NODES):
        lines.append(f"NodeName={n} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port + 1 + i} CPUs=16 "
                     f"RealMemory=65536 Gres=gpu:{GPUS} State=UNKNOWN")
    lines.append(f"PartitionName=bench Nodes={','.join(NODES)} Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def run_slurm():
    # A short directory: munged's and slurmstepd's sockets live under it (107 bytes).
    d = tempfile.mkdtemp(prefix="asb.", dir="/tmp")
    procs = []
    try:
        for sub in ("munge", "ctld", "spool", "gpu", "marks"):
            os.makedirs(f"{d}/{sub}")
        os.chmod(f"{d}/munge", 0o755)
        os.chmod(f"{d}/marks", 0o777)
        with open(f"{d}/munge/munge.key", "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(f"{d}/munge/munge.key", 0o400)
        gres = []
        for n in NODES:
            os.makedirs(f"{d}/spool/{n}")
            for g in range(GPUS):
                path = f"{d}/gpu/{n}-{g}"
                os.mknod(path, 0o666 | 0o020000, os.makedev(1, 3))  # /dev/null's numbers
                gres.append(f"NodeName={n} Name=gpu File={path}")
        port = a.port_base + 390  # slurmctld, then one per slurmd: all within base+300..base+399
        with open(f"{d}/slurm.conf", "w") as f:
            f.write(slurm_conf(d, port))
        with open(f"{d}/gres.conf", "w") as f:
            f.write("\n".join(gres) + "\n")
        env = dict(os.environ, SLURM_CONF=f"{d}/slurm.conf")
        log = open(f"{OUT}/slurm-daemons.log", "w")
        procs.append(subprocess.Popen(["munged", "--foreground", "--force", f"--socket={d}/munge/sock",
                                       f"--key-file={d}/munge/munge.key", f"--pid-file={d}/munge/munged.pid",
                                       f"--seed-file={d}/munge/munged.seed", f"--log-file={d}/munge/munged.log"],
                                      stdout=log, stderr=log))
        wait(lambda: os.path.exists(f"{d}/munge/sock"), 10, "munged's socket")
        procs.append(subprocess.Popen(["slurmctld", "-D", "-i"], env=env, stdout=log, stderr=log))
        for n in NODES:
            procs.append(subprocess.Popen(["slurmd", "-D", "-N", n], env=env, stdout=log, stderr=log))

        def idle():
            r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=env, capture_output=True, text=True)
            states = dict(l.split() for l in r.stdout.splitlines() if l.strip())
            return all(states.get(n) == "idle" for n in NODES)

        wait(idle, 60, "Slurm's nodes idle")
        # Warm-up: one job through the whole path (slurmstepd's first start reads its plugins).
        subprocess.run(["srun", "--gres=gpu:1", "-n1", "-c1", "--mem=64M", "/bin/true"], env=env, check=True,
                       cwd=f"{d}/marks", timeout=60)
        daemons = dict(zip(["munged", "slurmctld", *[f"slurmd {n}" for n in NODES]], [p.pid for p in procs]))
        cpu0 = {n: cpu(p) for n, p in daemons.items()}
        def submit(name):
            subprocess.run(["sbatch", "-Q", "--gres=gpu:1", "-n1", "-c1", "--mem=64M", "-o", "/dev/null",
                            "-J", name, f"--chdir={d}/marks", f"--wrap={script(name)}"], env=env, check=True)

        idle = one_at_a_time("slurm", submit, [f"{d}/marks"])
        submitted = {}
        t_first = time.time()
        for i in range(a.jobs):
            name = f"j{i}"
            submit(name)
            submitted[name] = time.time()
        submit_s = time.time() - t_first

        def drained():
            r = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True, text=True)
            return r.returncode == 0 and not r.stdout.strip()

        wait(lambda: all_ended([f"{d}/marks"], submitted), 600, "every Slurm job's end mark")
        cpu_s = cpu_since(cpu0, daemons)
        wait(drained, 600, "Slurm's queue to drain")
        r = figures("slurm", [f"{d}/marks"], submitted, t_first)
        r["cpu_s"] = cpu_s
        r["idle"] = idle
        r["submit_s"] = submit_s
        names = ["munged", "slurmctld", *[f"slurmd {n}" for n in NODES]]
        r["rss"] = {nm: hwm(p.pid) // 1024 for nm, p in zip(names, procs)}
        return r
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in ("ctld/slurmctld.log", *[f"spool/{n}/slurmd.log" for n in NODES]):
            if os.path.exists(f"{d}/{log}"):
                shutil.copy(f"{d}/{log}", f"{OUT}/{os.path.basename(os.path.dirname(log))}-{os.path.basename(log)}")
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------------------- allot
def run_allot():
    home = f"{OUT}/allot"
    os.makedirs(home)
    with Cluster(a.build, home, ["bench"], port=a.port_base + 300 + os.getpid() % 80) as cluster:
        agents = {n: cluster.start_agent(n, ["--sandbox", a.sandbox]) for n in NODES}
        conn = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=30)
        headers = {"Authorization": f"Bearer {cluster.admin}", "Content-Type": "application/json"}

        def submit(name):
            job = {"name": name, "tenant": "bench", "tasks": {"gpus": 1, "cpu": 1, "memory": "64Mi"},
                   "command": ["/bin/sh", "-c", script(name)]}
            conn.request("POST", "/v1/jobs", json.dumps(job), headers)
            r = conn.getresponse()
            body = r.read()
            assert r.status == 201, body

        submit("warm-up")
        wait(lambda: cluster.call("GET", "/v1/jobs/warm-up")[1].get("state") in ("finished", "failed"), 30, "warm-up")
        idle = one_at_a_time("allot", submit, [f"{home}/{n}/work/tenants/bench/work" for n in NODES])
        daemons = {"allotd": cluster.allotd.pid, **{f"agent {n}": p.pid for n, p in agents.items()}}
        cpu0 = {n: cpu(p) for n, p in daemons.items()}
        submitted, sent = {}, {}
        t_first = time.time()
        for i in range(a.jobs):
            name = f"j{i}"
            sent[name] = time.time()
            submit(name)
            submitted[name] = time.time()
        submit_s = time.time() - t_first

        def ended():
            jobs, after = [], None
            while True:
                code, page = cluster.call("GET", "/v1/jobs?limit=1000" + (f"&after={after}" if after is not None else ""))
                jobs += page["jobs"]
                after = page.get("next_after")
                if after is None:
                    break
            t = [j for j in jobs if j["name"] in submitted]
            return sum(j["state"] in ("finished", "failed") for j in t) == len(submitted), sum(j["state"] == "failed" for j in t)

        wait(lambda: all_ended([f"{home}/{n}/work/tenants/bench/work" for n in NODES], submitted), 600,
             "every allot job's end mark")
        cpu_s = cpu_since(cpu0, daemons)
        wait(lambda: ended()[0], 600, "all allot jobs to end")
        failed = ended()[1]
        if failed:
            sys.exit(f"allot: {failed} jobs failed; see {home}")
        r = figures("allot", [f"{home}/{n}/work/tenants/bench/work" for n in NODES], submitted, t_first)
        r["cpu_s"] = cpu_s
        r["idle"] = idle
        r["submit_s"] = submit_s
        r["breakdown"] = breakdown(cluster, [f"{home}/{n}/work/tenants/bench/work" for n in NODES], submitted, sent)
        # allotd's own histograms: how many passes and journal commits, and what they took.
        req = urllib.request.Request(cluster.url + "/metrics", headers={"Authorization": f"Bearer {cluster.admin}"})
        metrics = urllib.request.urlopen(req, timeout=30).read().decode()
        for fam, what in (("allot_scheduler_pass_duration_seconds", "passes"),
                          ("allot_journal_commit_duration_seconds", "journal commits")):
            val = {k: float(l.split()[-1]) for l in metrics.splitlines() for k in ("_sum", "_count")
                   if l.startswith(fam + k)}
            if val.get("_count"):
                r["breakdown"][f"{what}: {int(val['_count'])}, mean"] = {"n": int(val["_count"]), "mean_ms": val["_sum"] / val["_count"] * 1000}
        r["rss"] = {"allotd": hwm(cluster.allotd.pid) // 1024, **{f"agent {n}": hwm(p.pid) // 1024 for n, p in agents.items()}}
        return r


def breakdown(cluster, marks_dirs, submitted, sent):
    """Where a job's time goes in allot, from the journal's events (job.submitted, job.placed,
    job.finished: allotd's clock, ms) and the marks (the process's start and end): medians and
    p99s of each leg, ms."""
    ev, since = [], 0
    while True:
        code, page = cluster.call("GET", f"/v1/events?since={since}")
        if code != 200 or page.get("last", since) == since:
            break
        ev += page["events"]
        since = page["last"]
    at = {}
    for e in ev:
        if e.get("job") in submitted:
            at.setdefault(e["job"], {}).setdefault(e["type"], float(e["time"]))
    mark = read_marks(marks_dirs)
    finishes = sorted(t["JobFinished"] for t in at.values() if "JobFinished" in t)
    legs = {"submit sent -> placed by a pass": [], "placed -> process start (delivery, agent, sandbox)": [],
            "process start -> end": [], "process end -> job.finished journaled (exit report)": [],
            "a GPU freed (job.finished) -> the next job placed": []}
    import bisect
    for n, t in at.items():
        if "JobPlaced" not in t or "JobFinished" not in t:
            continue
        # From the submit's send: a submission wakes a pass at once, which often places the job
        # before the submit's answer is read back (from the return, the leg would be negative).
        legs["submit sent -> placed by a pass"].append(t["JobPlaced"] - sent[n])
        legs["placed -> process start (delivery, agent, sandbox)"].append(mark[("s", n)] - t["JobPlaced"])
        legs["process start -> end"].append(mark[("e", n)] - mark[("s", n)])
        legs["process end -> job.finished journaled (exit report)"].append(t["JobFinished"] - mark[("e", n)])
        k = bisect.bisect_right(finishes, t["JobPlaced"])
        if k > 0 and finishes[k - 1] > sent[n]:  # it waited for a GPU: the last one freed before it
            legs["a GPU freed (job.finished) -> the next job placed"].append(t["JobPlaced"] - finishes[k - 1])
    return {leg: {"n": len(v), "p50_ms": pct(v, 50) * 1000, "p99_ms": pct(v, 99) * 1000} for leg, v in legs.items() if v}


# A mark's time is its file's mtime, which the kernel takes from its coarse clock (one tick
# behind at most): latencies below a tick say "within a tick", and no ratio divides by them.
TICK_MS = time.clock_getres(getattr(time, "CLOCK_REALTIME_COARSE", 5)) * 1000  # Linux: 5


def latency(ms):
    return f"{ms:.0f} ms" if ms >= TICK_MS else f"{ms:.0f} ms (within the marks' {TICK_MS:.0f} ms tick)"


def lower(theirs, ours):
    return f"{theirs / ours:.1f}x" if ours >= TICK_MS else f">= {theirs / TICK_MS:.0f}x"


def show(system, r):
    print(f"{system}: {r['jobs']} one-GPU jobs on 2 nodes x {GPUS} GPUs: {r['jobs_per_s']:.1f} jobs/s "
          f"(first submit to last end {r['wall_s']:.2f} s; submitting took {r['submit_s']:.2f} s); "
          f"start latency p50 {r['p50_ms']:.0f} ms, p99 {r['p99_ms']:.0f} ms, max {r['max_ms']:.0f} ms; "
          f"peak RSS " + ", ".join(f"{k} {v} MiB" for k, v in r["rss"].items()))
    print(f"  start latency on an idle cluster, one job at a time ({r['idle']['jobs']} jobs): "
          f"p50 {latency(r['idle']['p50_ms'])}, p99 {latency(r['idle']['p99_ms'])}")
    print(f"  CPU (each daemon and the children it reaped, submit to drain): " +
          ", ".join(f"{k} {v:.2f} s" for k, v in r["cpu_s"].items()) +
          f"; {sum(r['cpu_s'].values()) / r['jobs'] * 1000:.1f} ms per job")
    for leg, f in r.get("breakdown", {}).items():
        if "mean_ms" in f:
            print(f"  {leg} {f['mean_ms']:.2f} ms")
        else:
            print(f"  {leg}: p50 {f['p50_ms']:.0f} ms, p99 {f['p99_ms']:.0f} ms ({f['n']} jobs)")


results = {}
if a.only in (None, "slurm"):
    results["slurm"] = run_slurm()
    show("slurm", results["slurm"])
if a.only in (None, "allot"):
    results["allot"] = run_allot()
    show("allot", results["allot"])
if len(results) == 2:
    s, al = results["slurm"], results["allot"]
    print(f"ratio: allot/slurm jobs/s {al['jobs_per_s'] / s['jobs_per_s']:.1f}x; start latency in the stream p50 "
          f"{lower(s['p50_ms'], al['p50_ms'])} lower, p99 {lower(s['p99_ms'], al['p99_ms'])} lower; "
          f"on an idle cluster p50 {lower(s['idle']['p50_ms'], al['idle']['p50_ms'])} lower, "
          f"p99 {lower(s['idle']['p99_ms'], al['idle']['p99_ms'])} lower")
with open(f"{OUT}/results.json", "w") as f:
    json.dump(results, f, indent=1)
