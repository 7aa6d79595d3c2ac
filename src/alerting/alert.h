// An anomaly worth a person's attention (issue 17): what the detector returns, what /v1/alerts
// lists and what the webhook receives as {"kind","severity","summary","at","labels","details"}.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace allot {

enum class AlertKind : uint8_t { kOutOfHoursUsage, kFailedLogins, kCrashLoop, kGpuEcc };
enum class AlertSeverity : uint8_t { kWarning, kCritical };

// "out_of_hours_usage", "failed_logins", "crash_loop", "gpu_ecc": the kind as JSON and metrics say it.
const char* AlertKindName(AlertKind kind);
const char* AlertSeverityName(AlertSeverity severity);
inline constexpr AlertKind kAlertKinds[] = {AlertKind::kOutOfHoursUsage, AlertKind::kFailedLogins, AlertKind::kCrashLoop,
                                            AlertKind::kGpuEcc};

struct Alert {
  using Value = std::variant<int64_t, std::string>;
  AlertKind kind = AlertKind::kFailedLogins;
  AlertSeverity severity = AlertSeverity::kWarning;
  std::string summary;  // one sentence a person can act on
  int64_t at_ms = 0;
  // What the anomaly is about (bounded values: tenant, node, gpu, source, job); sorted by key.
  std::vector<std::pair<std::string, std::string>> labels;
  // The numbers behind it (counts, window, thresholds) and free text (the last exit's reason).
  std::vector<std::pair<std::string, Value>> details;
  bool operator==(const Alert&) const = default;
};

// When each kind fires (docs/alerts.md). Windows in milliseconds.
struct AlertThresholds {
  int failed_logins = 10;                      // failed authentications from one address …
  int64_t failed_login_window_ms = 5 * 60'000;  // … within this long
  int crash_loop_failures = 5;                  // failed runs of one tenant's job name …
  int64_t crash_loop_window_ms = 15 * 60'000;   // … within this long
  int64_t ecc_corrected_rise = 100;             // corrected ECC errors of one GPU rising by more than this …
  int64_t ecc_window_ms = 60 * 60'000;          // … within this long; any uncorrected rise fires at once
};

}  // namespace allot
