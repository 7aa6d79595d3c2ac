#include "daemon/alert_monitor.h"

#include "core/calendar.h"
#include "metering/business_hours.h"

namespace allot {

nlohmann::json AlertJson(const Alert& a) {
  nlohmann::json labels = nlohmann::json::object(), details = nlohmann::json::object();
  for (const auto& [k, v] : a.labels) labels[k] = v;
  for (const auto& [k, v] : a.details) {
    if (const int64_t* n = std::get_if<int64_t>(&v)) {
      details[k] = *n;
    } else {
      details[k] = std::get<std::string>(v);
    }
  }
  return {{"kind", AlertKindName(a.kind)},
          {"severity", AlertSeverityName(a.severity)},
          {"summary", a.summary},
          {"at", FormatRfc3339(a.at_ms)},
          {"labels", labels},
          {"details", details}};
}

AlertMonitor::AlertMonitor(Controller& ctl, std::shared_ptr<AgentRegistry> agents, AlertMonitorOptions options)
    : ctl_(ctl), agents_(std::move(agents)), options_(std::move(options)), detector_(options_.thresholds) {
  if (options_.webhook) {
    if (!options_.delivery.log) options_.delivery.log = options_.log;
    sender_ = std::make_unique<WebhookSender>(*options_.webhook, options_.delivery);
  }
}

AlertMonitor::~AlertMonitor() { Stop(); }

void AlertMonitor::Start() {
  {
    std::lock_guard lock(mu_);
    seen_seq_ = ctl_.last_seq();
  }
  if (sender_) sender_->Start();
  ticks_.Start(options_.period, [this] { Check(); });
}

void AlertMonitor::Stop() {
  ticks_.Stop();
  if (sender_) sender_->Stop();
}

void AlertMonitor::FailedLogin(const std::string& source) {
  const int64_t now = ctl_.now_ms();
  std::lock_guard lock(mu_);
  if (auto a = detector_.FailedLogin(source, now)) Raise(std::move(*a));
}

void AlertMonitor::Check() {
  const int64_t now = ctl_.now_ms();
  CheckJobs(now);
  CheckEcc(now);
  CheckHours(now);
}

// Failed jobs since the last look, from the events the controller keeps.
void AlertMonitor::CheckJobs(int64_t now_ms) {
  uint64_t since = 0;
  {
    std::lock_guard lock(mu_);
    since = seen_seq_;
  }
  uint64_t oldest = 0;
  std::vector<std::pair<uint64_t, Event>> events = ctl_.EventsSince(since, std::chrono::milliseconds(0), &oldest);
  if (events.empty()) return;
  std::vector<JobFailure> failures = ctl_.Read([&](const ClusterState& st) {
    std::vector<JobFailure> out;
    for (const auto& [seq, e] : events) {
      const JobFailed* f = std::get_if<JobFailed>(&e.body);
      if (!f || f->job.value() >= st.jobs().size()) continue;
      const Job& j = st.job(f->job);
      out.push_back({st.tenants().tenant(j.spec.tenant).path, j.spec.name, static_cast<int64_t>(f->job.value()), f->reason});
    }
    return out;
  });
  std::lock_guard lock(mu_);
  if (oldest > seen_seq_ + 1 && options_.log) {
    options_.log("alerts: events " + std::to_string(seen_seq_ + 1) + " to " + std::to_string(oldest - 1) +
                 " were no longer kept; failed jobs among them are not counted");
  }
  seen_seq_ = events.back().first;
  for (const JobFailure& f : failures) {
    if (auto a = detector_.JobFailed(f, now_ms)) Raise(std::move(*a));
  }
}

// Each agent's GPUs, once per heartbeat; a GPU whose counters did not change since the detector
// last settled on them is skipped (the sample would change nothing).
void AlertMonitor::CheckEcc(int64_t now_ms) {
  if (!agents_) return;
  constexpr int kMaxGpuIndex = 1024;  // past it (no real node), every heartbeat is sampled
  std::vector<GpuEccSample> samples;
  {
    // Visited in place (not copied: at 6,250 nodes a copy of every session's telemetry held the
    // registry, and so every heartbeat, for milliseconds each period).
    std::lock_guard lock(mu_);
    agents_->Visit([&](const AgentSession& s) {
      int64_t& heard = heard_[s.node];
      if (heard == s.last_heartbeat_ms) return;
      heard = s.last_heartbeat_ms;
      std::vector<EccSeen>* seen = nullptr;
      for (const GpuTelemetry& g : s.gpus) {
        if (!g.ecc_corrected && !g.ecc_uncorrected) continue;
        if (g.index >= 0 && g.index < kMaxGpuIndex) {
          if (!seen) seen = &ecc_seen_[s.node];
          if (seen->size() <= static_cast<size_t>(g.index)) seen->resize(static_cast<size_t>(g.index) + 1);
          EccSeen& last = (*seen)[static_cast<size_t>(g.index)];
          if (last.settled && last.corrected == g.ecc_corrected && last.uncorrected == g.ecc_uncorrected) continue;
          last = EccSeen{g.ecc_corrected, g.ecc_uncorrected, false};
        }
        samples.push_back({s.node, g.index, g.uuid, "", g.ecc_corrected, g.ecc_uncorrected});
      }
    });
  }
  if (samples.empty()) return;
  ctl_.Read([&](const ClusterState& st) {
    for (GpuEccSample& g : samples) {
      NodeId id = st.fleet().Find(g.node);
      if (!id.valid()) continue;
      std::string name = st.resource_names().Name(st.fleet().node(id).gpu_resource);
      g.model = name.rfind("gpu/", 0) == 0 ? name.substr(4) : name;
    }
    return 0;
  });
  std::lock_guard lock(mu_);
  for (const GpuEccSample& g : samples) {
    for (Alert& a : detector_.GpuEcc(g, now_ms)) Raise(std::move(a));
    auto seen = ecc_seen_.find(g.node);
    if (seen != ecc_seen_.end() && g.gpu >= 0 && static_cast<size_t>(g.gpu) < seen->second.size()) {
      EccSeen& last = seen->second[static_cast<size_t>(g.gpu)];
      // Settled only on these counters: a newer sample taken meanwhile is compared afresh.
      if (last.corrected == g.corrected && last.uncorrected == g.uncorrected) last.settled = detector_.GpuEccSettled(g.node, g.gpu);
    }
  }
}

// Every tenant with business hours that holds GPUs now.
void AlertMonitor::CheckHours(int64_t now_ms) {
  struct Held {
    std::string tenant, hours;
    int64_t gpu_units = 0;
  };
  std::vector<Held> held = ctl_.Read([&](const ClusterState& st) {
    std::vector<Held> out;
    for (const Tenant& t : st.tenants().tenants()) {
      if (t.removed || t.business_hours.empty()) continue;
      int64_t units = 0;
      for (int r = kFirstGpu; r < st.resource_names().size(); ++r) units = SatAdd(units, t.usage[static_cast<ResourceId>(r)]);
      if (units > 0) out.push_back({t.path, t.business_hours, units});
    }
    return out;
  });
  std::lock_guard lock(mu_);
  for (const Held& h : held) {
    const BusinessHours* hours = Hours(h.tenant, h.hours);
    if (!hours) continue;
    const TimeZone* zone = Zone(hours->zone);
    if (!zone) continue;
    if (auto a = detector_.TenantUsage({h.tenant, *hours, zone, h.gpu_units}, now_ms)) Raise(std::move(*a));
  }
}

const BusinessHours* AlertMonitor::Hours(const std::string& tenant, const std::string& text) {
  auto it = hours_.find(text);
  if (it == hours_.end()) {
    auto parsed = ParseBusinessHours(text, "tenant " + tenant + " business_hours");
    it = hours_.emplace(text, parsed ? std::optional<BusinessHours>(*parsed) : std::nullopt).first;
  }
  return it->second ? &*it->second : nullptr;
}

const TimeZone* AlertMonitor::Zone(const std::string& name) {
  auto it = zones_.find(name);
  if (it == zones_.end()) {
    Result<TimeZone> tz = options_.load_zone ? options_.load_zone(name) : Result<TimeZone>(Err(InvalidArgument("no zone database")));
    if (!tz && options_.log) options_.log("alerts: business hours in zone '" + name + "' are not checked: " + tz.error().message());
    it = zones_.emplace(name, tz ? std::optional<TimeZone>(*tz) : std::nullopt).first;
  }
  return it->second ? &*it->second : nullptr;
}

void AlertMonitor::Raise(Alert alert) {
  ++raised_[static_cast<size_t>(alert.kind)];
  if (options_.log) options_.log(std::string("alert ") + AlertKindName(alert.kind) + " (" + AlertSeverityName(alert.severity) + "): " + alert.summary);
  if (sender_) sender_->Enqueue(AlertJson(alert).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  kept_.push_back({next_id_++, std::move(alert)});
  while (kept_.size() > options_.keep) kept_.pop_front();
}

std::vector<AlertMonitor::Kept> AlertMonitor::Since(uint64_t after) const {
  std::lock_guard lock(mu_);
  std::vector<Kept> out;
  for (const Kept& k : kept_) {
    if (k.id > after) out.push_back(k);
  }
  return out;
}

AlertMonitor::Counts AlertMonitor::counts() const {
  Counts c;
  {
    std::lock_guard lock(mu_);
    c.raised = raised_;
  }
  if (sender_) {
    c.delivered = sender_->delivered();
    c.failed_attempts = sender_->failed_attempts();
    c.dropped = sender_->dropped();
  }
  return c;
}

}  // namespace allot
