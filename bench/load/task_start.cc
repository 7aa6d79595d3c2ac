// What node isolation adds to a task's start, measured in one run on the real runner (bwrap or
// allot's own sandbox, cgroups, the tenant's uid): from Runner::Start to the task's first
// instruction (the wall time the task itself writes), N tasks one at a time, in four set-ups
// interleaved round by round so the machine's noise falls on all alike:
//   plain     sandbox and cgroup limits, no GPU devices, devices not confined (before issue 13)
//   devices   + a 2-GPU task's device nodes bound in and its device cgroup (v1 + v2 BPF here)
//   image     + the task runs in a busybox image root (overlay mounted and removed per task)
//   both      devices and image
// Prints p50/p99 per set-up and the p50 differences. Needs root (mknod, overlay, bpf).
// usage: task_start SCRATCH_DIR [N] [bwrap|native]   (SCRATCH_DIR is made; scripts/ must be in the
// cwd; native: allot-init is found beside the build's allot-agent, ALLOT_INIT_BINARY)
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agent/run/runner.h"
#include "agent/run/sys_files.h"

namespace fs = std::filesystem;
using namespace allot;

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int Fail(const std::string& why) {
  std::fprintf(stderr, "task_start: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Fail("usage: task_start SCRATCH_DIR [N] [bwrap|native]");
  const std::string sandbox = argc > 3 ? argv[3] : "bwrap";
  if (sandbox != "bwrap" && sandbox != "native") return Fail("sandbox '" + sandbox + "': expected bwrap or native");
  if (::geteuid() != 0) return Fail("needs root (mknod'd device nodes, overlay mounts, bpf)");
  const fs::path dir = fs::absolute(argv[1]);
  const int n = argc > 2 ? std::atoi(argv[2]) : 50;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms(0755));
  const std::string make = "scripts/fake-gpu-node " + (dir / "gpu").string() + " >/dev/null && scripts/busybox-image " +
                           (dir / "image").string() + " >/dev/null";
  if (std::system(make.c_str()) != 0) return Fail("could not make the fake node or the image: " + make);
  DriverRoots roots{(dir / "gpu" / "dev").string(), (dir / "gpu" / "proc").string()};
  auto nodes = TaskDeviceNodes(roots, {{0, "00000000:18:00.0", {}}, {1, "00000000:2A:00.0", {}}});
  if (!nodes) return Fail(nodes.error().ToString());

  std::map<std::string, std::unique_ptr<Runner>> runners;
  for (bool confine : {false, true}) {
    RunnerOptions o;
    o.work_root = (dir / (confine ? "work-c" : "work-p") / "tenants").string();
    o.sandbox = sandbox == "native" ? SandboxMode::kNative : SandboxMode::kBwrap;
    o.init_path = ALLOT_INIT_BINARY;
    o.cgroup_group = "allot-bench-" + std::to_string(::getpid()) + (confine ? "-c" : "-p");
    o.confine_devices = confine;
    auto r = Runner::Create(o);
    if (!r) return Fail(r.error().ToString());
    std::printf("%s\n", (*r)->description().c_str());
    runners[confine ? "confined" : "plain"] = std::move(*r);
  }
  const std::vector<std::string> setups = {"plain", "devices", "image", "both"};
  std::map<std::string, std::vector<double>> ms, blocked;  // blocked: until Start returned (the agent's loop waits that long)
  for (int i = 0; i < n; ++i) {
    for (const std::string& setup : setups) {
      const bool devices = setup == "devices" || setup == "both";
      const bool image = setup == "image" || setup == "both";
      Runner& runner = *runners[devices ? "confined" : "plain"];
      const std::string work = (dir / (devices ? "work-c" : "work-p") / "tenants" / "bench" / "work").string();
      TaskLaunch l;
      l.key = setup + "-" + std::to_string(i);
      l.tenant = "bench";
      l.work_dir = work;
      l.checkpoint_dir = work + "/ck";
      l.log_path = (dir / "logs" / (l.key + ".log")).string();
      l.preempt_file = work + "/.preempt-" + l.key;
      l.cpu_millis = 1000;
      l.memory_mib = 256;
      l.pids_max = 64;
      const std::string mark = work + "/started-" + l.key;
      // The task's first act makes the mark; its mtime is when (busybox's date has no %N).
      l.argv = {"/bin/sh", "-c", ": > " + mark};
      if (devices) l.devices = *nodes;
      if (image) l.image_rootfs = (dir / "image" / "rootfs").string();
      const int64_t t0 = NowNs();
      auto pid = runner.Start(l);
      if (!pid) return Fail(setup + ": " + pid.error().ToString());
      blocked[setup].push_back(static_cast<double>(NowNs() - t0) / 1e6);
      for (bool ended = false; !ended;) {
        for (const TaskExit& e : runner.Poll()) {
          if (e.key != l.key) continue;
          ended = true;
          if (e.exit_code != 0) return Fail(setup + ": task " + e.reason + ": " + ReadText(l.log_path).value_or(""));
        }
        if (!ended) SleepMillis(1);
      }
      struct stat st {};
      if (::stat(mark.c_str(), &st) != 0) return Fail(setup + ": the task made no start mark");
      const int64_t at = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      ms[setup].push_back(static_cast<double>(at - t0) / 1e6);
    }
  }
  std::map<std::string, double> p50;
  struct timespec res {};
  ::clock_getres(CLOCK_REALTIME_COARSE, &res);
  const double tick_ms = static_cast<double>(res.tv_sec) * 1e3 + static_cast<double>(res.tv_nsec) / 1e6;
  for (const std::string& setup : setups) {
    std::vector<double>& v = ms[setup];
    std::sort(v.begin(), v.end());
    if (v.empty()) return Fail("nothing measured for " + setup);
    p50[setup] = v[v.size() / 2];
    std::vector<double>& b = blocked[setup];
    std::sort(b.begin(), b.end());
    std::printf("%-8s start to first instruction over %d tasks: p50 %.1f ms, p99 %.1f ms; Start() returned after p50 %.1f ms\n",
                setup.c_str(), static_cast<int>(v.size()), p50[setup], v[std::min(v.size() - 1, v.size() * 99 / 100)],
                b[b.size() / 2]);
    if (p50[setup] < tick_ms)
      std::printf("         (below the mark's resolution: its mtime comes from the kernel's coarse clock, %.0f ms a tick)\n",
                  tick_ms);
  }
  std::printf("isolation adds (p50): device nodes + device cgroup %+.1f ms; image root %+.1f ms; both %+.1f ms\n",
              p50["devices"] - p50["plain"], p50["image"] - p50["plain"], p50["both"] - p50["plain"]);
  runners.clear();
  fs::remove_all(dir);
  return 0;
}
