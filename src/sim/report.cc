#include "sim/report.h"

#include "scheduler/service_reconciler.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/quantity.h"
#include "spec/placement_view.h"
#include "spec/sizing_view.h"
#include "metering/money.h"

namespace allot {
namespace {

using Json = nlohmann::ordered_json;

// Milliseconds as seconds: an integer when whole, else a decimal.
Json Seconds(int64_t ms) {
  if (ms % 1000 == 0) return ms / 1000;
  return static_cast<double>(ms) / 1000.0;
}

// Nearest-rank percentile of an unsorted list, in seconds.
Json Percentile(std::vector<int64_t> v, int pct) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = (v.size() * pct + 99) / 100;
  return Seconds(v[std::max<size_t>(rank, 1) - 1]);
}

double GpuSeconds(__int128 unit_ms) { return static_cast<double>(unit_ms) / (1e3 * kGpuUnit); }

const char* ReportState(JobState s) {
  switch (s) {
    case JobState::kPending: return "pending";
    case JobState::kRunning:
    case JobState::kPreempting: return "running";
    case JobState::kFinished: return "finished";
    case JobState::kRejected: return "rejected";
    case JobState::kCancelled: return "cancelled";
    case JobState::kFailed: return "failed";
  }
  return "pending";
}

double Allocation(const SimResult& r) {
  if (r.fleet_gpus == 0 || r.end_ms == 0) return 0;
  double cap = static_cast<double>(r.fleet_gpus) * kGpuUnit * static_cast<double>(r.end_ms);
  return std::round(static_cast<double>(r.allocated_unit_ms) / cap * 1e4) / 1e4;
}

// One entry per window of each reservation: confirmed (and where it holds) or refused (and why).
std::vector<Json> ReservationEntries(const SimRun& run) {
  const ClusterState& st = run.state;
  std::vector<Json> out;
  for (const CapacityReservation& x : st.reservations()) {
    for (size_t i = 0; i < x.spec.windows.size(); ++i) {
      Json holds = Json::array();
      for (const NodeHold& h : x.holds[i]) holds.push_back({{"node", st.fleet().node(h.node).name}, {"gpus", h.gpus}});
      Json entry = {{"name", x.spec.name}, {"tenant", st.tenants().tenant(x.spec.tenant).path},
                    {"start", Seconds(x.spec.windows[i].start_ms)}, {"end", Seconds(x.spec.windows[i].end_ms)},
                    {"state", ReservationStateName(x.state)}, {"holds", std::move(holds)}};
      const auto& outcomes = run.result.reservation_windows;
      if (x.id.value() < outcomes.size()) {
        const SimResult::WindowOutcome& o = outcomes[x.id.value()][i];
        entry["lent_gpu_hours"] = std::round(GpuSeconds(o.lent_unit_ms) / 3.6) / 1e3;
        entry["free_at"] = o.free_at_ms < 0 ? Json() : Seconds(o.free_at_ms);
      }
      out.push_back(std::move(entry));
    }
  }
  for (const SimResult::RefusedReservation& x : run.result.refused_reservations) {
    for (const Window& w : x.windows) {
      out.push_back({{"name", x.name}, {"tenant", x.tenant}, {"start", Seconds(w.start_ms)}, {"end", Seconds(w.end_ms)},
                     {"state", "refused"}, {"reason", x.reason}});
    }
  }
  return out;
}

}  // namespace



void WriteReportJson(const SimRun& run, const ReportOptions& options, std::ostream& out) {
  const ClusterState& st = run.state;
  const SimResult& r = run.result;
  Json fleet = {{"gpus", r.fleet_gpus}, {"nodes", st.fleet().size()}, {"gpu_allocation", Allocation(r)},
                {"end", Seconds(r.end_ms)}};
  // The share state of every GPU in a shared pool: MIG layouts (held instances marked), MPS
  // clients, time-slice replicas.
  Json shared = Json::array();
  for (const Node& n : st.fleet().nodes()) {
    if (!n.shared()) continue;
    for (int g = 0; g < n.gpu_count; ++g) {
      const GpuShareState& s = st.fleet().shares(n.id)[g];
      Json gpu = {{"node", n.name}, {"gpu", g}, {"sharing", SharingName(n.pool.sharing)}};
      if (n.pool.mig) {
        Json layout = Json::array(), held = Json::array();
        for (const MigSlot& m : s.mig) {
          std::string name = std::string(n.pool.mig->profiles[m.instance.profile].name) + "@" + std::to_string(m.instance.start);
          layout.push_back(name);
          if (m.held) held.push_back(name);
        }
        gpu["layout"] = std::move(layout);
        gpu["held"] = std::move(held);
        if (s.ready_ms > 0) gpu["ready"] = Seconds(s.ready_ms);
      } else {
        gpu["clients"] = s.clients;
        if (n.pool.sharing == Sharing::kMps) {
          gpu["percent"] = s.percent;
          gpu["memory"] = FormatMemoryMiB(s.memory);
        }
      }
      shared.push_back(std::move(gpu));
    }
  }
  if (!shared.empty()) fleet["shared_gpus"] = std::move(shared);
  out << "{\"fleet\": " << fleet.dump() << ",\n \"tenants\": [";
  bool first = true;
  for (const Tenant& t : st.tenants().tenants()) {
    if (t.id == st.tenants().root()) continue;
    const TenantStats& ts = r.tenants[t.id.value()];
    Json tenant = {{"path", t.path},
                   {"gpu_seconds", GpuSeconds(ts.gpu_unit_ms)},
                   {"wait_seconds", {{"p50", Percentile(ts.waits, 50)}, {"p95", Percentile(ts.waits, 95)}}}};
    if (r.cost) tenant["cost"] = {{"amount_micros", r.cost->micros[t.id.value()]}, {"currency", r.cost->currency}};
    out << (first ? "\n  " : ",\n  ") << tenant.dump();
    first = false;
  }
  out << "],\n \"jobs\": [";
  first = true;
  for (const Job& j : st.jobs()) {
    Json nodes = Json::array();
    std::vector<NodeId> seen;
    for (const TaskPlacement& p : j.placement) {
      if (std::find(seen.begin(), seen.end(), p.node) != seen.end()) continue;
      seen.push_back(p.node);
      nodes.push_back(st.fleet().node(p.node).name);
    }
    const std::string& reason = r.reasons[j.id.value()];
    Json job = {{"name", j.spec.name},
                {"tenant", st.tenants().tenant(j.spec.tenant).path},
                {"state", ReportState(j.state)},
                {"class", j.admission == AdmissionClass::kNone ? Json() : Json(AdmissionClassName(j.admission))},
                {"submitted", Seconds(j.spec.submit_ms)},
                {"started", j.first_started_ms < 0 ? Json() : Seconds(j.first_started_ms)},
                {"finished", j.state == JobState::kFinished ? Seconds(j.finished_ms) : Json()},
                {"preemptions", j.preemptions},
                {"nodes", std::move(nodes)},
                {"reserved_start", j.id == r.reserved && j.state == JobState::kPending ? Seconds(r.reserved_start_ms) : Json()},
                {"reason", (j.state == JobState::kPending || j.state == JobState::kRejected) && !reason.empty()
                               ? Json(reason) : Json()}};
    if (!j.spec.sizing.empty()) job["sizing"] = SizingJson(j.spec);
    // Only when there is something to say, so the reports of scenarios without them are unchanged.
    if (!j.spec.array.empty()) {
      job["array"] = {{"name", j.spec.array.array}, {"index", j.spec.array.index}};
      if (j.spec.array.frame >= 0) job["array"]["frame"] = j.spec.array.frame;
    }
    if (j.failures > 0) job["retries"] = j.failures;
    if (!j.spec.template_name.empty()) job["template"] = {{"name", j.spec.template_name}, {"tenant", j.spec.template_tenant}};
    if (j.state == JobState::kFailed) {
      job["ended"] = Seconds(j.finished_ms);
      job["reason"] = j.reason;
    }
    if (j.requeues > 0) job["requeues"] = j.requeues;
    if (ServiceId s = st.ServiceOf(j.id); s.valid()) {
      job["service"] = st.service(s).spec.name;
      if (const ServiceReplica* x = st.service(s).ReplicaOf(j.id)) job["restarts"] = x->restarts;
    }
    // The placement array is written by hand: a 900k-job report has millions of tasks.
    std::string text = job.dump();
    text.insert(text.size() - 1, ", \"placement\": " + PlacementJson(st, j));
    out << (first ? "\n  " : ",\n  ") << text;
    first = false;
  }
  // Only with reservations, so the reports of scenarios without them are unchanged.
  if (std::vector<Json> reservations = ReservationEntries(run); !reservations.empty()) {
    out << "],\n \"reservations\": [";
    first = true;
    for (const Json& x : reservations) {
      out << (first ? "\n  " : ",\n  ") << x.dump();
      first = false;
    }
  }
  // Only with services, so the reports of scenarios without them are unchanged.
  if (!st.services().empty()) {
    out << "],\n \"services\": [";
    first = true;
    for (const Service& s : st.services()) {
      Json replicas = Json::array();
      int running = 0, restarts = 0;
      for (const ServiceReplica& x : s.replicas) {
        const Job& j = st.job(x.job);
        running += j.state == JobState::kRunning;
        restarts += x.restarts;
        replicas.push_back({{"name", j.spec.name}, {"state", ReplicaStateName(j)}, {"revision", x.revision}, {"port", x.port},
                            {"restarts", x.restarts},
                            {"node", j.holds_resources() ? Json(st.fleet().node(j.placement[0].node).name) : Json()}});
      }
      Json scales = Json::array();
      for (const SimResult::ServiceScale& e : r.service_scales) {
        if (e.service == s.id) scales.push_back({{"at", Seconds(e.time_ms)}, {"replicas", e.desired}, {"why", e.why}});
      }
      Json svc = {{"name", s.spec.name}, {"tenant", st.tenants().tenant(s.spec.tenant).path}, {"desired", s.desired},
                  {"running", running}, {"revision", s.revision}, {"restarts", restarts}, {"replicas", replicas},
                  {"scaled", scales}};
      out << (first ? "\n  " : ",\n  ") << svc.dump();
      first = false;
    }
  }
  // Only with budgets, so the reports of scenarios without them are unchanged.
  if (!st.billing().budgets().empty()) {
    out << "],\n \"budget_warnings\": [";
    first = true;
    for (const BudgetWarning& w : st.billing().warnings()) {
      Json warning = {{"path", st.tenants().tenant(w.tenant).path}, {"period", w.period}, {"what", w.what},
                      {"percent", w.percent}, {"at", Seconds(w.time_ms)}, {"message", w.message}};
      out << (first ? "\n  " : ",\n  ") << warning.dump();
      first = false;
    }
  }
  Json sched = {{"passes", r.passes}, {"decisions", r.decisions},
                {"wall_seconds", options.timing ? Json(r.wall_seconds) : Json()}};
  out << "],\n \"scheduler\": " << sched.dump() << "}\n";
}

std::string ReportJson(const SimRun& run, const ReportOptions& options) {
  std::ostringstream out;
  WriteReportJson(run, options, out);
  return out.str();
}

void PrintSummary(const SimRun& run, std::ostream& out) {
  const ClusterState& st = run.state;
  const SimResult& r = run.result;
  int64_t by_state[7] = {};
  for (const Job& j : st.jobs()) by_state[static_cast<int>(j.state)]++;
  char line[256];
  std::snprintf(line, sizeof line, "fleet: %zu nodes, %lld GPUs; allocation %.1f%% over %s s of virtual time\n",
                st.fleet().size(), static_cast<long long>(r.fleet_gpus), Allocation(r) * 100,
                FormatSeconds(r.end_ms).c_str());
  out << line;
  std::snprintf(line, sizeof line, "jobs: %zu submitted, %lld finished, %lld running, %lld pending, %lld rejected\n",
                st.jobs().size(), static_cast<long long>(by_state[static_cast<int>(JobState::kFinished)]),
                static_cast<long long>(by_state[static_cast<int>(JobState::kRunning)] +
                                       by_state[static_cast<int>(JobState::kPreempting)]),
                static_cast<long long>(by_state[static_cast<int>(JobState::kPending)]),
                static_cast<long long>(by_state[static_cast<int>(JobState::kRejected)]));
  out << line;
  if (int64_t failed = by_state[static_cast<int>(JobState::kFailed)]; failed > 0) {
    out << "jobs failed: " << failed << "\n";
  }
  std::snprintf(line, sizeof line, "scheduler: %lld passes, %lld decisions, %.3f s planning\n\n",
                static_cast<long long>(r.passes), static_cast<long long>(r.decisions), r.wall_seconds);
  out << line;
  std::snprintf(line, sizeof line, "%-32s %14s %10s %10s\n", "TENANT", "GPU-HOURS", "WAIT P50", "WAIT P95");
  out << line;
  int shown = 0;
  for (const Tenant& t : st.tenants().tenants()) {
    if (t.id == st.tenants().root()) continue;
    if (++shown > 40) {
      out << "… " << st.tenants().size() - 41 << " more tenants in the JSON report (--json)\n";
      break;
    }
    const TenantStats& ts = r.tenants[t.id.value()];
    std::string indent(2 * (t.depth - 1), ' ');
    std::string p50 = Percentile(ts.waits, 50).dump(), p95 = Percentile(ts.waits, 95).dump();
    std::snprintf(line, sizeof line, "%-32s %14.1f %9ss %9ss\n", (indent + t.path).c_str(),
                  GpuSeconds(ts.gpu_unit_ms) / 3600.0, p50.c_str(), p95.c_str());
    out << line;
  }
  if (r.cost) {
    // Each tenant over its subtree, orgs and teams only: the JSON report has every tenant.
    out << "\n";
    std::snprintf(line, sizeof line, "%-32s %18s   (rate card: %s by default, the run as the period)\n", "TENANT",
                  ("COST " + r.cost->currency).c_str(), r.cost->mode.c_str());
    out << line;
    int rows = 0;
    for (const Tenant& t : st.tenants().tenants()) {
      if (t.id == st.tenants().root() || t.depth > 2 || t.removed) continue;
      if (++rows > 40) {
        out << "… more in the JSON report (--json)\n";
        break;
      }
      std::string indent(2 * (t.depth - 1), ' ');
      std::snprintf(line, sizeof line, "%-32s %18s\n", (indent + t.path).c_str(),
                    FormatMicros(r.cost->micros[t.id.value()]).c_str());
      out << line;
    }
    std::snprintf(line, sizeof line, "%-32s %18s\n", "total", FormatMicros(r.cost->micros[st.tenants().root().value()]).c_str());
    out << line;
  }
  if (std::vector<Json> reservations = ReservationEntries(run); !reservations.empty()) {
    out << "\nRESERVATIONS\n";
    for (const Json& x : reservations) {
      std::snprintf(line, sizeof line, "  %-20s %-20s %8s s to %8s s  %-9s ", x["name"].get<std::string>().c_str(),
                    x["tenant"].get<std::string>().c_str(), x["start"].dump().c_str(), x["end"].dump().c_str(),
                    x["state"].get<std::string>().c_str());
      out << line;
      if (x.contains("reason")) {
        out << x["reason"].get<std::string>();
      } else {
        for (const Json& h : x["holds"]) out << h["node"].get<std::string>() << ":" << h["gpus"].dump() << " ";
        if (x.contains("lent_gpu_hours")) {
          out << " lent " << x["lent_gpu_hours"].dump() << " GPU-h, free at "
              << (x["free_at"].is_null() ? std::string("-") : x["free_at"].dump() + " s");
        }
      }
      out << "\n";
    }
  }
  if (!st.billing().budgets().empty()) {
    out << "\nBUDGET WARNINGS (" << st.billing().budgets().size() << " budgets set)\n";
    for (const BudgetWarning& w : st.billing().warnings()) {
      out << "  at " << FormatSeconds(w.time_ms) << " s: " << w.message << "\n";
    }
    if (st.billing().warnings().empty()) out << "  none\n";
  }
  if (st.jobs().size() <= 40) {
    out << "\n";
    std::snprintf(line, sizeof line, "%-20s %-20s %-9s %-10s %8s %8s %8s  %s\n", "JOB", "TENANT", "STATE", "CLASS",
                  "START", "END", "PREEMPT", "NODES / REASON");
    out << line;
    for (const Job& j : st.jobs()) {
      std::string nodes;
      for (const TaskPlacement& p : j.placement) {
        const std::string& n = st.fleet().node(p.node).name;
        if (nodes.find(n) == std::string::npos) nodes += (nodes.empty() ? "" : ",") + n;
      }
      const std::string& reason = r.reasons[j.id.value()];
      std::string tail = (j.state == JobState::kPending || j.state == JobState::kRejected) ? reason
                         : j.state == JobState::kFailed                                     ? j.reason
                                                                                            : nodes;
      std::snprintf(line, sizeof line, "%-20s %-20s %-9s %-10s %8s %8s %8d  ", j.spec.name.c_str(),
                    st.tenants().tenant(j.spec.tenant).path.c_str(), ReportState(j.state),
                    j.admission == AdmissionClass::kNone ? "-" : AdmissionClassName(j.admission),
                    j.first_started_ms < 0 ? "-" : FormatSeconds(j.first_started_ms).c_str(),
                    j.state == JobState::kFinished ? FormatSeconds(j.finished_ms).c_str() : "-", j.preemptions);
      out << line << tail << "\n";
    }
  }
}

}  // namespace allot
