// The API client's plumbing (client.cc), shared by the `allot` commands that talk to allotd:
// the verb files (access_, job_, tenant_, node_, billing_commands.cc) and ledger_command.cc.
// Exit codes: 0 done; 1 the server refused (the message says why); 2 bad usage; 3 allotd
// unreachable or failing.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allot::cli {

using Json = nlohmann::json;

struct Conn {
  std::string server;
  std::string token;
  std::string ca_cert;  // for an https server whose certificate the system does not trust
  std::string output = "table";
};

struct Reply {
  int status = 0;  // 0: no answer
  Json body;
  std::string error;
  std::string raw;  // the body as sent (text answers: /v1/ledger, CSV)
};

// Where `allot login` saves the server and token: $XDG_CONFIG_HOME/allot/config, else
// ~/.config/allot/config (mode 0600).
std::filesystem::path ConfigPath();
// Fills server and token from the environment and the saved login where flags left them empty.
void Resolve(Conn& c);
// `content_type` says what `body` is written in (allotd reads YAML only when it says so).
Reply Call(const Conn& c, const std::string& method, const std::string& path, const std::string& body = "",
           const std::string& content_type = "application/json");
// The Content-Type of a file sent as a body: .yaml/.yml → application/yaml, .json →
// application/json; otherwise (stdin, other names) JSON if the text is a JSON value, else YAML.
std::string BodyType(const std::string& file, const std::string& text);
// A request body from `file` ('-': stdin); nullopt, with "allot: WHAT: cannot open FILE" printed,
// when the file cannot be opened.
std::optional<std::string> ReadBodyFile(const std::string& file, const std::string& what);
// Prints the refusal or failure and returns the exit code; 0 when the reply is a success.
int Check(const Reply& r);
// A JSON value as text to print: strings through Shown, "-" for null, the rest as JSON.
std::string Str(const Json& v);
// What a user supplied (a job name, a tenant, a reason, a command, a message quoting either)
// made safe for a terminal: control characters and escape sequences shown as \x1b and so on
// (core/names.h EscapeText), so another tenant's text cannot drive the reader's terminal.
// Everything printed that came from allotd goes through here.
std::string Shown(std::string_view s);
// {"amount": "12.50", "currency": "USD"} → "12.50 USD"; "-" for anything else.
std::string Money(const Json& m);
// Columns sized to their widest cell.
void PrintTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
// -o json|yaml, else `table`; returns the exit code.
int Output(const Conn& c, const Reply& r, const std::function<void(const Json&)>& table);
// --server, --token, --ca-cert, -o.
void AddConn(CLI::App* cmd, Conn& c);
// "a=1&b=x%2Fy" from (key, value) pairs, empty values left out.
std::string Query(const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace allot::cli
