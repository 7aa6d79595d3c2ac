#!/usr/bin/env python3
"""The noisy-neighbour loop end to end (docs/noisy-neighbour.md): a real allotd and one real
allot-agent of an MPS pool (8 fake H100s, bubblewrap, cgroups) on loopback. A victim task of kind
inference reports its p99 through ALLOT_LATENCY_FILE (the value the bench puts in its "level"
file); a neighbour task on the same GPU is given SM utilization by the fake NVML's live file.

  (i)  onsets: after a quiet spell, the neighbour rises (SM 20% -> 95%) and the victim's p99 goes
       from 10 to 25 ms at the same moment (the onset). Detection: the InterferenceActed event's
       journal time; action: the moment the MPS control daemon (the fake, which logs what it is
       told) got set_active_thread_percentage. Then both recover and the throttle must be lifted
       after the quiet period before the next onset.
  (ii) a quiet run: the neighbour stays at 20% while the victim's p99 wanders 8-14 ms (under
       1.5x its baseline); any response is a failure.
Goal (issue 17): detected within 30 s of onset, acted on within 60 s, no response when quiet.
Prints one line with the figures and the peak RSS of allotd and the agent; exits non-zero if it
measured nothing or a goal was missed.

usage: noisy_bench.py BUILD_DIR OUT_DIR [--onsets 5] [--quiet-s 60]
"""
import argparse, atexit, glob, os, shutil, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cluster import ONE_H100, SRC, Cluster, hwm, wait  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("out")
ap.add_argument("--onsets", type=int, default=5)
ap.add_argument("--quiet-s", type=float, default=60)
a = ap.parse_args()
OUT = os.path.abspath(os.path.join(a.out, "noisy"))
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
home = f"{OUT}/gpu-n"
task_dir = f"{home}/work/tenants/serve/work"


def level(ms):
    """The p99 (ms) the victim reports from now: it appends its work directory's "level" file."""
    os.makedirs(task_dir, exist_ok=True)
    with open(f"{task_dir}/level.tmp", "w") as f:
        f.write(f"{ms}\n")
    os.rename(f"{task_dir}/level.tmp", f"{task_dir}/level")


def neighbour(sm):
    """The neighbour's SM utilization (memory bandwidth: half) in the fake NVML's live file."""
    os.makedirs(home, exist_ok=True)
    with open(f"{home}/nvml.conf.live.tmp", "w") as f:
        f.write(f"proc_util gpu=0 match=noisy-bench-neighbour sm={sm} mem={sm // 2}\n")
    os.rename(f"{home}/nvml.conf.live.tmp", f"{home}/nvml.conf.live")


# The MPS pipe directories: short, as the daemon's sockets need (107 bytes), and this run's own.
MPS_PIPES = tempfile.mkdtemp(prefix="allot-mps-", dir="/tmp")
atexit.register(shutil.rmtree, MPS_PIPES, True)


def mps_told():
    """What the fake MPS control daemons of the jobs' GPU (one a tenant) were told."""
    logs = sorted(glob.glob(f"{MPS_PIPES}/**/mps-fake.log", recursive=True))
    return "".join(open(log).read() for log in logs)


neighbour(20)
level(10)
with Cluster(a.build, OUT, ["serve", "batch"], ["--interference-quiet", "5s"], port_base=19000) as cluster:
    call = cluster.call
    allotd = cluster.allotd

    def events(type_):
        return [e for e in call("GET", "/v1/events?since=0")[1]["events"] if e["type"] == type_]

    # One GPU, so both jobs share it.
    agent = cluster.start_agent("gpu-n", ["--pool", "mps", "--mps-control", f"{SRC}/tests/fakes/nvidia-cuda-mps-control",
                                          "--mps-pipe-dir", MPS_PIPES], nvml=ONE_H100)
    victim = "while :; do cat level >> \"$ALLOT_LATENCY_FILE\"; sleep 0.2; done"
    for body in ({"name": "api", "tenant": "serve", "kind": "inference", "tasks": {"gpus": 0.3},
                  "command": ["/bin/sh", "-c", victim]},
                 {"name": "trainer", "tenant": "batch", "tasks": {"gpus": 0.4},
                  "command": ["/bin/sh", "-c", "while :; do sleep 1; done # noisy-bench-neighbour"]}):
        code, reply = call("POST", "/v1/jobs", body)
        assert code == 201, reply
    for name in ("api", "trainer"):
        wait(lambda: call("GET", f"/v1/jobs/{name}")[1].get("state") == "running", 30, f"{name} running")

    # (ii) first, while the baselines settle: a quiet neighbour and a victim within 1.5x.
    t0 = time.time()
    i = 0
    while time.time() - t0 < a.quiet_s:
        level((8, 10, 12, 14, 11, 9)[i % 6])
        i += 1
        time.sleep(0.5)
    quiet_responses = len(events("InterferenceActed"))

    # (i) onsets.
    level(10)
    time.sleep(3)
    detect, act, lift = [], [], []
    for k in range(a.onsets):
        told_before = mps_told().count("set_active_thread_percentage ")
        acted_before = len(events("InterferenceActed"))
        onset = time.time()
        neighbour(95)
        level(25)
        acted = wait(lambda: events("InterferenceActed")[acted_before:], 120, f"onset {k}: detection")
        detect.append(acted[0]["time"] - onset)
        wait(lambda: mps_told().count("set_active_thread_percentage ") > told_before, 120, f"onset {k}: action")
        act.append(time.time() - onset)
        recovered = time.time()
        neighbour(20)
        level(10)
        wait(lambda: not call("GET", "/v1/interference")[1]["responses"], 120, f"onset {k}: lifted")
        # The agent gives the neighbour's server its own percentage back.
        wait(lambda: mps_told().count("set_active_thread_percentage ") > told_before + 1, 60, f"onset {k}: restored")
        lift.append(time.time() - recovered)
        time.sleep(3)  # baselines go on learning before the next onset
    if not detect or not act:
        sys.exit("noisy_bench: measured nothing")
    ok = max(detect) <= 30 and max(act) <= 60 and quiet_responses == 0
    print(f"noisy-neighbour over {len(detect)} onsets: detected in {min(detect):.1f}-{max(detect):.1f} s "
          f"(goal 30 s), acted on in {min(act):.1f}-{max(act):.1f} s (goal 60 s), restored {min(lift):.1f}-"
          f"{max(lift):.1f} s after recovery (quiet period 5 s); quiet run {a.quiet_s:.0f} s: {quiet_responses} "
          f"responses (goal 0); peak RSS (VmHWM) allotd {hwm(allotd.pid) // 1024} MiB, agent "
          f"{hwm(agent.pid) // 1024} MiB{'' if ok else '  GOAL MISSED'}")
    sys.exit(0 if ok else 1)
