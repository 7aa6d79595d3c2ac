// The seeded scenario generator: a fleet of identical GPU nodes in racks and zones, orgs and
// teams with guarantees summing to a share of the fleet, and a job stream with a realistic mix
// (many 1-GPU jobs, some 8- to 512-GPU gangs, heavy-tailed durations). Same seed, same scenario.
#include "sim/generate.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"

namespace allot {
namespace {

struct SizeClass {
  int gpus;          // total GPUs of the job
  int64_t permille;  // share of jobs
};

// Sizes: most jobs are one GPU; gangs of 8-GPU tasks up to 512 GPUs are rare.
constexpr SizeClass kSizes[] = {
    {1, 600}, {2, 100}, {4, 100}, {8, 120}, {16, 35}, {32, 20}, {64, 13}, {128, 7}, {256, 3}, {512, 2},
};

// Heavy-tailed duration multipliers (log-normal, sigma 1.2), drawn from the seeded stream and
// scaled so that the offered load hits the target.
double LogNormal(Rng& rng, double sigma) {
  // Box-Muller on the seeded stream.
  double u1 = std::max(rng.Uniform(), 1e-12), u2 = rng.Uniform();
  double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return std::exp(sigma * z);
}

}  // namespace

void Generate(const GenerateSpec& g, Scenario& sc) {
  Rng rng(g.seed);
  std::string gpu = "gpu/" + g.gpu_model;

  // 1. Fleet: zones → racks → nodes.
  for (int i = 0; i < g.nodes; ++i) {
    int rack = i / g.nodes_per_rack;
    int zone = rack / g.racks_per_zone;
    NodeSpec n;
    n.name = "gen-" + std::to_string(i);
    n.zone = "z" + std::to_string(zone);
    n.rack = "r" + std::to_string(rack);
    n.cpu = g.node_cpu;
    n.memory = g.node_memory;
    n.gpu_model = g.gpu_model;
    n.gpu_count = g.gpus_per_node;
    sc.nodes.push_back(std::move(n));
  }
  const int64_t fleet_gpus = static_cast<int64_t>(g.nodes) * g.gpus_per_node;

  // 2. Tenants: orgs, then teams round-robin under them, each team with a Zipf-like weight of
  //    activity; guarantees in whole GPUs proportional to activity, summing to the target.
  std::vector<double> activity(g.teams);
  double total_activity = 0;
  for (int t = 0; t < g.teams; ++t) {
    activity[t] = 1.0 / std::pow(t + 1.0, 0.8);
    total_activity += activity[t];
  }
  int64_t guaranteed_total = fleet_gpus * g.guarantee_permille / kMilli;
  std::vector<int64_t> team_guarantee(g.teams);
  for (int t = 0; t < g.teams; ++t) {
    team_guarantee[t] = static_cast<int64_t>(std::floor(guaranteed_total * activity[t] / total_activity));
  }
  std::vector<int64_t> org_guarantee(g.orgs, 0);
  for (int t = 0; t < g.teams; ++t) org_guarantee[t % g.orgs] += team_guarantee[t];
  for (int o = 0; o < g.orgs; ++o) {
    ScenarioTenant org;
    org.path = "org" + std::to_string(o);
    org.guarantee.push_back({gpu, org_guarantee[o] * kGpuUnit});
    sc.tenants.push_back(std::move(org));
  }
  std::vector<std::string> team_path(g.teams);
  for (int t = 0; t < g.teams; ++t) {
    ScenarioTenant team;
    team.path = "org" + std::to_string(t % g.orgs) + "/team" + std::to_string(t);
    team_path[t] = team.path;
    if (team_guarantee[t] > 0) team.guarantee.push_back({gpu, team_guarantee[t] * kGpuUnit});
    sc.tenants.push_back(std::move(team));
  }
  std::vector<double> cumulative(g.teams);
  double acc = 0;
  for (int t = 0; t < g.teams; ++t) cumulative[t] = (acc += activity[t] / total_activity);

  // 3. Jobs. Mean GPUs per job from the size mix sets the mean duration for the target load:
  //    load × fleet GPUs × day = jobs/day × mean GPUs × mean duration.
  double mean_gpus = 0;
  for (const SizeClass& s : kSizes) mean_gpus += s.gpus * s.permille / 1000.0;
  double mean_duration_s = (g.load_permille / 1000.0) * fleet_gpus * 86400.0 / (g.jobs_per_day * mean_gpus);
  const double sigma = 1.2;
  const double lognormal_mean = std::exp(sigma * sigma / 2);
  int64_t days = g.days_ms / 86400000;
  int64_t n_jobs = g.jobs_per_day * days;
  size_t first = sc.jobs.size();
  for (int64_t i = 0; i < n_jobs; ++i) {
    ScenarioJob j;
    JobSpec& s = j.spec;
    s.name = "job-" + std::to_string(i);
    s.submit_ms = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(g.days_ms) / 1000)) * 1000;
    double u = rng.Uniform();
    int team = static_cast<int>(std::lower_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
    j.tenant = team_path[std::min(team, g.teams - 1)];
    int64_t pick = static_cast<int64_t>(rng.Below(1000)), seen = 0;
    int gpus = 1;
    for (const SizeClass& c : kSizes) {
      seen += c.permille;
      if (pick < seen) {
        gpus = c.gpus;
        break;
      }
    }
    gpus = std::min<int64_t>(gpus, fleet_gpus);
    TaskGroup tg;
    int per_task = std::min(gpus, g.gpus_per_node);
    tg.count = (gpus + per_task - 1) / per_task;
    tg.gpu = per_task * kGpuUnit;
    tg.cpu = g.node_cpu / g.gpus_per_node * per_task;
    tg.memory = g.node_memory / g.gpus_per_node * per_task;
    s.groups.push_back(tg);
    s.topology = tg.count > 1 ? Topology::kRack : (per_task > 1 ? Topology::kNvlink : Topology::kNone);
    if (tg.count * per_task > static_cast<int64_t>(g.nodes_per_rack) * g.gpus_per_node) s.topology = Topology::kZone;
    int64_t pr = static_cast<int64_t>(rng.Below(10));
    s.priority = pr == 0 ? kPriorityHigh : pr < 3 ? kPriorityLow : kPriorityNormal;
    double d = mean_duration_s * LogNormal(rng, sigma) / lognormal_mean;
    s.duration_ms = std::clamp<int64_t>(static_cast<int64_t>(d) * 1000, 60000, 7 * 86400000LL);
    if (gpus >= 8) {
      s.checkpoint_interval_ms = 30 * 60000;
      s.grace_ms = 120000;
      s.min_runtime_ms = 10 * 60000;
    }
    sc.jobs.push_back(std::move(j));
  }
  OrderBySubmit(sc.jobs, first);  // ties in draw order
}

void OrderBySubmit(std::deque<ScenarioJob>& jobs, size_t first) {
  const size_t n = jobs.size() - first;
  std::vector<std::pair<int64_t, uint32_t>> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = {jobs[first + i].spec.submit_ms, static_cast<uint32_t>(i)};
  std::sort(order.begin(), order.end());
  std::vector<bool> done(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (done[i] || order[i].second == i) continue;
    // Position i takes the job at order[i]; that position takes its own, until the cycle closes.
    ScenarioJob held = std::move(jobs[first + i]);
    size_t at = i;
    while (order[at].second != i) {
      size_t from = order[at].second;
      jobs[first + at] = std::move(jobs[first + from]);
      done[at] = true;
      at = from;
    }
    jobs[first + at] = std::move(held);
    done[at] = true;
  }
}

}  // namespace allot
