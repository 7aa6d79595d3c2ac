// The client side of `allot`: commands that talk to allotd over its REST API.
//
// Server and token come from --server/--token, else ALLOT_SERVER/ALLOT_TOKEN, else what
// `allot login` saved in ~/.config/allot/config (mode 0600). Output is a table for people, or
// `-o json|yaml` for scripts. Exit codes: 0 done; 1 the server refused (the message says why);
// 2 bad usage; 3 allotd unreachable or failing.
#include "cli/client_commands.h"

#include <httplib.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

#include "cli/agent_commands.h"
#include "cli/client.h"
#include "cli/job_view.h"
#include "core/names.h"
#include "cli/sim_command.h"
#include "core/quantity.h"

namespace allot::cli {

// The helpers client.h declares (shared with billing_commands.cc).

std::filesystem::path ConfigPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path base = xdg && *xdg ? xdg : std::filesystem::path(home ? home : ".") / ".config";
  return base / "allot" / "config";
}

// Fills server and token from the environment and the saved login where flags left them empty.
void Resolve(Conn& c) {
  if (c.server.empty() && std::getenv("ALLOT_SERVER")) c.server = std::getenv("ALLOT_SERVER");
  if (c.token.empty() && std::getenv("ALLOT_TOKEN")) c.token = std::getenv("ALLOT_TOKEN");
  if (c.server.empty() || c.token.empty()) {
    std::ifstream in(ConfigPath());
    std::string key, value;
    while (in >> key >> value) {
      if (key == "server" && c.server.empty()) c.server = value;
      if (key == "token" && c.token.empty()) c.token = value;
    }
  }
  if (c.server.empty()) c.server = "http://127.0.0.1:7070";
}


std::string BodyType(const std::string& file, const std::string& text) {
  if (file.ends_with(".yaml") || file.ends_with(".yml")) return "application/yaml";
  if (file.ends_with(".json")) return "application/json";
  return Json::accept(text) ? "application/json" : "application/yaml";
}

Reply Call(const Conn& c, const std::string& method, const std::string& path, const std::string& body,
           const std::string& content_type) {
  httplib::Client http(c.server);
  http.set_connection_timeout(5);
  http.set_tcp_nodelay(true);
  http.set_read_timeout(30);
  if (!c.token.empty()) http.set_bearer_token_auth(c.token.c_str());
  if (!c.ca_cert.empty()) http.set_ca_cert_path(c.ca_cert.c_str());
  httplib::Result r = method == "GET"      ? http.Get(path.c_str())
                      : method == "DELETE" ? http.Delete(path.c_str())
                                           : http.Post(path.c_str(), body.empty() ? "{}" : body, content_type);
  Reply out;
  if (!r) {
    out.error = "cannot reach allotd at " + c.server + " (" + httplib::to_string(r.error()) + ")";
    return out;
  }
  out.status = r->status;
  out.body = Json::parse(r->body, nullptr, false);
  out.raw = r->body;
  return out;
}

// Prints the refusal or failure and returns the exit code; 0 when the reply is a success.
std::string Query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    if (!v.empty()) q += std::string(q.empty() ? "" : "&") + k + "=" + httplib::detail::encode_query_param(v);
  }
  return q;
}

int Check(const Reply& r) {
  if (r.status == 0) {
    std::cerr << "allot: " << r.error << "\n";
    return 3;
  }
  if (r.status >= 200 && r.status < 300) return 0;
  std::string msg = r.body.is_object() && r.body.contains("error") ? r.body["error"].value("message", "") : "";
  std::cerr << "allot: " << (msg.empty() ? "HTTP " + std::to_string(r.status) : Shown(msg)) << "\n";
  return r.status >= 500 ? 3 : 1;
}

std::string Money(const Json& m) {
  if (!m.is_object()) return "-";
  return m.value("amount", "-") + " " + m.value("currency", "");
}

std::string Str(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return Shown(v.get<std::string>());
  return Shown(v.dump());
}

std::string Shown(std::string_view s) { return EscapeText(s, std::string_view::npos); }

// Columns sized to their widest cell.
void PrintTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(header.size());
  for (size_t i = 0; i < header.size(); ++i) w[i] = header[i].size();
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      out += cells[i];
      if (i + 1 < cells.size()) out += std::string(w[i] - cells[i].size() + 2, ' ');
    }
    std::cout << out << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
}

namespace {

std::string GpusOf(const Json& job) {
  int64_t milli = 0;
  for (const Json& p : job.value("placement", Json::array())) milli += p.value("share", 0);
  if (milli == 0) return "-";
  std::ostringstream s;
  s << static_cast<double>(milli) / 1000.0;
  return s.str();
}

std::vector<std::string> JobRow(const Json& j) {
  std::string nodes;
  for (const Json& n : j.value("nodes", Json::array())) nodes += (nodes.empty() ? "" : ",") + Str(n);
  std::string tail = j["reason"].is_string() ? Str(j["reason"]) : nodes;
  return {Str(j["name"]), Str(j["tenant"]), Str(j["state"]), Str(j["class"]), GpusOf(j), tail.empty() ? "-" : tail};
}

}  // namespace

namespace {

void EmitYaml(YAML::Emitter& out, const Json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [k, x] : v.items()) {
      out << YAML::Key << k << YAML::Value;
      EmitYaml(out, x);
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const Json& x : v) EmitYaml(out, x);
    out << YAML::EndSeq;
  } else if (v.is_null()) {
    out << YAML::Null;
  } else if (v.is_string()) {
    out << v.get<std::string>();
  } else {
    out << v.dump();
  }
}

}  // namespace

int Output(const Conn& c, const Reply& r, const std::function<void(const Json&)>& table) {
  if (int rc = Check(r); rc != 0) return rc;
  if (c.output == "json") {
    std::cout << r.body.dump(2) << "\n";
  } else if (c.output == "yaml") {
    YAML::Emitter out;
    EmitYaml(out, r.body);
    std::cout << out.c_str() << "\n";
  } else {
    table(r.body);
  }
  return 0;
}

void AddConn(CLI::App* cmd, Conn& c) {
  cmd->add_option("--server", c.server, "allotd URL (env ALLOT_SERVER; default http://127.0.0.1:7070)");
  cmd->add_option("--token", c.token, "bearer token (env ALLOT_TOKEN, or what `allot login` saved)");
  cmd->add_option("--ca-cert", c.ca_cert, "PEM CA certificate to trust for an https --server");
  cmd->add_option("-o,--output", c.output, "table, json or yaml")->check(CLI::IsMember({"table", "json", "yaml"}));
}


void AddClientCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();

  // login
  auto login_token_file = std::make_shared<std::string>();
  CLI::App* login = app.add_subcommand("login", "Check a server and token, and save them for later commands");
  AddConn(login, *conn);
  login->add_option("--token-file", *login_token_file, "read the token from this file (e.g. allotd's admin-token)");
  login->footer("Example: allot login --server http://127.0.0.1:7070 --token-file ./allot-data/admin-token");
  login->callback([conn, login_token_file] {
    if (!login_token_file->empty()) {
      std::ifstream in(*login_token_file);
      if (!(in >> conn->token)) {
        std::cerr << "allot: --token-file: cannot read a token from " << *login_token_file << "\n";
        return SetExitCode(2);
      }
    }
    Resolve(*conn);
    if (conn->token.empty()) {
      std::cerr << "allot: login needs --token or --token-file\n";
      return SetExitCode(2);
    }
    Reply r = Call(*conn, "GET", "/v1/jobs?limit=1");
    if (int rc = Check(r); rc != 0) return SetExitCode(rc);
    std::filesystem::path p = ConfigPath();
    std::filesystem::create_directories(p.parent_path());
    {
      std::ofstream out(p, std::ios::trunc);
      out << "server " << conn->server << "\ntoken " << conn->token << "\n";
    }
    ::chmod(p.c_str(), 0600);
    std::cout << "logged in to " << conn->server << "; saved in " << p.string() << "\n";
  });

  // submit
  auto file = std::make_shared<std::string>();
  CLI::App* submit = app.add_subcommand("submit", "Submit a job (a job as a scenario writes it, in YAML or JSON)");
  AddConn(submit, *conn);
  submit->add_option("-f,--file", *file, "the job file ('-' for stdin)")->required();
  submit->footer("Example: allot submit -f job.yaml   where job.yaml holds\n"
                 "  {name: train, tenant: research/nlp, duration: 2h, tasks: {count: 2, gpus: 8}, topology: rack}");
  submit->callback([conn, file] {
    Resolve(*conn);
    std::stringstream body;
    if (*file == "-") {
      body << std::cin.rdbuf();
    } else {
      std::ifstream in(*file);
      if (!in) {
        std::cerr << "allot: -f: cannot open " << *file << "\n";
        return SetExitCode(2);
      }
      body << in.rdbuf();
    }
    std::string type = BodyType(*file, body.str());
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/jobs", body.str(), type), [](const Json& j) {
      std::cout << "job " << Str(j["name"]) << " " << Str(j["state"]);
      if (j["reason"].is_string()) std::cout << ": " << Str(j["reason"]);
      std::cout << "\n";
    }));
  });

  // jobs
  auto tenant = std::make_shared<std::string>();
  auto state = std::make_shared<std::string>();
  CLI::App* jobs = app.add_subcommand("jobs", "List jobs (those in your scope)");
  AddConn(jobs, *conn);
  jobs->add_option("--tenant", *tenant, "only this tenant's subtree");
  jobs->add_option("--state", *state, "pending, running, preempting, finished, rejected or cancelled");
  jobs->footer("Example: allot jobs --tenant research --state pending");
  jobs->callback([conn, tenant, state] {
    Resolve(*conn);
    std::string q = "/v1/jobs?limit=1000";
    if (!tenant->empty()) q += "&tenant=" + httplib::detail::encode_query_param(*tenant);
    if (!state->empty()) q += "&state=" + *state;
    SetExitCode(Output(*conn, Call(*conn, "GET", q), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& j : b["jobs"]) rows.push_back(JobRow(j));
      PrintTable({"NAME", "TENANT", "STATE", "CLASS", "GPUS", "NODES / REASON"}, rows);
    }));
  });

  // describe / explain / cancel
  for (const char* verb : {"describe", "explain", "cancel"}) {
    auto name = std::make_shared<std::string>();
    auto in_tenant = std::make_shared<std::string>();
    std::string v = verb;
    CLI::App* cmd = app.add_subcommand(verb, v == "describe" ? "Show a job" : v == "explain" ? "Why a job waits, with its demand"
                                                                                                : "Cancel a job");
    AddConn(cmd, *conn);
    cmd->add_option("job", *name, "job name")->required();
    cmd->add_option("--tenant", *in_tenant, "the job's tenant, when tenants you see have jobs of the same name");
    cmd->footer("Examples: allot " + v + " train   |   allot " + v + " train --tenant research/nlp");
    cmd->callback([conn, name, in_tenant, v] {
      Resolve(*conn);
      std::string path = "/v1/jobs/" + httplib::detail::encode_query_param(*name);
      std::string query = Query({{"tenant", *in_tenant}});
      std::string tail = query.empty() ? "" : "?" + query;
      Reply r = v == "cancel" ? Call(*conn, "POST", path + "/cancel" + tail)
                              : Call(*conn, "GET", (v == "explain" ? path + "/explain" : path) + tail);
      SetExitCode(Output(*conn, r, [](const Json& j) { PrintJobView(std::cout, j); }));
    });
  }

  // quota
  CLI::App* quota = app.add_subcommand("quota", "The tenant tree: usage against guarantee and max");
  AddConn(quota, *conn);
  quota->footer("Example: allot quota -o json");
  quota->callback([conn] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/tenants"), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& t : b["tenants"]) {
        std::string path = t["path"];
        std::string shown = std::string(2 * std::count(path.begin(), path.end(), '/'), ' ') + path;
        // Every GPU model the tenant uses or has a quota for.
        std::set<std::string> models;
        for (const char* part : {"usage", "guarantee", "max"}) {
          for (const auto& [res, v] : t[part].items()) {
            if (res.rfind("gpu/", 0) == 0 && !(part == std::string("usage") && v == "0")) models.insert(res);
          }
        }
        if (models.empty()) rows.push_back({shown, "-", "-", "-", "-"});
        for (const std::string& res : models) {
          rows.push_back({shown, res, t["usage"].value(res, "0"), t["guarantee"].value(res, "-"), t["max"].value(res, "unlimited")});
        }
      }
      PrintTable({"TENANT", "RESOURCE", "USED", "GUARANTEE", "MAX"}, rows);
    }));
  });

  // usage
  auto usage_tenant = std::make_shared<std::string>();
  auto usage_from = std::make_shared<std::string>();
  auto usage_to = std::make_shared<std::string>();
  auto usage_since = std::make_shared<std::string>();
  CLI::App* usage = app.add_subcommand("usage", "Resource-hours per tenant over a window (each tenant covers its subtree)");
  AddConn(usage, *conn);
  usage->add_option("--tenant", *usage_tenant, "only this tenant's subtree");
  usage->add_option("--since", *usage_since, "the window ends now and starts this long ago (e.g. 7d, 12h); default 24h");
  usage->add_option("--from", *usage_from, "window start: Unix seconds or RFC 3339 UTC (2026-11-01T00:00:00Z)");
  usage->add_option("--to", *usage_to, "window end (default now)");
  usage->footer("Examples: allot usage --since 7d   |   allot usage --tenant research --from 2026-11-01T00:00:00Z -o json");
  usage->callback([conn, usage_tenant, usage_from, usage_to, usage_since] {
    Resolve(*conn);
    std::string q;
    auto add = [&](const char* key, const std::string& v) {
      if (!v.empty()) q += std::string(q.empty() ? "?" : "&") + key + "=" + httplib::detail::encode_query_param(v);
    };
    if (!usage_since->empty()) {
      if (!usage_from->empty()) {
        std::cerr << "allot: usage: give --since or --from, not both\n";
        return SetExitCode(2);
      }
      auto d = ParseDurationMs(*usage_since);
      if (!d || *d <= 0) {
        std::cerr << "allot: --since: '" << *usage_since << "' is not a duration like 24h or 7d\n";
        return SetExitCode(2);
      }
      int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
      add("from", std::to_string(now_s - *d / 1000));
    }
    add("from", *usage_from);
    add("to", *usage_to);
    add("tenant", *usage_tenant);
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/usage" + q), [](const Json& b) {
      std::cout << "from " << Str(b["from"]) << " to " << Str(b["to"]) << "\n";
      auto hours = [](const Json& v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", v.is_number() ? v.get<double>() : 0.0);
        return std::string(buf);
      };
      std::vector<std::vector<std::string>> rows;
      for (const Json& t : b["tenants"]) {
        std::string path = t["path"];
        std::string shown = std::string(2 * std::count(path.begin(), path.end(), '/'), ' ') + path;
        std::string gpus;
        for (const auto& [model, h] : t["gpu_hours"].items()) gpus += (gpus.empty() ? "" : ", ") + model + " " + hours(h);
        rows.push_back({shown, Str(t["jobs"]), gpus.empty() ? "-" : gpus, hours(t["cpu_hours"]), hours(t["memory_gib_hours"])});
      }
      PrintTable({"TENANT", "JOBS", "GPU-HOURS", "CPU-HOURS", "MEMORY-GIB-HOURS"}, rows);
    }));
  });

  // tenants: create or update (apply), delete, move
  CLI::App* tenants = app.add_subcommand("tenants", "Create, update, delete or move tenants (see `allot quota` for the tree)");
  tenants->require_subcommand(1);
  auto tenant_file = std::make_shared<std::string>();
  CLI::App* apply = tenants->add_subcommand("apply", "Create or update tenants from YAML or JSON: one tenant, a list, or a "
                                                     "scenario's `tenants:` section (parents before children)");
  AddConn(apply, *conn);
  apply->add_option("-f,--file", *tenant_file, "the tenants file ('-' for stdin)")->required();
  apply->footer("Example: allot tenants apply -f team.yaml   where team.yaml holds\n"
                "  {path: research/nlp, guarantee: {gpu/H100-80GB: 16}, max: {gpu/H100-80GB: 32}}");
  apply->callback([conn, tenant_file] {
    Resolve(*conn);
    YAML::Node doc;
    try {
      doc = *tenant_file == "-" ? YAML::Load(std::cin) : YAML::LoadFile(*tenant_file);
    } catch (const YAML::Exception& e) {
      std::cerr << "allot: -f " << *tenant_file << ": " << e.what() << "\n";
      return SetExitCode(2);
    }
    if (doc.IsMap() && doc["tenants"]) doc = doc["tenants"];
    std::vector<YAML::Node> items;
    if (doc.IsSequence()) {
      for (const YAML::Node& t : doc) items.push_back(t);
    } else {
      items.push_back(doc);
    }
    // One request per tenant, in order, stopping at the first refusal: the tenants before it
    // are applied, and the message says which one failed.
    for (const YAML::Node& t : items) {
      YAML::Emitter out;
      out << YAML::Flow << t;
      Reply r = Call(*conn, "POST", "/v1/tenants", out.c_str(), "application/yaml");  // emitted as YAML
      if (int rc = Output(*conn, r, [&](const Json& j) {
            std::cout << "tenant " << Str(j["path"]) << (r.status == 201 ? " created" : " updated") << "\n";
          });
          rc != 0) {
        return SetExitCode(rc);
      }
    }
  });
  auto tenant_path = std::make_shared<std::string>();
  CLI::App* del = tenants->add_subcommand("delete", "Delete a tenant with no children and no pending or running jobs "
                                                    "(its tokens are revoked)");
  AddConn(del, *conn);
  del->add_option("path", *tenant_path, "tenant path")->required();
  del->footer("Example: allot tenants delete research/old-project");
  del->callback([conn, tenant_path] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "DELETE", "/v1/tenants/" + *tenant_path),
                       [](const Json& j) { std::cout << "tenant " << Str(j["path"]) << " deleted\n"; }));
  });
  auto move_to = std::make_shared<std::string>();
  CLI::App* move = tenants->add_subcommand("move", "Move or rename a subtree; its running jobs and usage move with it");
  AddConn(move, *conn);
  move->add_option("path", *tenant_path, "tenant path")->required();
  move->add_option("--to", *move_to, "the new path")->required();
  move->footer("Example: allot tenants move research/nlp --to ml/nlp");
  move->callback([conn, tenant_path, move_to] {
    Resolve(*conn);
    Json body = {{"path", *tenant_path}, {"to", *move_to}};
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/tenants/move", body.dump()), [](const Json& j) {
      std::cout << "tenant " << Str(j["from"]) << " moved to " << Str(j["path"]) << "\n";
    }));
  });

  // nodes
  auto node_action = std::make_shared<std::string>();
  auto node_name = std::make_shared<std::string>();
  CLI::App* nodes = app.add_subcommand("nodes", "List nodes; show one; cordon, drain, uncordon or health-check one");
  AddConn(nodes, *conn);
  nodes->add_option("action", *node_action, "show, check, cordon, drain or uncordon")
      ->check(CLI::IsMember({"show", "check", "cordon", "drain", "uncordon"}));
  nodes->add_option("node", *node_name, "node name");
  nodes->footer("Examples: allot nodes   |   allot nodes show gpu-a   |   allot nodes check gpu-a   |   allot nodes cordon h100-3");
  nodes->callback([conn, node_action, node_name] {
    Resolve(*conn);
    if (!node_action->empty()) {
      if (node_name->empty()) {
        std::cerr << "allot: nodes " << *node_action << ": a node name is required\n";
        return SetExitCode(2);
      }
      if (*node_action == "show") return SetExitCode(ShowNode(*conn, *node_name));
      if (*node_action == "check") return SetExitCode(CheckNode(*conn, *node_name, 60));
      Reply r = Call(*conn, "POST", "/v1/nodes/" + httplib::detail::encode_query_param(*node_name) + "/" + *node_action);
      return SetExitCode(Output(*conn, r, [](const Json& j) { std::cout << Str(j["name"]) << " " << Str(j["condition"]) << "\n"; }));
    }
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/nodes"), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& n : b["nodes"]) {
        rows.push_back({Str(n["name"]), Str(n["condition"]), Str(n["pool"]), Str(n["gpu_model"]),
                        std::to_string(n.value("gpus_idle", 0)) + "/" + std::to_string(n.value("gpus", 0)),
                        Str(n["cpu_free"]) + "/" + Str(n["cpu"])});
      }
      PrintTable({"NODE", "CONDITION", "POOL", "MODEL", "IDLE GPUS", "FREE CPUS"}, rows);
    }));
  });

  // audit list (`audit verify` is audit_command.cc's, offline)
  if (CLI::App* audit = app.get_subcommand("audit")) {  // registered by AddAuditCommand first
    auto after = std::make_shared<int64_t>(-1);
    CLI::App* list = audit->add_subcommand("list", "The audit log records you may read (auditors, admins)");
    AddConn(list, *conn);
    list->add_option("--after", *after, "only records after this sequence number");
    list->footer("Example: allot audit list -o json");
    list->callback([conn, after] {
      Resolve(*conn);
      std::string path = "/v1/audit" + (*after >= 0 ? "?after=" + std::to_string(*after) : std::string());
      SetExitCode(Output(*conn, Call(*conn, "GET", path), [](const Json& b) {
        std::vector<std::vector<std::string>> rows;
        for (const Json& r : b["records"]) {
          rows.push_back({Str(r["seq"]), Str(r["actor"]), Str(r["role"]), Str(r["action"]), Str(r["tenant"]), Str(r["target"]),
                          Str(r["outcome"])});
        }
        PrintTable({"SEQ", "ACTOR", "ROLE", "ACTION", "TENANT", "TARGET", "OUTCOME"}, rows);
      }));
    });
  }

  // tokens
  auto principal = std::make_shared<std::string>();
  auto role = std::make_shared<std::string>();
  auto scope = std::make_shared<std::string>();
  CLI::App* tokens = app.add_subcommand("tokens", "Issue, list and revoke tokens");
  tokens->require_subcommand(1);
  CLI::App* list = tokens->add_subcommand("list", "The live tokens you manage");
  AddConn(list, *conn);
  list->footer("Example: allot tokens list");
  list->callback([conn] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/tokens"), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& t : b["tokens"]) rows.push_back({Str(t["id"]), Str(t["principal"]), Str(t["role"]), Str(t["scope"])});
      PrintTable({"ID", "PRINCIPAL", "ROLE", "SCOPE"}, rows);
    }));
  });
  auto revoke_id = std::make_shared<std::string>();
  CLI::App* revoke = tokens->add_subcommand("revoke", "Revoke a token by its id (from `allot tokens list`)");
  AddConn(revoke, *conn);
  revoke->add_option("id", *revoke_id, "token id")->required();
  revoke->footer("Example: allot tokens revoke 3f2a9c0d41b7e865");
  revoke->callback([conn, revoke_id] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/tokens/" + httplib::detail::encode_query_param(*revoke_id) + "/revoke"),
                       [](const Json& j) { std::cout << "revoked " << Str(j["id"]) << "\n"; }));
  });
  CLI::App* create = tokens->add_subcommand("create", "Issue a token for a principal, a role and a scope (shown once)");
  AddConn(create, *conn);
  create->add_option("--principal", *principal,
                     "who the token is for; for --role node, the node's name (one token per node: it acts only for that "
                     "node). '*' makes a node token that acts for any node: for demos only, never for a real fleet")
      ->required();
  create->add_option("--role", *role, "platform-admin, org-admin, team-admin, member, auditor or viewer")->required();
  create->add_option("--scope", *scope, "tenant path the role covers ('' = everything)")->required();
  create->footer("Example: allot tokens create --principal alice --role member --scope research/nlp");
  create->callback([conn, principal, role, scope] {
    Resolve(*conn);
    Json body = {{"principal", *principal}, {"role", *role}, {"scope", *scope}};
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/tokens", body.dump()), [](const Json& j) {
      std::cout << Str(j["token"]) << "\n";
    }));
  });
}

}  // namespace allot::cli
