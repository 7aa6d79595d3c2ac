// `allot alerts`: the anomalies allotd raised, newest last, when as "2026-11-24T12:00:00Z (3m ago)".
#include "cli/alerts_command.h"

#include <iostream>

#include "cli/client.h"
#include "cli/job_view.h"
#include "cli/sim_command.h"

namespace allot::cli {

void AddAlertsCommand(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  auto after = std::make_shared<std::string>();
  auto kind = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("alerts", "Anomaly alerts: usage outside business hours, failed logins, crash-looping "
                                               "jobs, GPUs with rising ECC errors (platform-admin, auditor)");
  AddConn(cmd, *conn);
  cmd->add_option("--after", *after, "only alerts with an id above this");
  cmd->add_option("--kind", *kind, "only this kind")
      ->check(CLI::IsMember({"out_of_hours_usage", "failed_logins", "crash_loop", "gpu_ecc"}));
  cmd->footer("Examples: allot alerts   |   allot alerts --kind gpu_ecc -o json");
  cmd->callback([conn, after, kind] {
    Resolve(*conn);
    std::string q = Query({{"after", *after}});
    Reply r = Call(*conn, "GET", "/v1/alerts" + (q.empty() ? "" : "?" + q));
    if (!kind->empty() && r.body.is_object() && r.body["alerts"].is_array()) {
      Json kept = Json::array();
      for (const Json& a : r.body["alerts"]) {
        if (a.value("kind", "") == *kind) kept.push_back(a);
      }
      r.body["alerts"] = kept;
    }
    SetExitCode(Output(*conn, r, [](const Json& b) {
      const int64_t now = NowMs();
      std::vector<std::vector<std::string>> rows;
      for (const Json& a : b["alerts"]) {
        rows.push_back({Str(a["id"]), ShownTime(a["at"], now), Str(a["kind"]), Str(a["severity"]), Str(a["summary"])});
      }
      if (rows.empty()) {
        std::cout << "no alerts\n";
      } else {
        PrintTable({"ID", "AT", "KIND", "SEVERITY", "SUMMARY"}, rows);
      }
      const Json& d = b["delivery"];
      if (d.is_object() && !d.value("webhook", "").empty()) {
        std::cout << "webhook " << Str(d["webhook"]) << ": " << Str(d["delivered"]) << " delivered, " << Str(d["failed_attempts"])
                  << " failed attempts, " << Str(d["dropped"]) << " given up\n";
      }
    }));
  });
}

}  // namespace allot::cli
