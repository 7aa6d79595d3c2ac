#include "wire/acceptance_messages.h"

#include "wire/json_fields.h"

namespace allot {

Json AcceptanceAsksJson(const std::vector<AcceptanceAsk>& asks) {
  Json out = Json::array();
  for (const AcceptanceAsk& a : asks) {
    out.push_back({{"reservation", a.reservation}, {"reservation_id", a.reservation_id}, {"window", a.window},
                   {"start", a.start_ms}, {"end", a.end_ms}});
  }
  return out;
}

Result<std::vector<AcceptanceAsk>> ParseAcceptanceAsks(const Json& body) {
  JsonFields f(body, "assignments");
  std::vector<AcceptanceAsk> out;
  const Json& list = f.Array("acceptance");
  for (size_t i = 0; i < list.size() && f.ok(); ++i) {
    JsonFields c(list[i], f.Path("acceptance") + "[" + std::to_string(i) + "]");
    AcceptanceAsk a;
    a.reservation = c.Str("reservation", true);
    a.reservation_id = static_cast<uint32_t>(c.Int("reservation_id", 0, 0, UINT32_MAX));
    a.window = static_cast<int>(c.Int("window", 0, 0, 1'000'000));
    a.start_ms = c.Int("start", 0, 0);
    a.end_ms = c.Int("end", 0, 0);
    if (c.ok() && a.end_ms <= a.start_ms) c.Fail("end", "not after start");
    if (!c.ok()) return Err(c.error());
    out.push_back(std::move(a));
  }
  if (!f.ok()) return Err(f.error());
  return out;
}

std::string AcceptanceReport::Why() const {
  std::string out;
  for (const AcceptanceFailure& f : failures) out += (out.empty() ? "" : "; ") + f.name + ": " + f.detail;
  return out;
}

Json AcceptanceReportsJson(const std::vector<AcceptanceReport>& reports) {
  Json out = Json::array();
  for (const AcceptanceReport& r : reports) {
    Json failures = Json::array();
    for (const AcceptanceFailure& f : r.failures) failures.push_back({{"name", f.name}, {"detail", f.detail}});
    out.push_back({{"reservation_id", r.reservation_id}, {"window", r.window}, {"state", r.state},
                   {"failures", failures}, {"at_ms", r.at_ms}});
  }
  return out;
}

Result<std::vector<AcceptanceReport>> ParseAcceptanceReports(const Json& heartbeat) {
  JsonFields f(heartbeat, "heartbeat");
  std::vector<AcceptanceReport> out;
  const Json& list = f.Array("acceptance");
  if (list.size() > 64) return Err(InvalidArgument("heartbeat.acceptance: " + std::to_string(list.size()) + " entries; expected at most 64"));
  for (size_t i = 0; i < list.size() && f.ok(); ++i) {
    const std::string at = f.Path("acceptance") + "[" + std::to_string(i) + "]";
    JsonFields c(list[i], at);
    AcceptanceReport r;
    r.reservation_id = static_cast<uint32_t>(c.Int("reservation_id", 0, 0, UINT32_MAX));
    r.window = static_cast<int>(c.Int("window", 0, 0, 1'000'000));
    r.state = c.Str("state", true);
    if (c.ok() && r.state != "running" && r.state != "passed" && r.state != "failed") {
      c.Fail("state", "'" + r.state + "': expected running, passed or failed");
    }
    r.at_ms = c.Int("at_ms");
    const Json& failures = c.Array("failures");
    size_t bytes = 0;
    for (size_t k = 0; k < failures.size() && c.ok(); ++k) {
      JsonFields e(failures[k], c.Path("failures") + "[" + std::to_string(k) + "]");
      AcceptanceFailure x{e.Str("name", true), e.Str("detail")};
      bytes += x.name.size() + x.detail.size();
      if (!e.ok()) c.Fail(e.error());
      r.failures.push_back(std::move(x));
    }
    if (c.ok() && bytes > 16384) c.Fail("failures", "over 16 KiB");
    if (c.ok() && r.state == "failed" && r.failures.empty()) c.Fail("failures", "none; a failed acceptance names its checks");
    if (!c.ok()) return Err(c.error());
    out.push_back(std::move(r));
  }
  if (!f.ok()) return Err(f.error());
  return out;
}

}  // namespace allot
