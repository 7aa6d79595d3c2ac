#include "daemon/interference_monitor.h"


namespace allot {

std::vector<GpuSamples> SamplesOf(const std::vector<GpuTelemetry>& gpus) {
  std::vector<GpuSamples> out;
  for (const GpuTelemetry& g : gpus) {
    if (g.tasks.empty()) continue;
    GpuSamples s;
    s.gpu = g.index;
    for (const TaskGpuActivity& t : g.tasks) {
      if (t.job_id < 0 || t.job_id > UINT32_MAX) continue;
      auto pct = [](const std::optional<int64_t>& v) { return v ? std::optional<int32_t>(static_cast<int32_t>(*v)) : std::nullopt; };
      s.tasks.push_back({JobId(static_cast<uint32_t>(t.job_id)), t.task, t.run, pct(t.sm_percent), pct(t.memory_percent), t.p99_us});
    }
    out.push_back(std::move(s));
  }
  return out;
}

size_t InterferenceMonitor::Observe(const std::string& node, const std::vector<GpuTelemetry>& gpus) {
  std::vector<GpuSamples> samples = SamplesOf(gpus);
  std::lock_guard lock(mu_);
  const int64_t now = ctl_.now_ms();
  struct Planned {
    InterferenceOutcome outcome;
    std::vector<AuditContext> audits;  // one per event
  };
  Planned p = ctl_.Read([&](const ClusterState& st) {
    Planned out;
    NodeId id = st.fleet().Find(node);
    if (!id.valid()) return out;
    out.outcome = DetectInterference(st, memory_, config_, id, samples, now);
    for (const EventBody& e : out.outcome.events) {
      AuditContext a{"allotd", Role::kPlatformAdmin, "", "", "", ""};
      JobId neighbour;  // whose tenant the record is filed under: the job acted on
      if (const auto* acted = std::get_if<InterferenceActed>(&e)) {
        const InterferenceResponse& r = acted->response;
        neighbour = r.action == InterferenceAction::kHarden ? r.victim : r.neighbour;
        a.action = std::string("interference.") + InterferenceActionName(r.action);
        a.target = node + " GPU " + std::to_string(acted->response.gpu) + ": " + acted->why;
      } else if (const auto* cleared = std::get_if<InterferenceCleared>(&e)) {
        neighbour = cleared->neighbour;
        a.action = "interference.lift";
        a.target = node + " GPU " + std::to_string(cleared->gpu) + ": job " + std::to_string(cleared->neighbour.value()) +
                   " task " + std::to_string(cleared->neighbour_task) + ": " + cleared->why;
      }
      a.tenant = st.tenants().tenant(st.job(neighbour).spec.tenant).path;
      out.audits.push_back(std::move(a));
    }
    return out;
  });
  for (InterferenceFinding& f : p.outcome.findings) {
    findings_.push_back(std::move(f));
    if (findings_.size() > kKeptFindings) findings_.pop_front();
  }
  size_t journaled = 0;
  for (size_t i = 0; i < p.outcome.events.size(); ++i) {
    auto r = ctl_.Execute(p.outcome.events[i], p.audits[i]);
    const std::string line = "interference: " + p.audits[i].action + " on " + p.audits[i].target;
    if (r) ++journaled;
    if (log_) log_(r ? line : line + ": refused: " + r.error().message());
  }
  return journaled;
}

std::vector<InterferenceFinding> InterferenceMonitor::Findings() const {
  std::lock_guard lock(mu_);
  return {findings_.begin(), findings_.end()};
}

}  // namespace allot
