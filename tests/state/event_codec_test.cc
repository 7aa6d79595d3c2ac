// The journal encoding: every event type round-trips field for field, damaged records are
// refused with the reason, and replaying a whole simulated run's decoded events rebuilds the
// same state.
#include "state/event_codec.h"

#include <gtest/gtest.h>

#include "sim/report.h"
#include "sim/simulator.h"

namespace allot {
namespace {

// One event of each type, every field set away from its default.
std::vector<Event> OneOfEach() {
  NodeSpec n{"node-7", "z2", "r9", "nvl-a", 96000, 1048576, "H100-80GB", 8};
  n.sharing = Sharing::kMig;
  n.mig_layout = {"3g.40gb", "1g.10gb"};
  n.replicas = 7;
  n.oversubscription_milli = 1500;
  n.gpu_groups = {{0, 1}, {2, 3, 4}};
  TenantSpec t;
  t.path = "org/team";
  t.SetGuarantee(2, 5 * kGpuUnit);
  t.max[kCpu] = 64000;
  t.weight = 2500;
  t.trust = Trust::kUntrusted;
  t.pools = 0x3;
  JobSpec j;
  j.name = "train";
  j.tenant = TenantId(3);
  j.gpu_resource = 2;
  TaskGroup g{4, 3000, 8000, 65536};
  g.share = ShareKind::kMps;
  g.fractional = true;
  g.mig_profile = 5;
  g.percent = 30;
  g.gpu_memory = 24576;
  j.groups = {g, TaskGroup{2, 8 * kGpuUnit, 1, 2}};
  j.topology = Topology::kRack;
  j.kind = JobKind::kInference;
  j.priority = -7;
  j.duration_ms = 3600000;
  j.time_limit_ms = 7200000;
  j.min_runtime_ms = 60000;
  j.checkpoint_interval_ms = 900000;
  j.grace_ms = 45000;
  j.submit_ms = 123456;
  TaskPlacement p{NodeId(4), 0xF0, 32000, 262144, {}};
  TaskPlacement s{NodeId(5), 0x4, 1000, 2048, {ShareKind::kMig, {3, 4}, true, 0, 0}};
  TaskPlacement m{NodeId(6), 0x1, 1000, 2048, {ShareKind::kMps, {}, false, 30, 24576}};
  return {
      {1, NodeAdded{n}},
      {2, NodeConditionChanged{NodeId(9), NodeCondition::kDraining}},
      {3, TenantUpserted{t}},
      {4, JobSubmitted{j}},
      {5, JobRejected{JobId(11), "needs 16 GPUs — in one rack"}},
      {6, JobPlaced{JobId(12), AdmissionClass::kBurstable, {p, s, m}}},
      {7, JobPreemptionStarted{JobId(12), PreemptKind::kFairShare, JobId(13), 99000}},
      {8, JobStopped{JobId(12), 5000}},
      {9, JobFinished{JobId(14)}},
      {-10, JobCancelled{JobId(15)}},
      {11, MigRelayout{NodeId(5), 3, {{0, 0}, {6, 4}}, 41000}},
      {12, ReservationSet{JobId(16), 7200000, {p}}},
      {13, TokenIssued{TokenRecord{std::string(64, 'a'), Principal{"alice", Role::kTeamAdmin, TenantId(2)}, 77, true}}},
      {14, TokenRevoked{std::string(64, 'b')}},
      {15, AuditRecorded{AuditRecord{15, "alice", Role::kMember, "org/team", "job.submit", "train", "ok", "req-9",
                                     std::string(64, 'c'), std::string(64, 'd')}}},
      {16, TenantRemoved{"org/old-team"}},
      {17, TenantMoved{"org/team", "other-org/team"}},
  };
}

TEST(EventCodecTest, EveryEventTypeRoundTripsFieldForField) {
  std::vector<Event> events = OneOfEach();
  ASSERT_EQ(events.size(), std::variant_size_v<EventBody>);
  for (size_t i = 0; i < events.size(); ++i) ASSERT_EQ(events[i].body.index(), i) << "one of each, in order";
  for (const Event& e : events) {
    std::string bytes = EncodeEvent(e);
    auto back = DecodeEvent(bytes);
    ASSERT_TRUE(back.has_value()) << EventTypeName(e) << ": " << back.error().message();
    EXPECT_TRUE(*back == e) << EventTypeName(e);
    EXPECT_EQ(EncodeEvent(*back), bytes) << EventTypeName(e) << ": encoding is deterministic";
  }
}

TEST(EventCodecTest, RefusesDamagedRecordsWithTheReason) {
  std::string bytes = EncodeEvent(OneOfEach()[3]);  // JobSubmitted
  auto message = [](std::string_view b) {
    auto r = DecodeEvent(b);
    return r ? std::string("accepted") : r.error().message();
  };
  EXPECT_EQ(message(""), "event record: truncated header");
  std::string newer = bytes;
  newer[0] = static_cast<char>(kEventFormat + 1);
  EXPECT_EQ(message(newer), "event record: format 2 is not known; expected 1");
  std::string unknown = bytes;
  unknown[1] = 99;
  EXPECT_EQ(message(unknown), "event type 99 is unknown");
  EXPECT_NE(message(bytes.substr(0, bytes.size() - 3)).find("event record (JobSubmitted): truncated"), std::string::npos);
  EXPECT_EQ(message(bytes + "x"), "event record (JobSubmitted): trailing bytes");
  // Every truncation is refused, never misread.
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(DecodeEvent(bytes.substr(0, n)).has_value()) << n;
}

TEST(EventCodecTest, ReplayingADecodedRunRebuildsTheSameState) {
  // A run with MIG re-layouts, shares, preemption, backfill and rejections.
  std::vector<std::string> journal;
  SimOptions options;
  options.on_event = [&](const Event& e) { journal.push_back(EncodeEvent(e)); };
  for (const char* name : {"scenarios/example.yaml", "tests/scenarios/mig-layouts.yaml", "tests/scenarios/backfill.yaml",
                           "tests/scenarios/reclaim-topology.yaml"}) {
    journal.clear();
    auto run = RunScenarioFile(std::string(ALLOT_SOURCE_DIR) + "/" + name, options, std::nullopt);
    ASSERT_TRUE(run.has_value()) << name << ": " << run.error().message();
    ASSERT_GT(journal.size(), 10u);
    SimRun replayed;
    replayed.result = run->result;
    for (const std::string& bytes : journal) {
      auto e = DecodeEvent(bytes);
      ASSERT_TRUE(e.has_value()) << e.error().message();
      Status s = replayed.state.apply(*e);
      ASSERT_TRUE(s.ok()) << name << ": " << s.ToString();
    }
    ASSERT_TRUE(replayed.state.VerifyInvariants().ok());
    EXPECT_EQ(ReportJson(replayed, {.timing = false}), ReportJson(*run, {.timing = false})) << name;
  }
}

}  // namespace
}  // namespace allot
