// Feeds the anomaly detector (alerting/detector.h) and delivers what it finds (issue 17). Each
// tick (every second, on a Periodic) it reads what changed since the last: failed jobs from the
// journaled events, the agents' ECC counters from their latest heartbeats, and each tenant with
// business hours and the GPUs its subtree holds. The API reports refused credentials as they
// happen (FailedLogin: a lock and a few map operations, no I/O). Every alert is kept in a
// bounded list (GET /v1/alerts), counted by kind (allot_alerts_total), written to the log, and
// queued for the webhook (daemon/webhook_sender.h), which posts it from its own thread.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "alerting/detector.h"
#include "daemon/agent_registry.h"
#include "daemon/controller.h"
#include "daemon/periodic.h"
#include "daemon/webhook_sender.h"

namespace allot {

// {"kind","severity","summary","at" (RFC 3339),"labels":{…},"details":{…}}: the webhook's body.
nlohmann::json AlertJson(const Alert& alert);

struct AlertMonitorOptions {
  AlertThresholds thresholds;
  std::optional<WebhookUrl> webhook;  // none: alerts are only kept, counted and logged
  WebhookOptions delivery;
  size_t keep = 1000;                 // alerts kept for GET /v1/alerts, newest last
  std::chrono::milliseconds period{1000};
  // Business hours' zones (allotd: billing/zoneinfo.h's LoadTimeZone, which reads the database).
  std::function<Result<TimeZone>(const std::string&)> load_zone;
  std::function<void(const std::string&)> log;
};

class AlertMonitor {
 public:
  AlertMonitor(Controller& ctl, std::shared_ptr<AgentRegistry> agents, AlertMonitorOptions options);
  ~AlertMonitor();
  // Starts the ticks and the webhook's sender; failures journaled before now are not looked at.
  void Start();
  void Stop();

  // A request from `source` refused for its credentials (any API thread).
  void FailedLogin(const std::string& source);
  // One look now (tests; the thread calls it every period). REQUIRES: one caller at a time (the
  // ticks, or a test that did not Start).
  void Check();

  struct Kept {
    uint64_t id = 0;  // 1, 2, … in the order raised
    Alert alert;
  };
  // The kept alerts with an id > `after`, oldest first.
  std::vector<Kept> Since(uint64_t after) const;
  struct Counts {
    std::array<uint64_t, std::size(kAlertKinds)> raised{};  // by AlertKind
    uint64_t delivered = 0, failed_attempts = 0, dropped = 0;
  };
  Counts counts() const;
  // Where alerts are posted ("" none).
  std::string webhook() const { return options_.webhook ? options_.webhook->origin + options_.webhook->path : ""; }

 private:
  void Raise(Alert alert);  // REQUIRES: mu_ held
  const TimeZone* Zone(const std::string& name);  // REQUIRES: mu_ held; nullptr when unknown (logged once)
  // The tenant's business hours parsed once per distinct text. REQUIRES: mu_ held; nullptr when
  // they do not parse (only a forged journal gets there: the spec reader wrote them).
  const BusinessHours* Hours(const std::string& tenant, const std::string& text);
  void CheckJobs(int64_t now_ms);
  void CheckEcc(int64_t now_ms);
  void CheckHours(int64_t now_ms);

  Controller& ctl_;
  std::shared_ptr<AgentRegistry> agents_;
  AlertMonitorOptions options_;
  std::unique_ptr<WebhookSender> sender_;

  mutable std::mutex mu_;
  AnomalyDetector detector_;
  std::deque<Kept> kept_;
  uint64_t next_id_ = 1;
  std::array<uint64_t, std::size(kAlertKinds)> raised_{};
  std::map<std::string, std::optional<TimeZone>> zones_;  // nullopt: unknown, said once
  std::map<std::string, std::optional<BusinessHours>> hours_;  // by text; nullopt: does not parse
  uint64_t seen_seq_ = 0;                                 // events looked at, up to
  std::map<std::string, int64_t> heard_;                  // node → the heartbeat last looked at
  // By node, by GPU index: the ECC counters last handed to the detector, and whether it said
  // another sample of them would change nothing (then an unchanged GPU is not sampled again).
  struct EccSeen {
    std::optional<int64_t> corrected, uncorrected;
    bool settled = false;
  };
  std::map<std::string, std::vector<EccSeen>> ecc_seen_;

  Periodic ticks_;  // last: stopped first, before the members its ticks read
};

}  // namespace allot
