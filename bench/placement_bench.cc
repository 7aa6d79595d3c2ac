// Placement throughput on a 50,000-GPU fleet (6,250 nodes × 8 H100) at several fill levels.
// Each iteration plans one pass over a batch of pending jobs against the same state (a pass
// never mutates state), so items/s is scheduling decisions per second.
#include <cstdio>
#include <cstdlib>
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <tuple>

#include "scheduler/scheduler.h"
#include "state/cluster_state.h"

namespace allot {
namespace {

constexpr int kNodes = 6250;
constexpr int kGpusPerNode = 8;
constexpr int kTeams = 30;

void Must(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup: %s\n", s.message().c_str());
    std::abort();
  }
}

// 6,250 nodes × 8 H100 in 4 zones of racks of 32.
void AddFleet(ClusterState& s) {
  for (int i = 0; i < kNodes; ++i) {
    NodeSpec n;
    n.name = "n" + std::to_string(i);
    n.zone = "z" + std::to_string(i / 1600);
    n.rack = "r" + std::to_string(i / 32);
    n.cpu = 96000;
    n.memory = 1024 * 1024;
    n.gpu_model = "H100-80GB";
    n.gpu_count = kGpusPerNode;
    Must(s.apply({0, NodeAdded{n}}));
  }
}

// A fleet filled to `fill_pct` with 1-GPU jobs (packed by the real scheduler), then `batch`
// pending jobs of `tasks` × 1 GPU with the given topology, spread over kTeams teams.
ClusterState Build(int fill_pct, int batch, int tasks, Topology topology) {
  ClusterState s;
  AddFleet(s);
  for (int o = 0; o < 3; ++o) Must(s.apply({0, TenantUpserted{{.path = "org" + std::to_string(o)}}}));
  for (int t = 0; t < kTeams; ++t) {
    Must(s.apply({0, TenantUpserted{{.path = "org" + std::to_string(t % 3) + "/team" + std::to_string(t)}}}));
  }
  ResourceId gpu = s.resource_names().Find("gpu/H100-80GB");
  auto submit = [&](const std::string& name, int t, int ntasks, Topology topo) {
    JobSpec j;
    j.name = name;
    j.tenant = s.tenants().Find("org" + std::to_string(t % 3) + "/team" + std::to_string(t));
    j.gpu_resource = gpu;
    TaskGroup g;  // one whole GPU per task
    g.count = ntasks;
    g.gpu = kGpuUnit;
    g.cpu = 4000;
    g.memory = 16384;
    j.groups = {g};
    j.topology = topo;
    j.duration_ms = 3600000;
    Must(s.apply({0, JobSubmitted{j}}));
  };
  int fill = kNodes * kGpusPerNode * fill_pct / 100;
  for (int i = 0; i < fill; ++i) submit("fill" + std::to_string(i), i % kTeams, 1, Topology::kNone);
  SchedulerConfig cfg;
  for (const Event& e : PlanPass(s, 0, cfg).ToEvents()) Must(s.apply(e));
  for (int i = 0; i < batch; ++i) submit("job" + std::to_string(i), i % kTeams, tasks, topology);
  return s;
}

void RunPasses(benchmark::State& st, const ClusterState& s) {
  SchedulerConfig cfg;
  size_t placed = 0;
  for (auto _ : st) {
    Plan p = PlanPass(s, 1000, cfg);
    placed = p.placements.size();
    benchmark::DoNotOptimize(p);
  }
  st.counters["placed_per_pass"] = static_cast<double>(placed);
  if (placed == 0) {  // a figure of 0/s would be a broken set-up, not a measurement
    std::fprintf(stderr, "bench: a pass placed nothing; the set-up is wrong\n");
    std::exit(1);
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * placed));
}

// One state per (fill, batch shape), built on first use: building takes longer than measuring.
const ClusterState& Cached(int fill_pct, int batch, int tasks, Topology topology) {
  static std::map<std::tuple<int, int, int, Topology>, std::unique_ptr<ClusterState>> cache;
  auto& slot = cache[{fill_pct, batch, tasks, topology}];
  if (!slot) slot = std::make_unique<ClusterState>(Build(fill_pct, batch, tasks, topology));
  return *slot;
}

void BM_SingleGpuPlacements(benchmark::State& st) {
  RunPasses(st, Cached(static_cast<int>(st.range(0)), 2000, 1, Topology::kNone));
}
BENCHMARK(BM_SingleGpuPlacements)->ArgName("fill_pct")->Arg(0)->Arg(50)->Arg(90)->Unit(benchmark::kMillisecond);

void BM_NvlinkGangs8(benchmark::State& st) {
  RunPasses(st, Cached(static_cast<int>(st.range(0)), 500, 8, Topology::kNvlink));
}
BENCHMARK(BM_NvlinkGangs8)->ArgName("fill_pct")->Arg(0)->Arg(50)->Arg(90)->Unit(benchmark::kMillisecond);

// A deep backlog on a full fleet: every GPU runs a 1-GPU job of one of 300 teams, and `pending`
// jobs of mixed shapes (1, 2, 4 and 8 GPUs; 4×8 rack gangs), a tenth of them high priority,
// wait. Nothing fits; the high-priority ones preempt their own team's jobs. Measures what one
// pass costs the daemon as the queue grows (time per pass, pending jobs examined per second).
ClusterState BuildBacklog(int pending) {
  ClusterState s;
  AddFleet(s);
  constexpr int kOrgs = 10, kBacklogTeams = 300;
  for (int o = 0; o < kOrgs; ++o) Must(s.apply({0, TenantUpserted{{.path = "org" + std::to_string(o)}}}));
  auto team = [&](int t) { return "org" + std::to_string(t % kOrgs) + "/team" + std::to_string(t); };
  for (int t = 0; t < kBacklogTeams; ++t) Must(s.apply({0, TenantUpserted{{.path = team(t)}}}));
  ResourceId gpu = s.resource_names().Find("gpu/H100-80GB");
  auto submit = [&](const std::string& name, int t, int ntasks, int gpus, Topology topo, int32_t priority) {
    JobSpec j;
    j.name = name;
    j.tenant = s.tenants().Find(team(t));
    j.gpu_resource = gpu;
    TaskGroup g;  // `gpus` whole GPUs per task
    g.count = ntasks;
    g.gpu = gpus * kGpuUnit;
    g.cpu = 4000 * gpus;
    g.memory = 16384 * gpus;
    j.groups = {g};
    j.topology = topo;
    j.priority = priority;
    j.duration_ms = 3600000;
    Must(s.apply({0, JobSubmitted{j}}));
  };
  for (int i = 0; i < kNodes * kGpusPerNode; ++i) {
    submit("fill" + std::to_string(i), i % kBacklogTeams, 1, 1, Topology::kNone, kPriorityNormal);
  }
  SchedulerConfig cfg;
  for (const Event& e : PlanPass(s, 0, cfg).ToEvents()) Must(s.apply(e));
  const int shapes[][3] = {{1, 1, 0}, {1, 2, 0}, {1, 4, 0}, {1, 8, 0}, {4, 8, 1}};  // tasks, GPUs, rack
  for (int i = 0; i < pending; ++i) {
    const int* sh = shapes[i % 5];
    submit("job" + std::to_string(i), (i * 7) % kBacklogTeams, sh[0], sh[1], sh[2] ? Topology::kRack : Topology::kNone,
           i % 10 == 0 ? kPriorityHigh : kPriorityNormal);
  }
  return s;
}

void BM_PassWithBacklog(benchmark::State& st) {
  static std::map<int, std::unique_ptr<ClusterState>> cache;
  int pending = static_cast<int>(st.range(0));
  auto& slot = cache[pending];
  if (!slot) slot = std::make_unique<ClusterState>(BuildBacklog(pending));
  SchedulerConfig cfg;
  size_t preempted = 0;
  for (auto _ : st) {
    Plan p = PlanPass(*slot, 1000, cfg);
    preempted = p.preemptions.size();
    benchmark::DoNotOptimize(p);
  }
  st.counters["victims_per_pass"] = static_cast<double>(preempted);
  if (preempted == 0) {  // the high-priority tenth preempts: none means the set-up is wrong
    std::fprintf(stderr, "bench: a backlog pass preempted nothing; the set-up is wrong\n");
    std::exit(1);
  }
  st.SetItemsProcessed(st.iterations() * pending);
}
BENCHMARK(BM_PassWithBacklog)->ArgName("pending")->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// The same pass as the daemon runs it between two backfill intervals: the first pass's
// backfill reservation is kept in the state (ReservationSet), as applying its plan does, so
// the pass reads it rather than walking the 50,000 running jobs' end times again.
void BM_PassWithBacklogHeldReservation(benchmark::State& st) {
  static std::map<int, std::unique_ptr<ClusterState>> cache;
  int pending = static_cast<int>(st.range(0));
  auto& slot = cache[pending];
  SchedulerConfig cfg;
  if (!slot) {
    slot = std::make_unique<ClusterState>(BuildBacklog(pending));
    Plan first = PlanPass(*slot, 0, cfg);
    if (!first.reservation_update) {
      std::fprintf(stderr, "bench: the backlog pass reserved nothing; the set-up is wrong\n");
      std::exit(1);
    }
    Must(slot->apply({0, *first.reservation_update}));
  }
  size_t preempted = 0;
  for (auto _ : st) {
    Plan p = PlanPass(*slot, 1000, cfg);
    preempted = p.preemptions.size();
    if (p.reservation_update) {
      std::fprintf(stderr, "bench: the held reservation was recomputed; the set-up is wrong\n");
      std::exit(1);
    }
    benchmark::DoNotOptimize(p);
  }
  st.counters["victims_per_pass"] = static_cast<double>(preempted);
  if (preempted == 0) {
    std::fprintf(stderr, "bench: a backlog pass preempted nothing; the set-up is wrong\n");
    std::exit(1);
  }
  st.SetItemsProcessed(st.iterations() * pending);
}
BENCHMARK(BM_PassWithBacklogHeldReservation)->ArgName("pending")->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace allot

BENCHMARK_MAIN();
