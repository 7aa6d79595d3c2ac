// The SAX heartbeat reader (wire/heartbeat_reader.h) against the tree reader it stands in for
// (ParseStrictJson, then ParseHeartbeat): on valid bodies and on thousands of broken ones made
// from them (every value replaced by values of every type and edge, every key removed, keys
// repeated at every level, every prefix), a heartbeat it reads equals the tree reader's, it
// never reads one the tree reader refuses, and ReadHeartbeatBody refuses with the tree
// reader's words.
#include "wire/heartbeat_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "server/agent_wire.h"
#include "server/body_reader.h"

namespace allot {
namespace {

Result<Heartbeat> TreeRead(const std::string& body) {
  auto tree = ParseStrictJson(body);
  if (!tree) return Err(tree.error());
  return ParseHeartbeat(*tree);
}

// What the two readers make of `body`: the same, and the SAX reader reads nothing the tree
// reader refuses. Returns whether the SAX reader read it.
bool SameAsTree(const std::string& body) {
  std::optional<Heartbeat> sax = ReadPlainHeartbeat(body);
  Result<Heartbeat> tree = TreeRead(body);
  Result<Heartbeat> served = ReadHeartbeatBody(body);
  if (sax) {
    EXPECT_TRUE(tree.has_value()) << body << "\n  read by SAX, refused by the tree reader: " << tree.error().message();
    if (tree) {
      EXPECT_TRUE(*sax == *tree) << body;
    }
  }
  EXPECT_EQ(served.has_value(), tree.has_value()) << body;
  if (served && tree) {
    EXPECT_TRUE(*served == *tree) << body;
  }
  if (!served && !tree) {
    EXPECT_EQ(served.error().message(), tree.error().message()) << body;
  }
  return sax.has_value();
}

// An agent's heartbeat with a bit of everything the SAX reader reads.
Json Sample() {
  return Json::parse(R"({
    "node": "gpu-0421",
    "gpus": [
      {"index": 0, "uuid": "GPU-a", "utilization_percent": 87, "memory_used_mib": 61234, "power_mw": 612000,
       "temperature_c": 64, "ecc_corrected": 3, "ecc_uncorrected": 0, "retired_pages": 0,
       "xids": [13, 79, "x", -4, 1.5, {"k": 1}, [2], null, 18446744073709551615],
       "tasks": [{"job_id": 7, "task": 1, "run": 2, "sm_percent": 93, "memory_percent": 40, "p99_us": 25000,
                  "bad_latency_lines": 2}, {"job_id": 9}]},
      {"index": 63, "uuid": "GPU-b", "temperature_c": null, "xids": [], "extra": {"nested": [1, {"a": null}]}}
    ],
    "tasks": [
      {"job": "train", "task": 0, "run": 1, "exited": false, "pid": 4242, "exit_code": -1, "signal": 0,
       "oom_killed": false, "time_limit_exceeded": false, "preempted": false, "reason": "", "started_ms": 1700000000000,
       "ended_ms": 0, "job_id": 100000},
      {"job": "eval", "task": 3, "run": 0, "exited": true, "exit_code": 0, "reason": "exited with code 0",
       "started_ms": -5, "ended_ms": 9223372036854775807, "job_id": 4294967295, "pid": 1073741824, "signal": 128}
    ],
    "loads": [{"job_id": 12, "task": 2, "run": 1, "load_milli": 1500}],
    "scrubs": [{"gpu": 3, "uuid": "GPU-c", "from": "a/b", "to": "c", "ok": true, "detail": "ok in 3 ms"},
               {"gpu": 4, "from": "", "to": ""}],
    "agent": {"version": "1.2", "labels": ["x", "y"]},
    "mig": null, "health": null, "clusters": null, "acceptance": null
  })");
}

// Every value's place in `j`, as a JSON pointer.
void Places(const Json& j, const Json::json_pointer& at, std::vector<Json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) Places(it.value(), at / it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) Places(j[i], at / i, out);
  }
}

TEST(HeartbeatReaderTest, ReadsAnAgentsHeartbeatAsTheTreeReaderDoes) {
  EXPECT_TRUE(SameAsTree(Sample().dump()));
  Heartbeat hb = *ReadPlainHeartbeat(Sample().dump());
  ASSERT_EQ(hb.gpus.size(), 2u);
  EXPECT_EQ(hb.gpus[0].xids, (std::vector<uint64_t>{13, 79, 18446744073709551615ULL})) << "only unsigned xids are kept";
  EXPECT_EQ(hb.gpus[0].tasks.size(), 2u);
  EXPECT_FALSE(hb.scrubs[1].ok) << "a scrub that does not say ok is not";
  EXPECT_EQ(hb.tasks[1].job_id, 4294967295);
  // What allot-agent and the swarm write (wire's own HeartbeatJson).
  Heartbeat written;
  written.node = "n1";
  written.gpus.push_back(GpuTelemetry{2, "GPU-z", 5, 6, 7, 8, 9, 10, 11, {43}, {}});
  written.tasks.push_back(TaskReport{"j", 1, 2, true, 77, 3, 0, false, false, false, "exited with code 3", 5, 6, 9});
  written.loads.push_back(TaskLoad{9, 1, 2, 3});
  EXPECT_TRUE(SameAsTree(HeartbeatJson(written).dump()));
  EXPECT_TRUE(*ReadPlainHeartbeat(HeartbeatJson(written).dump()) == written);
}

TEST(HeartbeatReaderTest, EveryValueReplacedOrRemovedReadsAsTheTreeReaderReadsIt) {
  const Json sample = Sample();
  std::vector<Json::json_pointer> places;
  Places(sample, Json::json_pointer(), places);
  const std::vector<Json> values = {nullptr, true, false, 0, -1, 1, 63, 64, 100, 101, 128, 255, 256,
                                    1 << 20, (1 << 20) + 1, 1 << 30, (1 << 30) + 1, 4294967295LL, 4294967296LL,
                                    3600000000LL, 3600000001LL, 1000000000000LL, 1000000000001LL,
                                    INT64_MAX, INT64_MIN, 9223372036854775808ULL, 18446744073709551615ULL,
                                    1.5, -0.0, "", "x", "exited with code 0", Json::array(), Json::array({1}),
                                    Json::object(), Json{{"job_id", 1}}};
  int read = 0, bodies = 0;
  for (const auto& at : places) {
    for (const Json& v : values) {
      Json body = sample;
      body[at] = v;
      read += SameAsTree(body.dump());
      ++bodies;
    }
    if (!at.empty() && sample[at.parent_pointer()].is_object()) {
      Json body = sample;
      body[at.parent_pointer()].erase(at.back());
      read += SameAsTree(body.dump());
      ++bodies;
    }
  }
  // Both kinds are many: the comparison is not all refusals, nor all reads.
  EXPECT_GT(read, bodies / 4) << read << " of " << bodies;
  EXPECT_LT(read, bodies * 3 / 4) << read << " of " << bodies;
}

TEST(HeartbeatReaderTest, TheFuzzSeedsReadAsTheTreeReaderReadsThem) {
  int seeds = 0, read = 0;
  for (const char* dir : {"agent_heartbeat", "agent_heartbeat_body"}) {
    for (const auto& e : std::filesystem::directory_iterator(std::string(ALLOT_SOURCE_DIR) + "/fuzz/corpus/" + dir)) {
      std::ifstream in(e.path());
      std::string body((std::istreambuf_iterator<char>(in)), {});
      read += SameAsTree(body);
      ++seeds;
    }
  }
  EXPECT_GE(seeds, 7);
  EXPECT_GE(read, 3) << "the minimal and swarm seeds are plain heartbeats";
}

TEST(HeartbeatReaderTest, AKeyTwiceAnywhereIsRefusedInTheTreeReadersWords) {
  for (const char* body : {
           R"({"node": "n", "node": "n"})",
           R"({"node": "n", "gpus": [{"index": 1, "uuid": "u", "index": 1}]})",
           R"({"node": "n", "gpus": [{"tasks": [{"job_id": 1, "run": 1, "run": 2}]}]})",
           R"({"node": "n", "gpus": [{"xids": [{"a": 1, "a": 2}]}]})",
           R"({"node": "n", "tasks": [{"job": "j", "extra": 1, "extra": 2}]})",
           R"({"node": "n", "agent": {"labels": {"a": 1, "b": 2, "a": 3}}})",
           R"({"node": "n", "scrubs": [{"from": "a", "to": "b", "ok": true, "ok": false}]})",
           R"({"node": "n", "loads": [{"job_id": 1, "job_id": 1}]})",
       }) {
    EXPECT_FALSE(SameAsTree(body)) << body;
    auto r = ReadHeartbeatBody(body);
    ASSERT_FALSE(r.has_value()) << body;
    EXPECT_NE(r.error().message().find("duplicate key"), std::string::npos) << r.error().message();
  }
}

TEST(HeartbeatReaderTest, EveryPrefixAndTrailingJunkIsRefusedInTheTreeReadersWords) {
  const std::string body = Sample().dump();
  for (size_t n = 0; n < body.size(); n += 3) EXPECT_FALSE(SameAsTree(body.substr(0, n)));
  EXPECT_FALSE(SameAsTree(body + " {}"));
  EXPECT_FALSE(SameAsTree("[" + body + "]"));
  EXPECT_FALSE(SameAsTree("\"" + body + "\""));
  EXPECT_FALSE(SameAsTree(R"({"node": "n\ud800"})"));
}

TEST(HeartbeatReaderTest, LeavesHealthMigClustersAndAcceptanceToTheTreeReader) {
  Json body = {{"node", "n"}, {"health", {{"check", 2}, {"ok", true}, {"checks", {{{"name", "nvml.ecc"}, {"ok", true}}}}}}};
  EXPECT_FALSE(SameAsTree(body.dump()));
  auto hb = ReadHeartbeatBody(body.dump());
  ASSERT_TRUE(hb.has_value()) << hb.error().message();
  ASSERT_TRUE(hb->health.has_value());
  EXPECT_EQ(hb->health->check, 2u);
  body = {{"node", "n"}, {"mig", {{{"gpu", 1}, {"instances", {{{"profile", "3g.40gb"}, {"start", 4}}}}}}}};
  EXPECT_FALSE(SameAsTree(body.dump()));
  EXPECT_EQ(ReadHeartbeatBody(body.dump())->mig.size(), 1u);
  body = {{"node", "n"}, {"acceptance", {{{"reservation_id", 3}, {"window", 0}, {"state", "passed"}}}}};
  EXPECT_FALSE(SameAsTree(body.dump()));
  EXPECT_EQ(ReadHeartbeatBody(body.dump())->acceptance.size(), 1u);
  body = {{"node", "n"}, {"clusters", {{{"reservation", "r"}, {"state", "running"}}}}};
  EXPECT_FALSE(SameAsTree(body.dump()));
  EXPECT_EQ(ReadHeartbeatBody(body.dump())->clusters.size(), 1u);
  body = {{"node", "n"}, {"health", 3}};
  EXPECT_FALSE(SameAsTree(body.dump()));
  EXPECT_EQ(ReadHeartbeatBody(body.dump()).error().message(), "heartbeat.health: expected an object");
}

}  // namespace
}  // namespace allot
