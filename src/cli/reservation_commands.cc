// `allot reserve`, `allot reservations` (list, show, cancel, extend, shrink), `allot availability` and
// `allot calendar`:
// booking capacity and asking when it is free, through allotd's API (issue 16).
#include <httplib.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/client.h"
#include "cli/client_commands.h"
#include "cli/job_view.h"
#include "cli/sim_command.h"

namespace allot::cli {
namespace {

std::string Capacity(const Json& r) {
  const bool by_node = r.contains("nodes");
  const int n = r.value(by_node ? "nodes" : "gpus", 0);
  std::string c = std::to_string(n) + (by_node ? (n == 1 ? " node" : " nodes") : (n == 1 ? " GPU" : " GPUs"));
  c += " of " + Str(r["model"]);
  if (r.value("topology", "none") != "none") c += " in one " + Str(r["topology"]);
  return c;
}

// One reservation as people read it: what, whose, and each window with where it holds.
void PrintReservation(const Json& r) {
  const int64_t now = NowMs();
  std::cout << "reservation " << Str(r["name"]) << " (" << Str(r["tenant"]) << "): " << Capacity(r) << ", "
            << Str(r["state"]) << "\n";
  std::cout << "booked: " << ShownTime(r["booked"], now) << "\n";
  if (r.contains("drain_before")) std::cout << "drain_before: " << Str(r["drain_before"]) << "\n";
  if (r.contains("orchestrator")) std::cout << "orchestrator: " << Str(r["orchestrator"]) << "\n";
  const Json& windows = r.value("windows", Json::array());
  size_t shown = 0;
  for (const Json& w : windows) {
    if (++shown > 10) {
      std::cout << "  … and " << windows.size() - 10 << " more windows (-o json lists them)\n";
      break;
    }
    std::string holds;
    for (const Json& h : w.value("holds", Json::array())) {
      holds += (holds.empty() ? "" : ", ") + Str(h["node"]) + ":" + Str(h["gpus"]);
    }
    std::cout << "  " << ShownTime(w["start"], now) << " to " << ShownTime(w["end"], now) << "  on " << holds << "\n";
    // Acceptance of the booked nodes before hand-off: which node failed, why, and what replaced it.
    for (const Json& a : w.value("acceptance", Json::array())) {
      std::cout << "    acceptance of " << Str(a["node"]) << ": " << Str(a["state"]);
      if (a.contains("replaced_by")) std::cout << " by " << Str(a["replaced_by"]);
      if (a.contains("at")) std::cout << " at " << ShownTime(a["at"], now);
      std::cout << "\n";
      if (a.contains("why")) std::cout << "      why: " << Str(a["why"]) << "\n";
    }
  }
  for (const Json& x : r.value("shrinks", Json::array())) {
    const char* unit = x.contains("nodes_before") ? "nodes" : "GPUs";
    const std::string key = x.contains("nodes_before") ? "nodes" : "gpus";
    std::cout << "shrunk " << ShownTime(x["at"], now) << ": from " << Str(x[key + "_before"]) << " to "
              << Str(x[key + "_after"]) << " " << unit << ", windows " << Str(x["from_window"]) << " on\n";
  }
  if (r.contains("now")) {
    const Json& n = r["now"];
    std::cout << "now: window " << Str(n["window"]) << (n.value("open", false) ? " open" : " not open yet") << "; "
              << Str(n["jobs"]) << " of its jobs on " << Str(n["gpus_in_use"]) << " GPUs; " << Str(n["lent_gpus"])
              << " GPUs lent to other work\n";
  }
  // A dedicated cluster: what each booked node's agent runs for it, and how to log in.
  for (const Json& a : r.value("access", Json::array())) {
    std::cout << "node " << Str(a["node"]) << ": " << Str(a["state"]);
    if (a.contains("ssh")) std::cout << ", ssh -p " << Str(a["ssh"]["port"]) << " " << Str(a["ssh"]["user"]) << "@" << Str(a["ssh"]["host"]);
    std::cout << "\n";
    if (a.contains("error")) std::cout << "  error: " << Str(a["error"]) << "\n";
    std::string details = a.value("login_details", "");
    for (size_t at = 0; at < details.size();) {
      size_t nl = details.find('\n', at);
      std::cout << "  " << details.substr(at, nl == std::string::npos ? std::string::npos : nl - at) << "\n";
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
  }
}

void AddReserveCommand(CLI::App& app, const std::shared_ptr<Conn>& conn) {
  struct Args {
    std::string name, tenant, model, topology, start, end, duration, every, until, drain_before, orchestrator, require;
    int gpus = 0, nodes = 0;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("reserve", "Book GPUs (or whole nodes) of a model for a window; all or nothing");
  AddConn(cmd, *conn);
  cmd->add_option("name", a->name, "the reservation's name")->required();
  cmd->add_option("--tenant", a->tenant, "the tenant it is for")->required();
  cmd->add_option("--model", a->model, "GPU model, e.g. H100-80GB")->required();
  cmd->add_option("--gpus", a->gpus, "whole GPUs");
  cmd->add_option("--nodes", a->nodes, "whole nodes (instead of --gpus)");
  cmd->add_option("--topology", a->topology, "nvlink, rack or zone: all in one such domain");
  cmd->add_option("--start", a->start, "RFC 3339 with an offset, e.g. 2026-12-01T09:00:00+01:00")->required();
  cmd->add_option("--end", a->end, "RFC 3339 (or --duration)");
  cmd->add_option("--duration", a->duration, "e.g. 8h (or --end)");
  cmd->add_option("--every", a->every, "repeat: daily, weekly or a duration such as 12h (with --until)");
  cmd->add_option("--until", a->until, "the last window starts before this (RFC 3339)");
  cmd->add_option("--drain-before", a->drain_before, "stop placing work that would not end in time this long before each window");
  cmd->add_option("--orchestrator", a->orchestrator,
                  "with --nodes: what the booked nodes run in the window: none (allot jobs; default), slurm (a private "
                  "Slurm) or hook (the operator's provisioning)");
  cmd->add_option("--require", a->require,
                  "node labels every booked node must have, e.g. 'driver>=550,cuda>=9.0,interconnect=nvlink'");
  cmd->footer("Example: allot reserve eval --tenant research/nlp --model H100-80GB --gpus 16 --topology rack \\\n"
              "           --start 2026-12-01T22:00:00Z --duration 6h --every daily --until 2026-12-08T00:00:00Z\n"
              "         allot reserve own --tenant research/nlp --model H100-80GB --nodes 2 --orchestrator slurm \\\n"
              "           --start 2026-12-01T22:00:00Z --duration 6h");
  cmd->callback([conn, a] {
    Resolve(*conn);
    Json body = {{"name", a->name}, {"tenant", a->tenant}, {"model", a->model}, {"start", a->start}};
    if (a->gpus > 0) body["gpus"] = a->gpus;
    if (a->nodes > 0) body["nodes"] = a->nodes;
    for (auto [key, v] : {std::pair<const char*, std::string*>{"topology", &a->topology}, {"end", &a->end},
                          {"duration", &a->duration}, {"every", &a->every}, {"until", &a->until},
                          {"drain_before", &a->drain_before}, {"orchestrator", &a->orchestrator},
                          {"require", &a->require}}) {
      if (!v->empty()) body[key] = *v;
    }
    Reply r = Call(*conn, "POST", "/v1/reservations", body.dump());
    if (r.status == 409 && r.body.contains("error") && conn->output == "table") {
      // Refused: say so, with when it would fit and what it collides with.
      const Json& e = r.body["error"];
      std::cerr << "allot: " << Str(e["message"]) << "\n";
      if (e.contains("earliest_start")) std::cerr << "  earliest start of the same window: " << ShownTime(e["earliest_start"], NowMs()) << "\n";
      if (e.contains("colliding")) {
        std::string list;
        for (const Json& n : e["colliding"].value("visible", Json::array())) list += (list.empty() ? "" : ", ") + Str(n);
        int others = e["colliding"].value("others", 0);
        if (others > 0) list += (list.empty() ? "" : ", ") + std::to_string(others) + " of other tenants";
        if (!list.empty()) std::cerr << "  collides with: " << list << "\n";
      }
      return SetExitCode(1);
    }
    SetExitCode(Output(*conn, r, PrintReservation));
  });
}

void AddReservationsCommand(CLI::App& app, const std::shared_ptr<Conn>& conn) {
  CLI::App* cmd = app.add_subcommand("reservations", "List, show, cancel, extend or shrink reservations");
  AddConn(cmd, *conn);
  auto all = std::make_shared<bool>(false);
  cmd->add_flag("--all", *all, "cancelled ones too");
  cmd->footer("Examples: allot reservations   |   allot reservations show eval   |   allot reservations extend eval --end …");
  cmd->callback([conn, all, cmd] {
    if (!cmd->get_subcommands().empty()) return;
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "GET", std::string("/v1/reservations") + (*all ? "?all=true" : "")), [](const Json& b) {
      const int64_t now = NowMs();
      std::vector<std::vector<std::string>> rows;
      for (const Json& r : b["reservations"]) {
        const Json& w = r.value("windows", Json::array());
        std::string first = w.empty() ? "-" : ShownTime(w.front()["start"], now);
        std::string last = w.empty() ? "-" : ShownTime(w.back()["end"], now);
        rows.push_back({Str(r["name"]), Str(r["tenant"]), Capacity(r), std::to_string(w.size()), first, last, Str(r["state"])});
      }
      PrintTable({"NAME", "TENANT", "CAPACITY", "WINDOWS", "FIRST START", "LAST END", "STATE"}, rows);
    }));
  });
  auto name = std::make_shared<std::string>();
  auto tenant = std::make_shared<std::string>();
  auto path = [name, tenant] {
    std::string q = Query({{"tenant", *tenant}});
    return "/v1/reservations/" + httplib::detail::encode_query_param(*name) + (q.empty() ? "" : "?" + q);
  };
  CLI::App* show = cmd->add_subcommand("show", "One reservation with its windows and the nodes it holds");
  AddConn(show, *conn);
  show->add_option("name", *name, "reservation name")->required();
  show->add_option("--tenant", *tenant, "its tenant, when tenants you see have reservations of that name");
  show->callback([conn, path] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "GET", path()), PrintReservation));
  });
  CLI::App* cancel = cmd->add_subcommand("cancel", "Cancel a reservation: its capacity is free at once");
  AddConn(cancel, *conn);
  cancel->add_option("name", *name, "reservation name")->required();
  cancel->add_option("--tenant", *tenant, "its tenant, when needed");
  cancel->callback([conn, path] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "DELETE", path()), [](const Json& r) {
      std::cout << "reservation " << Str(r["name"]) << " cancelled\n";
    }));
  });
  auto end = std::make_shared<std::string>();
  auto duration = std::make_shared<std::string>();
  auto window = std::make_shared<int>(-1);
  CLI::App* extend = cmd->add_subcommand("extend", "Move a window's end: later only if its nodes stay free, or earlier");
  AddConn(extend, *conn);
  extend->add_option("name", *name, "reservation name")->required();
  extend->add_option("--tenant", *tenant, "its tenant, when needed");
  extend->add_option("--end", *end, "the new end (RFC 3339)");
  extend->add_option("--duration", *duration, "the window's new length from its start, e.g. 10h");
  extend->add_option("--window", *window, "which window (default: the first not yet over)");
  extend->callback([conn, path, end, duration, window] {
    Resolve(*conn);
    Json body = Json::object();
    if (!end->empty()) body["end"] = *end;
    if (!duration->empty()) body["duration"] = *duration;
    if (*window >= 0) body["window"] = *window;
    SetExitCode(Output(*conn, Call(*conn, "PATCH", path(), body.dump()), PrintReservation));
  });
  auto gpus = std::make_shared<int>(0);
  auto nodes = std::make_shared<int>(0);
  CLI::App* shrink = cmd->add_subcommand("shrink", "Hold fewer GPUs (or nodes) in every window not yet over; the cut is free at once");
  AddConn(shrink, *conn);
  shrink->add_option("name", *name, "reservation name")->required();
  shrink->add_option("--tenant", *tenant, "its tenant, when needed");
  shrink->add_option("--gpus", *gpus, "the GPUs it keeps (a reservation booked by GPU)");
  shrink->add_option("--nodes", *nodes, "the nodes it keeps (a reservation booked by node)");
  shrink->footer("Example: allot reservations shrink eval --gpus 8");
  shrink->callback([conn, path, gpus, nodes] {
    Resolve(*conn);
    if ((*gpus > 0) == (*nodes > 0)) throw CLI::ValidationError("give --gpus N or --nodes N, one of them, N ≥ 1");
    Json body = Json::object();
    if (*gpus > 0) body["gpus"] = *gpus;
    if (*nodes > 0) body["nodes"] = *nodes;
    SetExitCode(Output(*conn, Call(*conn, "PATCH", path(), body.dump()), PrintReservation));
  });
}

void AddAvailabilityCommand(CLI::App& app, const std::shared_ptr<Conn>& conn) {
  struct Args {
    std::string model, topology, duration = "1h", at, tenant, require;
    int gpus = 0, nodes = 0;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("availability", "What is free now, and the earliest start of N GPUs of a model for a while");
  AddConn(cmd, *conn);
  cmd->add_option("--model", a->model, "GPU model, e.g. H100-80GB")->required();
  cmd->add_option("--gpus", a->gpus, "whole GPUs");
  cmd->add_option("--nodes", a->nodes, "whole nodes (instead of --gpus)");
  cmd->add_option("--duration", a->duration, "for how long (default 1h)");
  cmd->add_option("--topology", a->topology, "nvlink, rack or zone");
  cmd->add_option("--at", a->at, "not before this time (RFC 3339; default now)");
  cmd->add_option("--tenant", a->tenant, "count this tenant's queued jobs ahead (placed first, in its order)");
  cmd->add_option("--require", a->require, "only nodes whose labels satisfy this, e.g. 'driver>=550,cuda>=9.0'");
  cmd->footer("Example: allot availability --model H100-80GB --gpus 64 --duration 8h --topology rack --tenant research");
  cmd->callback([conn, a] {
    Resolve(*conn);
    std::string q = Query({{"model", a->model}, {"gpus", a->gpus > 0 ? std::to_string(a->gpus) : ""},
                           {"nodes", a->nodes > 0 ? std::to_string(a->nodes) : ""}, {"duration", a->duration},
                           {"topology", a->topology}, {"at", a->at}, {"tenant", a->tenant}, {"require", a->require}});
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/availability?" + q), [](const Json& b) {
      const int64_t now = NowMs();
      const Json& f = b["free_now"];
      std::cout << Str(b["model"]) << " free now: " << Str(f["gpus"]) << " GPUs (" << Str(f["idle_nodes"]) << " whole nodes idle)\n";
      if (b.contains("not_offered")) std::cout << "not offered: " << Str(b["not_offered"]) << "\n";
      std::vector<std::vector<std::string>> rows;
      for (const auto& [zone, n] : f["zones"].items()) rows.push_back({"zone", Shown(zone), Str(n)});
      for (const auto& [rack, n] : f["racks"].items()) rows.push_back({"rack", Shown(rack), Str(n)});
      PrintTable({"", "WHERE", "FREE GPUS"}, rows);
      if (b["earliest_start"].is_null()) {
        std::cout << "earliest start: none within a year: " << Str(b["why"]) << "\n";
        return;
      }
      std::cout << "earliest start for " << Str(b["duration"]) << ": " << ShownTime(b["earliest_start"], now) << "\n";
      for (const Json& w : b.value("waited_for", Json::array())) {
        std::string what = w.contains("name") ? Str(w["kind"]) + " " + Str(w["tenant"]) + "/" + Str(w["name"])
                                              : "a " + Str(w["kind"]) + " of another tenant";
        std::cout << "  after " << what << " ending " << ShownTime(w["ends"], now) << "\n";
      }
      std::string considered;
      for (const Json& c : b.value("considers", Json::array())) considered += (considered.empty() ? "" : "; ") + Str(c);
      std::cout << "(considers " << considered << (b.contains("not_considered") ? "; not " + Str(b["not_considered"]) : "") << ")\n";
    }));
  });
}


void AddCalendarCommand(CLI::App& app, const std::shared_ptr<Conn>& conn) {
  struct Args {
    std::string model, from, to, step = "1h";
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("calendar", "Free, reserved and in-use GPUs of a model over time");
  AddConn(cmd, *conn);
  cmd->add_option("--model", a->model, "GPU model, e.g. H100-80GB")->required();
  cmd->add_option("--from", a->from, "RFC 3339 (default now)");
  cmd->add_option("--to", a->to, "RFC 3339 (default 7 days on)");
  cmd->add_option("--step", a->step, "e.g. 1h (default), 1d; at most 1000 steps");
  cmd->footer("Example: allot calendar --model H100-80GB --step 6h");
  cmd->callback([conn, a] {
    Resolve(*conn);
    std::string q = Query({{"model", a->model}, {"from", a->from}, {"to", a->to}, {"step", a->step}});
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/calendar?" + q), [](const Json& b) {
      const int64_t now = NowMs();
      std::cout << Str(b["model"]) << ": " << Str(b["capacity"]) << " GPUs on ready whole-GPU nodes, steps of " << Str(b["step"]) << "\n";
      std::vector<std::vector<std::string>> rows;
      for (const Json& s : b["steps"]) {
        rows.push_back({ShownTime(s["start"], now), Str(s["free"]), Str(s["reserved"]), Str(s["in_use"])});
      }
      PrintTable({"FROM", "FREE", "RESERVED", "IN USE"}, rows);
    }));
  });
}

}  // namespace

void AddReservationCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  AddReserveCommand(app, conn);
  AddReservationsCommand(app, conn);
  AddAvailabilityCommand(app, conn);
  AddCalendarCommand(app, conn);
}

}  // namespace allot::cli
