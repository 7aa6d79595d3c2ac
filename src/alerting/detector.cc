#include "alerting/detector.h"

#include <algorithm>

#include "core/calendar.h"
#include "core/quantity.h"
#include "core/resources.h"

namespace allot {
namespace {

std::string Minutes(int64_t ms) {
  return ms % 60'000 == 0 ? std::to_string(ms / 60'000) + " min" : std::to_string(ms / 1000) + " s";
}

Alert Make(AlertKind kind, AlertSeverity severity, std::string summary, int64_t now_ms,
           std::vector<std::pair<std::string, std::string>> labels, std::vector<std::pair<std::string, Alert::Value>> details) {
  std::sort(labels.begin(), labels.end());
  return Alert{kind, severity, std::move(summary), now_ms, std::move(labels), std::move(details)};
}

}  // namespace

std::string JobFamily(std::string_view name) {
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  if (end == name.size() || end < 2) return std::string(name);  // no counter, or nothing before it
  char sep = name[end - 1];
  if (sep != '-' && sep != '_' && sep != '.') return std::string(name);
  return std::string(name.substr(0, end - 1));
}

const char* AlertKindName(AlertKind kind) {
  switch (kind) {
    case AlertKind::kOutOfHoursUsage: return "out_of_hours_usage";
    case AlertKind::kFailedLogins: return "failed_logins";
    case AlertKind::kCrashLoop: return "crash_loop";
    case AlertKind::kGpuEcc: return "gpu_ecc";
  }
  return "unknown";
}

const char* AlertSeverityName(AlertSeverity severity) {
  return severity == AlertSeverity::kCritical ? "critical" : "warning";
}

AnomalyDetector::AnomalyDetector(AlertThresholds thresholds) : thresholds_(thresholds) {}

bool AnomalyDetector::Count(Burst& b, int needed, int64_t window_ms, int64_t now_ms) {
  b.times.push_back(now_ms);
  while (b.times.size() > static_cast<size_t>(std::max(needed, 1))) b.times.pop_front();
  if (static_cast<int>(b.times.size()) < needed || now_ms - b.times.front() >= window_ms || now_ms < b.quiet_until_ms) {
    return false;
  }
  b.quiet_until_ms = now_ms + window_ms;
  return true;
}

// Forgets the key heard from longest ago once there are too many.
void AnomalyDetector::Bound(std::map<std::string, Burst>& bursts, int64_t now_ms) {
  if (bursts.size() <= kMaxKeys) return;
  // Stalest: the oldest last occurrence, ties by key (the map's order) for determinism.
  auto stalest = bursts.begin();
  int64_t oldest = now_ms;
  for (auto it = bursts.begin(); it != bursts.end(); ++it) {
    int64_t last = it->second.times.empty() ? 0 : it->second.times.back();
    if (last < oldest) {
      oldest = last;
      stalest = it;
    }
  }
  bursts.erase(stalest);
}

std::optional<Alert> AnomalyDetector::TenantUsage(const TenantUsageSample& s, int64_t now_ms) {
  if (s.gpu_units <= 0) return std::nullopt;
  std::optional<int64_t> since = OutOfHoursSince(s.hours, *s.zone, now_ms);
  if (!since) return std::nullopt;
  auto [it, fresh] = stretch_alerted_.try_emplace(s.tenant, *since);
  if (!fresh && it->second == *since) return std::nullopt;
  it->second = *since;
  const std::string hours = FormatBusinessHours(s.hours);
  const std::string gpus = FormatMilli((s.gpu_units * kMilli + kGpuUnit / 2) / kGpuUnit);
  const std::string closed_at = FormatRfc3339(s.zone->LocalToUtc(*since) * 1000);
  return Make(AlertKind::kOutOfHoursUsage, AlertSeverity::kWarning,
              "tenant " + s.tenant + " holds " + gpus + " GPUs outside its business hours (" + hours +
                  "; closed since " + closed_at + ")",
              now_ms, {{"tenant", s.tenant}},
              {{"gpus", gpus}, {"business_hours", hours}, {"closed_since", closed_at}});
}

std::optional<Alert> AnomalyDetector::FailedLogin(const std::string& source, int64_t now_ms) {
  const AlertThresholds& t = thresholds_;
  bool fire = Count(logins_[source], t.failed_logins, t.failed_login_window_ms, now_ms);
  Bound(logins_, now_ms);
  if (!fire) return std::nullopt;
  return Make(AlertKind::kFailedLogins, AlertSeverity::kWarning,
              std::to_string(t.failed_logins) + " failed logins from " + source + " within " + Minutes(t.failed_login_window_ms),
              now_ms, {{"source", source}},
              {{"failures", int64_t{t.failed_logins}}, {"window_seconds", t.failed_login_window_ms / 1000}});
}

std::optional<Alert> AnomalyDetector::JobFailed(const JobFailure& f, int64_t now_ms) {
  const AlertThresholds& t = thresholds_;
  const std::string family = JobFamily(f.job);
  bool fire = Count(failures_[f.tenant + "\n" + family], t.crash_loop_failures, t.crash_loop_window_ms, now_ms);
  Bound(failures_, now_ms);
  if (!fire) return std::nullopt;
  return Make(AlertKind::kCrashLoop, AlertSeverity::kWarning,
              "job '" + family + "' of tenant " + f.tenant + " failed " + std::to_string(t.crash_loop_failures) + " times within " +
                  Minutes(t.crash_loop_window_ms) + "; last: " + f.job + ": " + f.reason,
              now_ms, {{"job", family}, {"tenant", f.tenant}},
              {{"failures", int64_t{t.crash_loop_failures}},
               {"window_seconds", t.crash_loop_window_ms / 1000},
               {"last_job", f.job},
               {"last_job_id", f.job_id},
               {"last_reason", f.reason}});
}

// A sample repeating the last counters: the uncorrected count does not rise, no corrected
// change is appended, and with one entry the window's base is the count itself (a rise of 0).
bool AnomalyDetector::GpuEccSettled(const std::string& node, int gpu) const {
  auto it = ecc_.find(node + "/" + std::to_string(gpu));
  return it != ecc_.end() && it->second.corrected.size() <= 1;
}

std::vector<Alert> AnomalyDetector::GpuEcc(const GpuEccSample& s, int64_t now_ms) {
  const AlertThresholds& t = thresholds_;
  std::vector<Alert> out;
  const std::string key = s.node + "/" + std::to_string(s.gpu);
  EccTrack& g = ecc_[key];
  const std::vector<std::pair<std::string, std::string>> labels = {
      {"gpu", std::to_string(s.gpu)}, {"model", s.model}, {"node", s.node}, {"uuid", s.uuid}};
  const std::string gpu = "GPU " + std::to_string(s.gpu) + " (" + s.model + (s.uuid.empty() ? "" : ", " + s.uuid) + ") on " + s.node;
  if (s.uncorrected) {
    if (g.uncorrected && *s.uncorrected > *g.uncorrected) {
      out.push_back(Make(AlertKind::kGpuEcc, AlertSeverity::kCritical,
                         gpu + ": uncorrected ECC errors rose from " + std::to_string(*g.uncorrected) + " to " +
                             std::to_string(*s.uncorrected),
                         now_ms, labels,
                         {{"uncorrected_before", *g.uncorrected},
                          {"uncorrected", *s.uncorrected},
                          {"corrected", s.corrected.value_or(0)}}));
    }
    g.uncorrected = s.uncorrected;
  }
  if (!s.corrected) return out;
  const int64_t c = *s.corrected;
  if (!g.corrected.empty() && c < g.corrected.back().second) g.corrected.clear();  // counters reset
  if (g.corrected.empty() || c != g.corrected.back().second) g.corrected.emplace_back(now_ms, c);
  // Keep the count in force at the window's start (the last change at or before it) as the base.
  while (g.corrected.size() >= 2 && g.corrected[1].first <= now_ms - t.ecc_window_ms) g.corrected.pop_front();
  const int64_t base = g.corrected.front().second;
  if (c - base > t.ecc_corrected_rise && now_ms >= g.quiet_until_ms) {
    out.push_back(Make(AlertKind::kGpuEcc, AlertSeverity::kWarning,
                       gpu + ": corrected ECC errors rose by " + std::to_string(c - base) + " (from " + std::to_string(base) +
                           " to " + std::to_string(c) + ") within " + Minutes(t.ecc_window_ms),
                       now_ms, labels,
                       {{"corrected_before", base},
                        {"corrected", c},
                        {"rise", c - base},
                        {"threshold", t.ecc_corrected_rise},
                        {"window_seconds", t.ecc_window_ms / 1000},
                        {"uncorrected", s.uncorrected.value_or(0)}}));
    g.quiet_until_ms = now_ms + t.ecc_window_ms;
    g.corrected.assign(1, {now_ms, c});  // the next alert needs a new rise
  }
  return out;
}

}  // namespace allot
