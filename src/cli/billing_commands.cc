// `allot invoices` and `allot budgets`: allotd's billing API (server/api_billing.h).
#include "cli/billing_commands.h"

#include <iostream>

#include "cli/client.h"
#include "cli/sim_command.h"
#include "metering/money.h"

namespace allot::cli {
namespace {

void AddInvoices(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  auto period = std::make_shared<std::string>();
  auto org = std::make_shared<std::string>();
  auto csv = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("invoices", "An org's invoice for a month: signed ledger once closed, a draft before");
  AddConn(cmd, *conn);
  cmd->add_option("--period", *period, "month, YYYY-MM (default: the current one in the org's time zone)");
  cmd->add_option("--org", *org, "org (top-level tenant; default: your scope's)");
  cmd->add_flag("--csv", *csv, "one CSV row per ledger line, then the total");
  cmd->footer("Examples: allot invoices --org research --period 2026-11   |   allot invoices --csv > nov.csv");
  cmd->callback([conn, period, org, csv] {
    Resolve(*conn);
    std::string q = Query({{"period", *period}, {"org", *org}, {"format", *csv ? "csv" : ""}});
    Reply r = Call(*conn, "GET", "/v1/invoices" + (q.empty() ? "" : "?" + q));
    if (*csv) {
      if (int rc = Check(r); rc != 0) return SetExitCode(rc);
      std::cout << r.raw;
      return SetExitCode(0);
    }
    SetExitCode(Output(*conn, r, [](const Json& b) {
      std::cout << "invoice " << Str(b["org"]) << " " << Str(b["period"]) << " (" << Str(b["status"]) << ")"
                << (b.contains("scope") ? ", your part: " + Str(b["scope"]) : "") << ": " << Money(b["total"]) << "\n";
      std::vector<std::vector<std::string>> rows;
      std::string currency = b["total"].value("currency", "");
      for (const char* part : {"by_team", "by_model", "by_class"}) {
        const Json by = b.value(part, Json::object());  // kept: items() of a temporary dangles
        for (const auto& [k, v] : by.items()) {
          rows.push_back({std::string(part).substr(3), k, FormatMicros(v.get<int64_t>()) + " " + currency});
        }
      }
      PrintTable({"BY", "KEY", "AMOUNT"}, rows);
    }));
  });
}

void AddBudgets(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  CLI::App* budgets = app.add_subcommand("budgets", "Spend and GPU-hour caps per tenant node per billing month");
  budgets->require_subcommand(1);

  CLI::App* list = budgets->add_subcommand("list", "Budgets in your scope: caps, spent this month, warnings given");
  AddConn(list, *conn);
  list->callback([conn] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/budgets"), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& x : b.value("budgets", Json::array())) {
        std::string gpu = x["gpu_hours"].is_null() ? "-" : Str(x["gpu_hours"]);
        rows.push_back({Str(x["tenant"]), x.value("period", "-"), Money(x["spent"]), Money(x["spend"]),
                        x.contains("gpu_hours_used") ? Str(x["gpu_hours_used"]) : "-", gpu, x.value("accounting", "-")});
      }
      PrintTable({"TENANT", "PERIOD", "SPENT", "SPEND CAP", "GPU-H USED", "GPU-H CAP", "ACCOUNTING"}, rows);
      for (const Json& w : b.value("warnings", Json::array())) std::cout << "warning: " << Str(w["message"]) << "\n";
    }));
  });

  auto set_conn = std::make_shared<Conn>();
  auto path = std::make_shared<std::string>();
  auto spend = std::make_shared<std::string>();
  auto gpu_hours = std::make_shared<std::string>();
  CLI::App* set = budgets->add_subcommand("set", "Set a tenant node's caps per month (\"none\": no cap)");
  AddConn(set, *set_conn);
  set->add_option("tenant", *path, "tenant path")->required();
  set->add_option("--spend", *spend, "money per month in the rate card's currency, e.g. 5000 or 4812.50");
  set->add_option("--gpu-hours", *gpu_hours, "GPU-hours per month (any model), e.g. 1000");
  set->footer("Example: allot budgets set research/nlp --spend 5000 --gpu-hours 1000");
  set->callback([set_conn, path, spend, gpu_hours] {
    if (spend->empty() && gpu_hours->empty()) {
      std::cerr << "allot: budgets set: give --spend, --gpu-hours or both (\"none\" removes a cap)\n";
      return SetExitCode(2);
    }
    Resolve(*set_conn);
    Json body = {{"tenant", *path}};
    if (!spend->empty()) body["spend"] = *spend;
    if (!gpu_hours->empty()) body["gpu_hours"] = *gpu_hours;
    SetExitCode(Output(*set_conn, Call(*set_conn, "POST", "/v1/budgets", body.dump()), [](const Json& b) {
      std::cout << "budget of " << Str(b["tenant"]) << ": spend " << Money(b["spend"]) << ", gpu-hours "
                << Str(b["gpu_hours"]) << " per month\n";
    }));
  });
}

}  // namespace

void AddBillingCommands(CLI::App& app) {
  AddInvoices(app);
  AddBudgets(app);
}

}  // namespace allot::cli
