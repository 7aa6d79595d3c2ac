// Inputs the fuzzers found (fuzz/, docs/fuzzing.md), kept so the ordinary suite holds them
// fixed without clang. tests/data/fuzz/<harness>/ holds each reproducer as the harness read it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using testing::Cluster;
using testing::JobBuilder;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// As fuzz/snapshot_fuzz.cc: the header's length and checksum made to match the body.
std::string WithHeaderFixed(std::string bytes) {
  constexpr size_t kHeader = 17;
  if (bytes.size() < kHeader) return bytes;
  std::string_view body = std::string_view(bytes).substr(kHeader);
  auto put = [&](size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>(v >> (8 * i));
  };
  put(1, body.size());
  put(9, SnapshotChecksum(body));
  return bytes;
}

// task-gpu-overflow.bin: a job of 4 tasks of 2.3e18 GPU units each, whose total demand overflowed
// int64 at restore (UBSan: signed integer overflow in JobSpec::TotalDemand).
TEST(FuzzRegressions, ASnapshotJobWhoseDemandWouldOverflowIsRefusedNamingTheField) {
  const fs::path file = fs::path(ALLOT_SOURCE_DIR) / "tests/data/fuzz/snapshot/task-gpu-overflow.bin";
  std::string bytes = Read(file);
  ASSERT_FALSE(bytes.empty()) << file;
  ClusterState state;
  Status r = RestoreSnapshot(WithHeaderFixed(bytes), state);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("out of range"), std::string::npos) << r.ToString();
}

// node-cpu-overflow.bin: a node of INT64_MAX millicores, whose CPU wrapped the fleet's capacity
// sum at restore (UBSan: signed integer overflow in Fleet::Insert). Nodes now have ranges.
TEST(FuzzRegressions, ASnapshotNodeWhoseCpuWouldOverflowTheFleetIsRefusedNamingIt) {
  const fs::path file = fs::path(ALLOT_SOURCE_DIR) / "tests/data/fuzz/snapshot/node-cpu-overflow.bin";
  std::string bytes = Read(file);
  ASSERT_FALSE(bytes.empty()) << file;
  ClusterState state;
  Status r = RestoreSnapshot(WithHeaderFixed(bytes), state);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("is out of range; expected at most 1000000 CPUs and 1Pi"), std::string::npos) << r.ToString();
}

// The same job as a journal event: replay refuses it naming the field and changes nothing.
TEST(FuzzRegressions, AJournaledJobBeyondTheStoredLimitsIsRefusedNamingTheFieldAndValue) {
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 96, 1024, testing::kH100, 8);
  c.Tenant("t");
  struct Case {
    const char* field;
    void (*set)(JobSpec&);
  } cases[] = {
      {"tasks.gpu (units): 2331942610203809582", [](JobSpec& s) { s.groups[0].gpu = 2331942610203809582; }},
      {"tasks.count: 100001", [](JobSpec& s) { s.groups[0].count = kMaxTasksPerGroup + 1; }},
      {"tasks.cpu (millicores): -1", [](JobSpec& s) { s.groups[0].cpu = -1; }},
      {"duration (ms): 9223372036854775000", [](JobSpec& s) { s.duration_ms = 9223372036854775000; }},
      {"grace (ms): -5", [](JobSpec& s) { s.grace_ms = -5; }},
  };
  for (const Case& k : cases) {
    JobSpec spec = JobBuilder("big").Tenant("t").Gpus(1).Duration(60000).Build(c.state);
    k.set(spec);
    Status r = c.state.apply({0, JobSubmitted{spec}});
    ASSERT_FALSE(r.ok()) << k.field;
    EXPECT_NE(r.message().find(k.field), std::string::npos) << r.ToString();
    EXPECT_EQ(c.state.jobs().size(), 0u) << k.field;
  }
}

}  // namespace
}  // namespace allot
