// The client side of `allot`: how commands talk to allotd over its REST API (client.h).
//
// Server and token come from --server/--token, else ALLOT_SERVER/ALLOT_TOKEN, else what
// `allot login` saved in ~/.config/allot/config (mode 0600). Output is a table for people, or
// `-o json|yaml` for scripts. Exit codes: 0 done; 1 the server refused (the message says why);
// 2 bad usage; 3 allotd unreachable or failing.
#include "cli/client.h"

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


std::optional<std::string> ReadBodyFile(const std::string& file, const std::string& what) {
  std::stringstream body;
  if (file == "-") {
    body << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "allot: " << what << ": cannot open " << file << "\n";
      return std::nullopt;
    }
    body << in.rdbuf();
  }
  return body.str();
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
                      : method == "PATCH"  ? http.Patch(path.c_str(), body.empty() ? "{}" : body, content_type)
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

}  // namespace allot::cli
