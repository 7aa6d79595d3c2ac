"""A real allotd and real allot-agents on loopback for the benches (agents_bench.py,
noisy_bench.py): each agent on its own fake NVML (8 H100s), fake device nodes and work directory.
Needs root for bubblewrap and cgroups, as the agents' end-to-end tests do."""
import json, os, signal, subprocess, sys, time, urllib.request

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
EIGHT_H100 = 'driver version=550.54.15\ngpus count=8 name="NVIDIA H100 80GB HBM3"\nnvswitch count=4\n'
ONE_H100 = 'driver version=550.54.15\ngpus count=1 name="NVIDIA H100 80GB HBM3"\n'


def wait(pred, seconds, what):
    """pred's first true value within `seconds` (polled every 20 ms); exits naming `what` if none."""
    end = time.time() + seconds
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    sys.exit(f"timed out after {seconds} s: {what}")


def hwm(pid):
    """A process's peak RSS (VmHWM), KiB."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))


class Cluster:
    def __init__(self, build, out, tenants, allotd_args=(), port_base=18000, port=None):
        """Starts allotd with `tenants` (paths) and a node token for agents (on `port`, else one
        from port_base by the pid); `with` stops everything."""
        self.build, self.out = os.path.abspath(build), out
        self.port = port or port_base + os.getpid() % 1000
        self.url = f"http://127.0.0.1:{self.port}"
        self.procs, self.agents = [], {}
        with open(f"{out}/tenants.yaml", "w") as f:
            f.write("tenants:\n" + "".join(f"  - {{path: {t}}}\n" for t in tenants))
        self.allotd = subprocess.Popen([f"{self.build}/allotd", "--listen", f"127.0.0.1:{self.port}", "--data",
                                        f"{out}/data", "--tenants", f"{out}/tenants.yaml", "--pass-interval", "1s",
                                        *allotd_args], stderr=open(f"{out}/allotd.log", "w"))
        self.procs.append(self.allotd)
        wait(lambda: os.path.exists(f"{out}/data/admin-token"), 20, "allotd's admin token")
        time.sleep(0.2)
        self.admin = open(f"{out}/data/admin-token").read().strip()
        wait(lambda: self.call("GET", "/readyz")[0] == 200, 20, "allotd ready")
        code, tok = self.call("POST", "/v1/tokens", {"principal": "*", "role": "node", "scope": ""})
        assert code == 201, tok
        with open(f"{out}/node-token", "w") as f:
            f.write(tok["token"] + "\n")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in reversed(self.procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

    def call(self, method, path, body=None):
        """(status, JSON body) of an API call as the platform admin."""
        req = urllib.request.Request(self.url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {getattr(self, 'admin', '')}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def start_agent(self, node, args=(), nvml=EIGHT_H100):
        """Starts an agent for `node` under OUT/node (its fake NVML's config: `nvml`) and waits until
        allotd has it ready; its Popen."""
        home = f"{self.out}/{node}"
        os.makedirs(home, exist_ok=True)
        with open(f"{home}/nvml.conf", "w") as f:
            f.write(nvml)
        subprocess.run([f"{SRC}/scripts/fake-gpu-node", f"{home}/gpu"], check=True)
        agent = subprocess.Popen(
            [f"{self.build}/allot-agent", "--server", self.url, "--token-file", f"{self.out}/node-token", "--node", node,
             "--nvml", f"{self.build}/libnvidia-ml-fake.so", "--work-dir", f"{home}/work", "--cpu", "16", "--memory",
             "64Gi", "--cgroup-group", f"allot-bench-{os.getpid()}-{node}", "--device-root", f"{home}/gpu/dev",
             "--proc-driver-root", f"{home}/gpu/proc", *args],
            env=dict(os.environ, FAKE_NVML_CONFIG=f"{home}/nvml.conf"), stderr=open(f"{home}/agent.log", "w"))
        self.procs.append(agent)
        self.agents[node] = agent
        wait(lambda: self.call("GET", f"/v1/nodes/{node}")[1].get("condition") == "ready", 30, f"{node} ready")
        return agent
