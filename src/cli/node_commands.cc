// `allot nodes [show|cordon|drain|uncordon|check]`: the fleet through allotd's API.
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

void AddNodeCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();

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
        std::string labels;
        if (n.contains("labels") && n["labels"].is_object()) {
          for (const auto& [k, v] : n["labels"].items()) labels += (labels.empty() ? "" : ",") + k + "=" + Str(v);
        }
        rows.push_back({Str(n["name"]), Str(n["condition"]), Str(n["pool"]), Str(n["gpu_model"]),
                        std::to_string(n.value("gpus_idle", 0)) + "/" + std::to_string(n.value("gpus", 0)),
                        Str(n["cpu_free"]) + "/" + Str(n["cpu"]), labels.empty() ? "-" : labels});
      }
      PrintTable({"NODE", "CONDITION", "POOL", "MODEL", "IDLE GPUS", "FREE CPUS", "LABELS"}, rows);
    }));
  });
}

}  // namespace allot::cli
