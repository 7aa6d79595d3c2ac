// The journal encoding: every event type round-trips field for field, damaged records are
// refused with the reason, and replaying a whole simulated run's decoded events rebuilds the
// same state.
#include "state/event_codec.h"

#include <gtest/gtest.h>

#include "sim/report.h"
#include "sim/simulator.h"
#include "testing/sample_events.h"

namespace allot {
namespace {

using testing::OneOfEach;

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

// A record written by an allotd of event format 1 (before JobSpec.command) still decodes.
// Format 1 wrote JobSpec without its last field; with an empty command, format 2 writes one
// more byte (the count 0), so the format-1 record is that encoding less its last byte.
TEST(EventCodecTest, ARecordOfFormatOneStillDecodes) {
  Event e = OneOfEach()[3];  // JobSubmitted
  std::get<JobSubmitted>(e.body).spec.command.clear();
  std::string v2 = EncodeEvent(e);
  ASSERT_EQ(v2.back(), '\0') << "the empty command's count";
  std::string v1 = v2.substr(0, v2.size() - 1);
  v1[0] = 1;
  auto back = DecodeEvent(v1);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_TRUE(*back == e);
  EXPECT_EQ(EncodeEvent(*back), v2) << "re-encoded in the current format";
  // A format-2 record needs its command: cut it off and it is refused, not misread.
  EXPECT_FALSE(DecodeEvent(v2.substr(0, v2.size() - 1)).has_value());
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
  EXPECT_EQ(message(newer), "event record: format 4 is not known; expected 1 to 3");
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
