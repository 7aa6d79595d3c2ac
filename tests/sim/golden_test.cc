// Scenario golden tests: each tests/scenarios/NAME.yaml runs in the simulator (invariants
// verified after every pass) and its report must match NAME.expected.json, a subset:
//   {"jobs": {"job-name": {"state": "finished", "started": 60, ..., "reason_contains": "…"}},
//    "tenant_states": {"tenant/path": {"running": 3, "pending": 7}},
//    "fleet": {"gpus": 32},
//    "reservations": [{"name": "r", "start": 3600, "state": "confirmed", "gpus": 12}, …]}
// (reservations: the report's entries in order, each checked on the keys given; "gpus" sums the
// holds, "reason_contains" reads the reason)
// or {"stages": [{"until": "1h", "jobs": …}, …]} to check the state at several virtual times,
// or {"refused_contains": ["…", …]} for a scenario the reader must refuse with those words.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/quantity.h"
#include "sim/report.h"
#include "sim/simulator.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::vector<std::string> Scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(ALLOT_SOURCE_DIR) / "tests/scenarios")) {
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

class GoldenScenario : public ::testing::TestWithParam<std::string> {};

void CheckStage(const fs::path& scenario, const Json& expected) {
  SimOptions opt;
  opt.verify = true;
  if (expected.contains("until")) opt.until_ms = *ParseDurationMs(expected["until"].get<std::string>());
  SCOPED_TRACE("until " + (expected.contains("until") ? expected["until"].get<std::string>() : "the end"));
  auto run = RunScenarioFile(scenario.string(), opt, std::nullopt);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  Json report = Json::parse(ReportJson(*run, {.timing = false}));

  std::map<std::string, Json> jobs;
  for (const Json& j : report["jobs"]) jobs[j["name"]] = j;
  const Json want_jobs = expected.value("jobs", Json::object());
  for (const auto& [name, want] : want_jobs.items()) {
    ASSERT_TRUE(jobs.count(name)) << "no job " << name << " in the report";
    const Json& got = jobs[name];
    for (const auto& [key, value] : want.items()) {
      if (key == "reason_contains") {
        ASSERT_TRUE(got["reason"].is_string()) << name << ": expected a reason, got " << got["reason"];
        EXPECT_NE(got["reason"].get<std::string>().find(value.get<std::string>()), std::string::npos)
            << name << ": reason '" << got["reason"].get<std::string>() << "' lacks '" << value.get<std::string>() << "'";
      } else {
        EXPECT_EQ(got[key], value) << name << "." << key;
      }
    }
  }
  const Json want_states = expected.value("tenant_states", Json::object());
  for (const auto& [tenant, states] : want_states.items()) {
    std::map<std::string, int> counts;
    for (const Json& j : report["jobs"]) {
      if (j["tenant"] == tenant) counts[j["state"]]++;
    }
    for (const auto& [state, n] : states.items()) EXPECT_EQ(counts[state], n.get<int>()) << tenant << " " << state;
  }
  if (expected.contains("reservations")) {
    const Json got = report.value("reservations", Json::array());
    ASSERT_EQ(got.size(), expected["reservations"].size()) << got;
    for (size_t i = 0; i < got.size(); ++i) {
      for (const auto& [key, value] : expected["reservations"][i].items()) {
        if (key == "reason_contains") {
          EXPECT_NE(got[i].value("reason", "").find(value.get<std::string>()), std::string::npos) << got[i];
        } else if (key == "gpus") {
          int held = 0;
          for (const Json& h : got[i].value("holds", Json::array())) held += h["gpus"].get<int>();
          EXPECT_EQ(held, value.get<int>()) << got[i];
        } else {
          EXPECT_EQ(got[i][key], value) << "reservations[" << i << "]." << key;
        }
      }
    }
  }
  // Services: "desired", "running", "revision", "restarts" as the report gives them;
  // "distinct_nodes": how many nodes the running replicas are on; "scaled": the replica counts
  // the autoscaler set, in order; "scaled_at": the times it set them (seconds).
  const Json want_services = expected.value("services", Json::object());
  std::map<std::string, Json> services;
  for (const Json& v : report.value("services", Json::array())) services[v["name"]] = v;
  for (const auto& [name, want] : want_services.items()) {
    ASSERT_TRUE(services.count(name)) << "no service " << name << " in the report";
    const Json& got = services[name];
    for (const auto& [key, value] : want.items()) {
      if (key == "distinct_nodes") {
        std::set<std::string> nodes;
        for (const Json& r : got["replicas"]) {
          if (r["state"] == "running") nodes.insert(r["node"].get<std::string>());
        }
        EXPECT_EQ(static_cast<int>(nodes.size()), value.get<int>()) << name << ".distinct_nodes: " << got["replicas"];
      } else if (key == "scaled" || key == "scaled_at") {
        Json seq = Json::array();
        for (const Json& e : got["scaled"]) seq.push_back(key == "scaled" ? e["replicas"] : e["at"]);
        EXPECT_EQ(seq, value) << name << "." << key << ": " << got["scaled"];
      } else {
        EXPECT_EQ(got[key], value) << name << "." << key;
      }
    }
  }
  const Json want_fleet = expected.value("fleet", Json::object());
  for (const auto& [key, value] : want_fleet.items()) {
    EXPECT_EQ(report["fleet"][key], value) << "fleet." << key;
  }
}

TEST_P(GoldenScenario, ReportMatchesExpectedOutcomes) {
  fs::path dir = fs::path(ALLOT_SOURCE_DIR) / "tests/scenarios";
  fs::path expected_path = dir / (GetParam() + ".expected.json");
  ASSERT_TRUE(fs::exists(expected_path)) << "missing " << expected_path;
  Json expected = ReadJson(expected_path);
  fs::path scenario = dir / (GetParam() + ".yaml");
  if (expected.contains("refused_contains")) {
    auto run = RunScenarioFile(scenario.string(), {}, std::nullopt);
    ASSERT_FALSE(run.has_value()) << "expected the scenario to be refused";
    for (const Json& words : expected["refused_contains"]) {
      EXPECT_NE(run.error().message().find(words.get<std::string>()), std::string::npos)
          << "'" << run.error().message() << "' lacks '" << words.get<std::string>() << "'";
    }
    return;
  }
  if (expected.contains("stages")) {
    for (const Json& stage : expected["stages"]) CheckStage(scenario, stage);
  } else {
    CheckStage(scenario, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, GoldenScenario, ::testing::ValuesIn(Scenarios()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(Simulator, SameScenarioTwiceGivesByteIdenticalReports) {
  std::string path = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
  auto a = RunScenarioFile(path, {}, std::nullopt);
  auto b = RunScenarioFile(path, {}, std::nullopt);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(ReportJson(*a, {.timing = false}), ReportJson(*b, {.timing = false}));
}

}  // namespace
}  // namespace allot
