// Fixture builders: a cluster in a few lines, jobs as one chained expression.
//
//   Cluster c;
//   c.AddNodes("h100-", 2, "z1", "r1", 64, 512, "H100-80GB", 8);
//   c.Tenant("research", {{"gpu/H100-80GB", "8"}});
//   c.Submit(JobBuilder("a").Tenant("research").Gpus(8).At(0));
//   Plan plan = c.RunPass(1000);  // applied, invariants checked
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/quantity.h"
#include "scheduler/scheduler.h"
#include "state/cluster_state.h"

namespace allot::testing {

inline constexpr const char* kH100 = "H100-80GB";

// The one job of that name in any tenant (tests whose names are unique across tenants); an
// invalid id when there is none or more than one.
inline JobId OnlyJobNamed(const ClusterState& st, std::string_view name) {
  const std::vector<JobId>& ids = st.JobsNamed(name);
  return ids.size() == 1 ? ids[0] : JobId();
}
inline constexpr int64_t kGiB = 1024;  // MiB

// Quota amounts keyed by resource name, written as people write them:
// {{"gpu/H100-80GB", "8"}, {"cpu", "96"}, {"memory", "512Gi"}}.
using Quota = std::map<std::string, std::string>;

// A TenantSpec from quota maps. Resources must already be known to `names` (add nodes first).
inline TenantSpec MakeTenantSpec(const ResourceNames& names, const std::string& path, const Quota& guarantee = {},
                                 const Quota& max = {}, int64_t weight = kMilli) {
  TenantSpec spec;
  spec.path = path;
  spec.weight = weight;
  auto amount = [&](const std::string& resource, const std::string& text) -> std::pair<ResourceId, int64_t> {
    ResourceId r = names.Find(resource);
    EXPECT_NE(r, ResourceNames::kInvalid) << "unknown resource " << resource;
    Result<int64_t> v = ParseAmount(r, text);
    EXPECT_TRUE(v.has_value()) << text;
    return {r, v.value_or(0)};
  };
  for (const auto& [resource, text] : guarantee) {
    auto [r, v] = amount(resource, text);
    if (r != ResourceNames::kInvalid) spec.SetGuarantee(r, v);
  }
  for (const auto& [resource, text] : max) {
    auto [r, v] = amount(resource, text);
    if (r != ResourceNames::kInvalid) spec.max[r] = v;
  }
  return spec;
}

class JobBuilder {
 public:
  explicit JobBuilder(std::string name) { spec_.name = std::move(name); }

  JobBuilder& Tenant(std::string path) { tenant_ = std::move(path); return *this; }
  JobBuilder& Gpus(int per_task, std::string model = kH100) {
    group_.gpu = per_task * kGpuUnit;
    model_ = std::move(model);
    return *this;
  }
  JobBuilder& Tasks(int n) { group_.count = n; return *this; }
  JobBuilder& Cpus(int64_t per_task) { group_.cpu = per_task * kMilli; return *this; }
  JobBuilder& MemGi(int64_t per_task) { group_.memory = per_task * kGiB; return *this; }
  JobBuilder& Topology(allot::Topology t) { spec_.topology = t; return *this; }
  JobBuilder& Priority(int32_t p) { spec_.priority = p; return *this; }
  JobBuilder& At(int64_t submit_ms) { spec_.submit_ms = submit_ms; return *this; }
  JobBuilder& Grace(int64_t ms) { spec_.grace_ms = ms; return *this; }
  JobBuilder& Duration(int64_t ms) { spec_.duration_ms = ms; return *this; }
  JobBuilder& Command(std::vector<std::string> argv) { spec_.command = std::move(argv); return *this; }
  JobBuilder& Environment(JobEnvironment e) { spec_.environment = std::move(e); return *this; }
  JobBuilder& Reservation(std::string name) { spec_.reservation = std::move(name); return *this; }
  JobBuilder& TimeLimit(int64_t ms) { spec_.time_limit_ms = ms; return *this; }
  // Element `index` of array `array` (named array-index, as ExpandArray names it).
  JobBuilder& Element(const std::string& array, int32_t index, int32_t count, int32_t parallel, int64_t frame = -1) {
    spec_.name = array + "-" + std::to_string(index);
    spec_.array = {array, index, frame, count, parallel};
    return *this;
  }
  JobBuilder& Retries(int32_t n) { spec_.retries = n; return *this; }
  JobBuilder& After(std::string job, AfterState state = AfterState::kSucceeded) {
    spec_.after.push_back({std::move(job), state});
    return *this;
  }
  // "driver>=550,interconnect=nvlink" (fleet/labels.h).
  JobBuilder& Require(const std::string& text) {
    auto r = ParseRequirementList("require", text);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (r) spec_.require = *r;
    return *this;
  }

  // Resolves the tenant path and GPU model against `state`.
  JobSpec Build(const ClusterState& state) const {
    JobSpec spec = spec_;
    spec.tenant = state.tenants().Find(tenant_);
    EXPECT_TRUE(spec.tenant.valid()) << "unknown tenant " << tenant_;
    if (group_.gpu > 0) spec.gpu_resource = state.resource_names().Find("gpu/" + model_);
    spec.groups = {group_};
    return spec;
  }

 private:
  JobSpec spec_;
  TaskGroup group_;
  std::string tenant_ = "default";
  std::string model_ = kH100;
};

class Cluster {
 public:
  ClusterState state;
  SchedulerConfig config;

  void Apply(EventBody body, int64_t now_ms = 0) {
    Status s = state.apply({now_ms, std::move(body)});
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  // `count` nodes named <prefix><position in the fleet> ("h100-0", "h100-1", …; a second call
  // continues the numbering). gpus == 0 makes CPU-only nodes.
  void AddNodes(const std::string& prefix, int count, const std::string& zone, const std::string& rack,
                int64_t cpus, int64_t mem_gi, const std::string& model, int gpus,
                const std::string& nvlink_domain = "", const NodeLabels& labels = {}) {
    for (int i = 0; i < count; ++i) {
      NodeSpec spec{prefix + std::to_string(state.fleet().size()), zone, rack, nvlink_domain,
                    cpus * kMilli, mem_gi * kGiB, gpus > 0 ? model : "", gpus};
      spec.labels = labels;
      Apply(NodeAdded{spec});
    }
  }

  TenantId Tenant(const std::string& path, const Quota& guarantee = {}, const Quota& max = {},
                  int64_t weight = kMilli) {
    Apply(TenantUpserted{MakeTenantSpec(state.resource_names(), path, guarantee, max, weight)});
    return state.tenants().Find(path);
  }

  JobId Submit(const JobBuilder& b) {
    JobId id = state.next_job_id();
    JobSpec spec = b.Build(state);
    int64_t at = spec.submit_ms;
    Apply(JobSubmitted{std::move(spec)}, at);
    return id;
  }

  // Plans one pass at `now_ms`, applies it, and checks the state's invariants.
  Plan RunPass(int64_t now_ms) {
    Plan plan = PlanPass(state, now_ms, config);
    Status verified = VerifyPlan(state, plan);
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    for (const Event& e : plan.ToEvents()) {
      Status s = state.apply(e);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    Status inv = state.VerifyInvariants();
    EXPECT_TRUE(inv.ok()) << inv.ToString();
    return plan;
  }

  // A preempted job exits (saving no work) and is requeued.
  void Stop(const std::string& job, int64_t now_ms) { Apply(JobStopped{Id(job), 0}, now_ms); }
  void Finish(const std::string& job, int64_t now_ms) { Apply(JobFinished{Id(job)}, now_ms); }

  JobId Id(const std::string& job) const { return OnlyJobNamed(state, job); }
  const Job& job(const std::string& name) const { return state.job(Id(name)); }
  JobState StateOf(const std::string& name) const { return job(name).state; }
  ResourceId Res(const std::string& name) const { return state.resource_names().Find(name); }

  // Names of running jobs whose name starts with `prefix`, in id order.
  std::vector<std::string> Running(const std::string& prefix = "") const {
    std::vector<std::string> out;
    for (const Job& j : state.jobs()) {
      if (j.state == JobState::kRunning && j.spec.name.rfind(prefix, 0) == 0) out.push_back(j.spec.name);
    }
    return out;
  }
};

// The plan's pending reason for `job`, or "" when the plan gives none.
inline std::string PendingReasonOf(const Plan& plan, JobId job) {
  for (const PendingReason& p : plan.pending) {
    if (p.job == job) return plan.Why(p);
  }
  return "";
}

}  // namespace allot::testing
