#include "agent/node/leftovers.h"

#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace allot {
namespace {

int RemovePreemptFiles(const std::string& work_root, std::vector<std::string>* problems) {
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& tenant : fs::directory_iterator(work_root, ec)) {
    std::error_code inner;
    for (const fs::directory_entry& f : fs::directory_iterator(tenant.path() / "work" / ".allot", inner)) {
      if (f.path().filename().string().rfind("preempt-", 0) != 0) continue;
      if (fs::remove(f.path(), inner)) ++removed;
      else if (inner) problems->push_back("removing " + f.path().string() + ": " + inner.message());
    }
  }
  return removed;
}

}  // namespace

int DestroyAllMigInstances(GpuBackend& gpus, std::vector<std::string>* problems) {
  auto inv = gpus.Discover();
  if (!inv) {
    if (problems) problems->push_back("listing MIG instances: " + inv.error().message());
    return 0;
  }
  int destroyed = 0;
  for (const GpuInfo& g : inv->gpus) {
    for (const MigGpuInstanceInfo& mig : g.mig) {
      if (Status s = gpus.DestroyMigInstance(g.uuid, mig.profile, mig.start); s.ok()) ++destroyed;
      else if (problems) problems->push_back("destroying MIG " + mig.profile + " on " + g.uuid + ": " + s.message());
    }
  }
  return destroyed;
}

Leftovers CleanLeftovers(const LeftoverPlaces& at, MpsControl& mps, GpuBackend* gpus) {
  Leftovers out;
  out.cgroups = SweepGroup(at.cgroups, at.group, SweepOptions{.remove = true});
  out.problems = out.cgroups.problems;
  out.mps_daemons = mps.StopLeftovers(&out.problems);
  if (gpus) out.mig_instances = DestroyAllMigInstances(*gpus, &out.problems);
  out.preempt_files = RemovePreemptFiles(at.work_root, &out.problems);
  return out;
}

std::string Leftovers::Describe() const {
  std::string line;
  auto add = [&](int n, const std::string& what) {
    if (n > 0) line += (line.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(cgroups.cgroups, "task cgroup(s) removed (" + std::to_string(cgroups.processes) + " process(es) killed)");
  add(mps_daemons, "MPS daemon(s) stopped");
  add(mig_instances, "MIG instance(s) destroyed");
  add(preempt_files, "preempt file(s) removed");
  line = line.empty() ? "nothing left by a previous run" : "cleaned up after a previous run: " + line;
  for (const std::string& p : problems) line += "; could not: " + p;
  return line;
}

}  // namespace allot
