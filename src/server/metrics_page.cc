#include "server/metrics_page.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <map>
#include <set>
#include <tuple>

#include "metering/budget_gate.h"
#include "metrics/exposition.h"
#include "state/reservation.h"

namespace allot {
namespace {

constexpr const char* kGpuStates[] = {"idle", "allocated", "reserved", "cordoned", "repair"};

std::string ModelOf(const ClusterState& st, ResourceId r) {
  std::string n = st.resource_names().Name(r);
  return n.rfind("gpu/", 0) == 0 ? n.substr(4) : n;
}

// A free GPU's state by its node's condition; a held GPU is allocated whatever the condition.
const char* FreeGpuState(NodeCondition c) {
  switch (c) {
    case NodeCondition::kReady: return "idle";
    case NodeCondition::kRepair:
    case NodeCondition::kDown: return "repair";
    default: return "cordoned";  // cordoned, draining, accepting: not schedulable, not broken
  }
}

// By node: the GPUs that confirmed reservations hold there now (the window open at `now`: start ≤
// now < end) and that the reservations' own jobs do not use. A free GPU on a ready node is counted
// reserved while its node still owes such holds, else idle; so reserved only ever moves GPUs out
// of idle, and the five states still sum to the fleet. Holds are counts, not GPU indices, so any
// free GPU of the node may stand for them; a hold a job of another tenant sits on (lent work) is
// allocated, not reserved, until the reservation reclaims it.
std::vector<int32_t> UnusedHolds(const ClusterState& st, int64_t now) {
  std::vector<int32_t> owed(st.fleet().nodes().size(), 0);
  std::set<std::pair<uint32_t, std::string>> open;  // tenant, reservation name
  for (const CapacityReservation& r : st.reservations()) {
    if (r.state != ReservationState::kConfirmed) continue;
    size_t w = r.spec.CurrentWindow(now);
    if (w >= r.spec.windows.size() || w >= r.holds.size() || r.spec.windows[w].start_ms > now) continue;
    for (const NodeHold& h : r.holds[w]) owed[h.node.value()] += h.gpus;
    open.insert({r.spec.tenant.value(), r.spec.name});
  }
  if (open.empty()) return owed;
  for (const Job& j : st.jobs()) {
    if (!j.holds_resources() || j.spec.reservation.empty() || !open.count({j.spec.tenant.value(), j.spec.reservation})) continue;
    for (const TaskPlacement& p : j.placement) owed[p.node.value()] -= std::popcount(p.gpu_mask);
  }
  return owed;
}

void FleetFamilies(Exposition& out, const ClusterState& st, int64_t now) {
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> gpus;  // model, zone, state
  std::map<std::pair<std::string, std::string>, int64_t> units;               // model, pool
  const auto& zones = st.fleet().domains(DomainKind::kZone);
  const std::vector<int32_t> owed = UnusedHolds(st, now);
  for (const Node& n : st.fleet().nodes()) {
    if (n.gpu_count == 0) continue;
    std::string model = ModelOf(st, n.gpu_resource), zone = zones[n.zone].name;
    for (const char* s : kGpuStates) gpus[{model, zone, s}] += 0;  // every state present, 0 or not
    int32_t reserve = n.condition == NodeCondition::kReady ? owed[n.id.value()] : 0;
    for (int i = 0; i < n.gpu_count; ++i) {
      bool free = (n.free.gpu_mask >> i) & 1;
      const char* state = free ? FreeGpuState(n.condition) : "allocated";
      if (free && reserve > 0) {
        state = "reserved";
        --reserve;
      }
      gpus[{model, zone, state}] += 1;
    }
    if (n.shared()) units[{model, SharingName(n.pool.sharing)}] += 0;
  }
  for (const Job& j : st.jobs()) {
    if (!j.holds_resources()) continue;
    for (const TaskPlacement& p : j.placement) {
      const Node& n = st.fleet().nodes()[p.node.value()];
      if (n.shared() && p.share.kind != ShareKind::kWhole) units[{ModelOf(st, n.gpu_resource), SharingName(n.pool.sharing)}] += 1;
    }
  }
  out.Family("allot_fleet_gpus", "gauge", "GPUs by model, zone and state (idle, allocated, reserved, cordoned, repair).");
  for (const auto& [k, v] : gpus) {
    out.Sample("allot_fleet_gpus", {{"model", std::get<0>(k)}, {"zone", std::get<1>(k)}, {"state", std::get<2>(k)}}, v);
  }
  out.Family("allot_fleet_gpu_units_allocated", "gauge",
             "Shares held in shared pools (MIG instances, MPS clients, time-slice replicas) by model and pool.");
  for (const auto& [k, v] : units) out.Sample("allot_fleet_gpu_units_allocated", {{"model", k.first}, {"pool", k.second}}, v);
}

void TenantFamilies(Exposition& out, const ClusterState& st, int64_t now) {
  const QuotaTree& tree = st.tenants();
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> held;  // tenant, model, class (GPU units)
  std::map<std::pair<std::string, std::string>, int64_t> jobs;                // tenant, state
  // A job waits within its guarantee when its tenant's unused guarantee of the job's GPU model
  // holds all it asks: it should start at once (reclaim frees what was lent). The oldest such
  // wait per tenant, for the SLO alert; a tenant with none has no series.
  std::map<std::string, double> oldest;
  // From the state, so it survives restarts: every job that has started, its first wait.
  HistogramVec wait({"class"}, {1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400});
  for (const Job& j : st.jobs()) {  // one pass for every family read from the jobs
    const Tenant& t = tree.tenant(j.spec.tenant);
    jobs[{t.path, JobStateName(j.state)}] += 1;
    if (j.holds_resources() && j.demand.gpu > 0) {
      held[{t.path, ModelOf(st, j.demand.gpu_resource), AdmissionClassName(j.admission)}] += j.demand.gpu;
    }
    if (j.first_started_ms >= 0) {
      wait.Observe({AdmissionClassName(j.admission)}, static_cast<double>(j.first_started_ms - j.spec.submit_ms) / 1000.0);
    }
    const ResourceId r = j.demand.gpu_resource;
    if (j.state == JobState::kPending && j.demand.gpu > 0 && t.has_guarantee(r) && t.usage[r] + j.demand.gpu <= t.guarantee[r]) {
      double& age = oldest[t.path];
      age = std::max(age, static_cast<double>(std::max<int64_t>(0, now - j.queued_ms)) / 1000.0);
    }
  }
  out.Family("allot_tenant_gpus", "gauge", "GPUs held by each tenant's running jobs, by model and admission class.");
  for (const auto& [k, v] : held) {
    out.Sample("allot_tenant_gpus", {{"tenant", std::get<0>(k)}, {"model", std::get<1>(k)}, {"class", std::get<2>(k)}},
               static_cast<double>(v) / kGpuUnit);
  }
  const int nres = st.resource_names().size();
  out.Family("allot_tenant_guarantee_gpus", "gauge", "Each tenant's guaranteed GPUs per model (where set).");
  for (const Tenant& t : tree.tenants()) {
    if (t.id == tree.root() || t.removed) continue;
    for (int i = kFirstGpu; i < nres; ++i) {
      ResourceId r = static_cast<ResourceId>(i);
      if (t.has_guarantee(r)) out.Sample("allot_tenant_guarantee_gpus", {{"tenant", t.path}, {"model", ModelOf(st, r)}}, static_cast<double>(t.guarantee[r]) / kGpuUnit);
    }
  }
  out.Family("allot_tenant_max_gpus", "gauge", "Each tenant's GPU ceiling per model (where not unlimited).");
  for (const Tenant& t : tree.tenants()) {
    if (t.id == tree.root() || t.removed) continue;
    for (int i = kFirstGpu; i < nres; ++i) {
      ResourceId r = static_cast<ResourceId>(i);
      if (t.max[r] != kUnlimited) out.Sample("allot_tenant_max_gpus", {{"tenant", t.path}, {"model", ModelOf(st, r)}}, static_cast<double>(t.max[r]) / kGpuUnit);
    }
  }
  // Unweighted: the largest fraction of the fleet's capacity of any resource the subtree holds.
  out.Family("allot_tenant_dominant_share", "gauge",
             "Each tenant subtree's dominant share: the largest fraction of the fleet's capacity of any one resource it holds.");
  const Resources& cap = st.fleet().capacity();
  for (const Tenant& t : tree.tenants()) {
    if (t.id == tree.root() || t.removed) continue;
    double share = 0;
    for (int i = 0; i < nres; ++i) {
      ResourceId r = static_cast<ResourceId>(i);
      if (cap[r] > 0) share = std::max(share, static_cast<double>(t.usage[r]) / static_cast<double>(cap[r]));
    }
    out.Sample("allot_tenant_dominant_share", {{"tenant", t.path}}, share);
  }
  out.Family("allot_jobs", "gauge", "Jobs by tenant and state.");
  for (const auto& [k, v] : jobs) out.Sample("allot_jobs", {{"tenant", k.first}, {"state", k.second}}, v);

  out.Family("allot_tenant_oldest_pending_within_guarantee_seconds", "gauge",
             "Per tenant, how long the oldest pending job that fits within the tenant's unused GPU guarantee has waited.");
  for (const auto& [path, age] : oldest) {
    out.Sample("allot_tenant_oldest_pending_within_guarantee_seconds", {{"tenant", path}}, age);
  }

  out.HistogramFamily("allot_job_wait_seconds", "Seconds from submission to first start of every job that has started, by admission class.", wait);
}

void BillingFamilies(Exposition& out, const Controller& ctl, const Controller::View& v) {
  const MeteringSink* m = ctl.metering();
  if (!m) return;
  const QuotaTree& tree = v.state.tenants();
  std::vector<BudgetStatus> status = BudgetsAt(v.state, m->billing(), v.now_ms);
  out.Family("allot_tenant_spend_micros", "gauge",
             "Each budgeted tenant's spend in the current billing period, in millionths of the rate card's currency.");
  for (const BudgetStatus& s : status) {
    out.Sample("allot_tenant_spend_micros", {{"tenant", tree.tenant(s.tenant).path}, {"period", s.period.label}}, static_cast<double>(s.spent_micros));
  }
  out.Family("allot_tenant_budget_used_ratio", "gauge", "Each tenant's use of its budget this period (what: spend, gpu-hours); 1 is the cap.");
  for (const BudgetStatus& s : status) {
    const Budget* b = v.state.billing().BudgetOf(s.tenant);
    if (!b) continue;
    const std::string& path = tree.tenant(s.tenant).path;
    if (b->spend_micros > 0) out.Sample("allot_tenant_budget_used_ratio", {{"tenant", path}, {"what", "spend"}}, static_cast<double>(s.spent_micros) / b->spend_micros);
    if (b->gpu_hours_milli > 0) out.Sample("allot_tenant_budget_used_ratio", {{"tenant", path}, {"what", "gpu-hours"}}, static_cast<double>(s.gpu_hours_milli) / b->gpu_hours_milli);
  }
}

void NodeFamilies(Exposition& out, const ClusterState& st, const std::vector<AgentSession>& sessions) {
  out.Family("allot_node_condition", "gauge", "1 for each node's current condition, 0 for the others.");
  constexpr NodeCondition kAll[] = {NodeCondition::kReady, NodeCondition::kCordoned, NodeCondition::kDraining,
                                    NodeCondition::kDown, NodeCondition::kAccepting, NodeCondition::kRepair};
  for (const Node& n : st.fleet().nodes()) {
    for (NodeCondition c : kAll) out.Sample("allot_node_condition", {{"node", n.name}, {"condition", NodeConditionName(c)}}, c == n.condition ? 1 : 0);
  }
  // What an agent's node cannot confine (Runner::IsolationGaps), for an alert on partial nodes.
  out.Family("allot_node_isolation_complete", "gauge",
             "1 when the node's agent confines tasks in every way (sandbox, tenant uids, device cgroup, cpu, memory and pids "
             "limits), 0 when it lacks what `missing` names; only for agents that say.");
  for (const AgentSession& s : sessions) {
    if (!s.isolation_gaps) continue;
    std::string missing;
    for (const std::string& g : *s.isolation_gaps) missing += (missing.empty() ? "" : ",") + g;
    out.Sample("allot_node_isolation_complete", {{"node", s.node}, {"missing", missing}}, missing.empty() ? 1 : 0);
  }
  // Who holds each GPU: (node, index) → tenant path.
  std::map<std::pair<uint32_t, int>, std::string> holder;
  for (const Job& j : st.jobs()) {
    if (!j.holds_resources()) continue;
    for (const TaskPlacement& p : j.placement) {
      for (uint64_t m = p.gpu_mask; m; m &= m - 1) holder[{p.node.value(), std::countr_zero(m)}] = st.tenants().tenant(j.spec.tenant).path;
    }
  }
  struct Reading {
    Labels labels;
    const GpuTelemetry* g;
    uint64_t xids;
  };
  std::vector<Reading> readings;
  for (const AgentSession& s : sessions) {
    NodeId node = st.fleet().Find(s.node);
    std::string model = node.valid() ? ModelOf(st, st.fleet().nodes()[node.value()].gpu_resource) : "";
    for (const GpuTelemetry& g : s.gpus) {
      std::string tenant;
      if (node.valid()) {
        auto h = holder.find({node.value(), g.index});
        if (h != holder.end()) tenant = h->second;
      }
      auto x = s.xid_total.find(g.index);
      readings.push_back({{{"node", s.node}, {"gpu", std::to_string(g.index)}, {"UUID", g.uuid}, {"model", model}, {"tenant", tenant}},
                          &g, x == s.xid_total.end() ? 0 : x->second});
    }
  }
  auto family = [&](const char* name, const char* type, const char* help, auto value) {
    out.Family(name, type, help);
    for (const Reading& r : readings) {
      if (auto v = value(*r.g, r.xids)) out.Sample(name, r.labels, *v);
    }
  };
  using Opt = std::optional<double>;
  family("allot_gpu_utilization_ratio", "gauge", "GPU utilisation, 0 to 1, as the agent last reported it (DCGM_FI_DEV_GPU_UTIL / 100).",
         [](const GpuTelemetry& g, uint64_t) -> Opt { return g.utilization_percent ? Opt(*g.utilization_percent / 100.0) : std::nullopt; });
  family("allot_gpu_memory_used_bytes", "gauge", "GPU framebuffer memory used, bytes (DCGM_FI_DEV_FB_USED).",
         [](const GpuTelemetry& g, uint64_t) -> Opt { return g.memory_used_mib ? Opt(static_cast<double>(*g.memory_used_mib) * 1048576.0) : std::nullopt; });
  family("allot_gpu_temperature_celsius", "gauge", "GPU temperature, degrees Celsius (DCGM_FI_DEV_GPU_TEMP).",
         [](const GpuTelemetry& g, uint64_t) -> Opt { return g.temperature_c ? Opt(static_cast<double>(*g.temperature_c)) : std::nullopt; });
  family("allot_gpu_power_watts", "gauge", "GPU power draw, watts (DCGM_FI_DEV_POWER_USAGE).",
         [](const GpuTelemetry& g, uint64_t) -> Opt { return g.power_mw ? Opt(static_cast<double>(*g.power_mw) / 1000.0) : std::nullopt; });
  out.Family("allot_gpu_ecc_errors_total", "counter", "GPU ECC errors since the driver loaded, by type: corrected (single-bit) or uncorrected (double-bit) (DCGM_FI_DEV_ECC_SBE/DBE_VOL_TOTAL).");
  for (const Reading& r : readings) {
    for (auto [type, v] : {std::pair{"corrected", r.g->ecc_corrected}, std::pair{"uncorrected", r.g->ecc_uncorrected}}) {
      if (!v) continue;
      Labels l = r.labels;
      l.emplace_back("type", type);
      out.Sample("allot_gpu_ecc_errors_total", l, static_cast<double>(*v));
    }
  }
  family("allot_gpu_xid_errors_total", "counter", "Xid errors the agent reported for the GPU since it registered (DCGM_FI_DEV_XID_ERRORS counts them).",
         [](const GpuTelemetry&, uint64_t x) -> Opt { return static_cast<double>(x); });
}

// The anomaly alerts (docs/alerts.md): every kind from the start, 0 until one is raised.
void AlertFamilies(Exposition& out, const AlertMonitor::Counts& c) {
  out.Family("allot_alerts_total", "counter", "Anomaly alerts raised since allotd started, by kind.");
  for (AlertKind k : kAlertKinds) {
    out.Sample("allot_alerts_total", {{"kind", AlertKindName(k)}}, static_cast<double>(c.raised[static_cast<size_t>(k)]));
  }
  out.Family("allot_alert_deliveries_total", "counter", "Alerts the webhook accepted (a 2xx answer).");
  out.Sample("allot_alert_deliveries_total", {}, static_cast<double>(c.delivered));
  out.Family("allot_alert_deliveries_failed_total", "counter",
             "Webhook deliveries that failed (unreachable, timed out or not answered 2xx), each attempt counted; retried with back-off.");
  out.Sample("allot_alert_deliveries_failed_total", {}, static_cast<double>(c.failed_attempts));
  out.Family("allot_alert_deliveries_dropped_total", "counter", "Alerts given up: every attempt failed, or the queue was full.");
  out.Sample("allot_alert_deliveries_dropped_total", {}, static_cast<double>(c.dropped));
}

}  // namespace

std::string RenderMetrics(const Controller& ctl, const AgentRegistry& agents, const DaemonMetrics& own,
                          const AlertMonitor* alerts) {
  Exposition out;
  std::vector<AgentSession> sessions = agents.All();
  ctl.ReadView([&](const Controller::View& v) {
    FleetFamilies(out, v.state, v.now_ms);
    TenantFamilies(out, v.state, v.now_ms);
    NodeFamilies(out, v.state, sessions);
    BillingFamilies(out, ctl, v);
    return 0;
  });
  out.Family("allot_preemptions_total", "counter", "Preemptions the scheduler started since allotd started, by reason.");
  {
    // Every reason from the start, 0 until one happens: a rate over it has data from the first scrape.
    std::map<std::string, double> by_reason;
    for (PreemptKind k : {PreemptKind::kReclaim, PreemptKind::kPriority, PreemptKind::kFairShare, PreemptKind::kReservation,
                          PreemptKind::kWindowEnd, PreemptKind::kInterference,
                          PreemptKind::kIsolation}) {
      by_reason[PreemptKindName(k)] = 0;
    }
    for (const auto& [k, v] : own.preemptions.Snapshot()) by_reason[k[0]] = static_cast<double>(v);
    for (const auto& [reason, v] : by_reason) out.Sample("allot_preemptions_total", {{"reason", reason}}, v);
  }
  out.HistogramFamily("allot_scheduler_pass_duration_seconds", "Seconds each scheduling pass took (steady clock, around the pass).", own.scheduler_pass);
  out.HistogramFamily("allot_journal_commit_duration_seconds", "Seconds each journal group commit took (steady clock).", own.journal_commit);
  out.HistogramFamily("allot_api_request_duration_seconds", "Seconds the API took to answer, by route pattern and HTTP status (long polls not counted).", own.api_request);
  if (alerts) AlertFamilies(out, alerts->counts());
  return out.text();
}

}  // namespace allot
