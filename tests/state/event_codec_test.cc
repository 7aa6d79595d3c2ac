// The journal encoding: every event type round-trips field for field, damaged records are
// refused with the reason, and replaying a whole simulated run's decoded events rebuilds the
// same state.
#include "state/event_codec.h"

#include <gtest/gtest.h>

#include "sim/report.h"
#include "state/codec_fields.h"
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

// The sample JobSubmitted with neither a command nor an environment, in the current format.
// Format 8 ends JobSpec with its sizing (one zero byte when none); format 7 put the requirements
// before it (one zero byte when none); format 6 with the reservation's name (one zero byte when none); format 4 put the
// environment before it: with none, four zero bytes (the image's length, no mounts, no
// variables, no shm size); format 2 added the command before that (one zero byte).
// Format 12 ends it with the job's array (no name, index -1, frame -1, count 0, parallel 0),
// retries (0) and dependencies (none): kArrayTail bytes for a job that is no element.
constexpr size_t kArrayTail = 7;
const std::string kNoArray("\0\1\1\0\0\0\0", kArrayTail);
// Format 14 ends it with the template it came from (name, tenant) and its vram: three zero bytes
// for a job with none.
constexpr size_t kTemplateTail = 3;
// The current encoding less the format-14 tail: what an allotd of format 12 (or 13) wrote.
std::string Before14(const std::string& now) {
  EXPECT_EQ(now.substr(now.size() - kTemplateTail), std::string(kTemplateTail, '\0')) << "no template, no vram";
  return now.substr(0, now.size() - kTemplateTail);
}
// The current encoding less the format-12 and 14 tails: what an allotd of format 10 or 11 wrote.
std::string Before12(const std::string& now) {
  std::string v12 = Before14(now);
  EXPECT_EQ(v12.substr(v12.size() - kArrayTail), kNoArray) << "no array, no retries, no dependencies";
  return v12.substr(0, v12.size() - kArrayTail);
}

Event BareJobSubmitted() {
  Event e = OneOfEach()[3];  // JobSubmitted
  std::get<JobSubmitted>(e.body).spec.command.clear();
  std::get<JobSubmitted>(e.body).spec.environment = {};
  std::get<JobSubmitted>(e.body).spec.require.clear();
  std::get<JobSubmitted>(e.body).spec.sizing.clear();
  std::get<JobSubmitted>(e.body).spec.template_name.clear();
  std::get<JobSubmitted>(e.body).spec.template_tenant.clear();
  std::get<JobSubmitted>(e.body).spec.vram_mib = 0;
  return e;
}

// A record written by an allotd of event format 1 (before JobSpec.command) still decodes: it
// is the current encoding less its last eight bytes.
TEST(EventCodecTest, ARecordOfFormatOneStillDecodes) {
  Event e = BareJobSubmitted();
  std::string now = EncodeEvent(e);
  std::string v10 = Before12(now);
  ASSERT_EQ(v10.substr(v10.size() - 8), std::string(8, '\0'))
      << "the empty command's count, the empty environment, no reservation, no requirement, no sizing";
  std::string v1 = v10.substr(0, v10.size() - 8);
  v1[0] = 1;
  auto back = DecodeEvent(v1);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_TRUE(*back == e);
  EXPECT_EQ(EncodeEvent(*back), now) << "re-encoded in the current format";
  // A format-2 record needs its command: cut it off and it is refused, not misread.
  std::string v2 = v1;
  v2[0] = 2;
  EXPECT_FALSE(DecodeEvent(v2).has_value());
}

// A record of format 3 (before JobSpec.environment) decodes with an empty environment.
TEST(EventCodecTest, ARecordOfFormatThreeStillDecodesWithAnEmptyEnvironment) {
  Event e = BareJobSubmitted();
  std::get<JobSubmitted>(e.body).spec.command = {"python", "train.py"};
  std::string now = EncodeEvent(e);
  std::string v3 = Before12(now).substr(0, now.size() - kTemplateTail - kArrayTail - 7);
  v3[0] = 3;
  auto back = DecodeEvent(v3);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_TRUE(*back == e);
  EXPECT_TRUE(std::get<JobSubmitted>(back->body).spec.environment.empty());
  EXPECT_EQ(EncodeEvent(*back), now) << "re-encoded in the current format";
  // A format-4 record needs its environment: cut it off and it is refused, not misread.
  std::string v4 = v3;
  v4[0] = 4;
  EXPECT_FALSE(DecodeEvent(v4).has_value());
}

// A record of format 5 (before JobSpec.reservation) decodes with none; format 6 needs it.
TEST(EventCodecTest, ARecordOfFormatFiveStillDecodesWithNoReservation) {
  Event e = BareJobSubmitted();
  std::string now = EncodeEvent(e);
  std::string v5 = Before12(now).substr(0, now.size() - kTemplateTail - kArrayTail - 3);
  v5[0] = 5;
  auto back = DecodeEvent(v5);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_TRUE(*back == e);
  EXPECT_EQ(EncodeEvent(*back), now) << "re-encoded in the current format";
  std::string v6 = v5;
  v6[0] = 6;
  EXPECT_FALSE(DecodeEvent(v6).has_value());
  // And a job that names one keeps it.
  std::get<JobSubmitted>(e.body).spec.reservation = "nightly";
  auto named = DecodeEvent(EncodeEvent(e));
  ASSERT_TRUE(named.has_value()) << named.error().message();
  EXPECT_EQ(std::get<JobSubmitted>(named->body).spec.reservation, "nightly");
}

// A record of format 6 (before node labels and requirements) decodes with none; format 7 needs
// them. A job's requirement and a node's labels survive the journal.
TEST(EventCodecTest, ARecordOfFormatSixStillDecodesWithNoRequirementNorLabels) {
  Event e = BareJobSubmitted();
  std::string now = EncodeEvent(e);
  std::string v6 = Before12(now).substr(0, now.size() - kTemplateTail - kArrayTail - 2);
  v6[0] = 6;
  auto back = DecodeEvent(v6);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_TRUE(*back == e);
  EXPECT_EQ(EncodeEvent(*back), now) << "re-encoded in the current format";
  std::string v7 = v6;
  v7[0] = 7;
  EXPECT_FALSE(DecodeEvent(v7).has_value());

  NodeSpec n{"gpu-1", "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
  Event added{0, NodeAdded{n}};
  std::string node_now = EncodeEvent(added);
  std::string node_v6 = node_now.substr(0, node_now.size() - 1);  // no labels: one zero byte
  node_v6[0] = 6;
  auto node_back = DecodeEvent(node_v6);
  ASSERT_TRUE(node_back.has_value()) << node_back.error().message();
  EXPECT_TRUE(*node_back == added);
  std::get<NodeAdded>(added.body).spec.labels = {{"driver", "535.104.05"}};
  auto labelled = DecodeEvent(EncodeEvent(added));
  ASSERT_TRUE(labelled.has_value());
  EXPECT_EQ(std::get<NodeAdded>(labelled->body).spec.labels, (NodeLabels{{"driver", "535.104.05"}}));
}

// A record of formats 7 to 9 (before JobSpec.sizing) decodes with no sizing; format 10 needs it.
// A sized job's model, estimate and choice survive the journal.
TEST(EventCodecTest, ARecordOfFormatSevenToNineStillDecodesWithNoSizing) {
  Event e = BareJobSubmitted();
  std::string now = EncodeEvent(e);
  ASSERT_EQ(Before12(now).back(), '\0') << "no sizing: one zero byte";
  for (char format : {7, 8, 9}) {
    std::string old = Before12(now).substr(0, now.size() - kTemplateTail - kArrayTail - 1);
    old[0] = format;
    auto back = DecodeEvent(old);
    ASSERT_TRUE(back.has_value()) << back.error().message();
    EXPECT_TRUE(*back == e);
    EXPECT_EQ(EncodeEvent(*back), now) << "re-encoded in the current format";
  }
  std::string v10 = Before12(now).substr(0, now.size() - kTemplateTail - kArrayTail - 1);
  v10[0] = 10;
  EXPECT_FALSE(DecodeEvent(v10).has_value());

  // The sample job's sizing (a LoRA of 70B at int4 on two GPUs) is kept field for field.
  const std::vector<GroupSizing> sz = std::get<JobSubmitted>(OneOfEach()[3].body).spec.sizing;
  ASSERT_EQ(sz.size(), 1u);
  std::get<JobSubmitted>(e.body).spec.sizing = sz;
  auto sized = DecodeEvent(EncodeEvent(e));
  ASSERT_TRUE(sized.has_value()) << sized.error().message();
  EXPECT_EQ(std::get<JobSubmitted>(sized->body).spec.sizing, sz);
}

// A lifted response of formats 8 to 10 (before moves and hardenings) decodes as a throttle's;
// format 11 names the action.
TEST(EventCodecTest, ALiftOfFormatEightToTenStillDecodesAsAThrottles) {
  Event e{35, InterferenceCleared{NodeId(2), 1, JobId(5), 1, "quiet for 60 s", InterferenceAction::kThrottle}};
  std::string now = EncodeEvent(e);
  ASSERT_EQ(now.back(), '\0') << "the throttle's action: one zero byte";
  for (char format : {8, 9, 10}) {
    std::string old = now.substr(0, now.size() - 1);
    old[0] = format;
    auto back = DecodeEvent(old);
    ASSERT_TRUE(back.has_value()) << back.error().message();
    EXPECT_TRUE(*back == e);
  }
  std::string v11 = now.substr(0, now.size() - 1);
  v11[0] = 11;
  EXPECT_FALSE(DecodeEvent(v11).has_value());
  std::get<InterferenceCleared>(e.body).action = InterferenceAction::kHarden;
  auto harden = DecodeEvent(EncodeEvent(e));
  ASSERT_TRUE(harden.has_value());
  EXPECT_EQ(std::get<InterferenceCleared>(harden->body).action, InterferenceAction::kHarden);
}

// A tenant of format 5 (before TenantSpec.max_reserved) decodes with none set (unlimited: the
// booking cap is its max); format 6 carries what is set.
TEST(EventCodecTest, ATenantOfFormatFiveStillDecodesWithNoBookingCap) {
  TenantSpec t;
  t.path = "org/a";
  Event e{0, TenantUpserted{t}};
  std::string now = EncodeEvent(e);
  ASSERT_EQ(now.back(), '\0') << "format 9's business hours: none";
  now.pop_back();
  codec::Writer w;
  w(Resources::Filled(kUnlimited));
  ASSERT_EQ(now.substr(now.size() - w.out.size()), w.out);
  std::string v5 = now.substr(0, now.size() - w.out.size());
  v5[0] = 5;
  auto back = DecodeEvent(v5);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_TRUE(*back == e);
  t.max_reserved[kFirstGpu] = 3 * kGpuUnit;
  auto set = DecodeEvent(EncodeEvent({0, TenantUpserted{t}}));
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(std::get<TenantUpserted>(set->body).spec.max_reserved[kFirstGpu], 3 * kGpuUnit);
}

// A tenant of format 7 or 8 (before TenantSpec.business_hours) decodes with none; format 9 needs
// the field, and carries what is set.
TEST(EventCodecTest, ATenantOfFormatSevenOrEightStillDecodesWithNoBusinessHours) {
  TenantSpec t;
  t.path = "org/a";
  Event e{0, TenantUpserted{t}};
  std::string now = EncodeEvent(e);
  ASSERT_EQ(now.back(), '\0') << "no business hours: an empty string";
  std::string v7 = now.substr(0, now.size() - 1);
  v7[0] = 7;
  auto back = DecodeEvent(v7);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_TRUE(*back == e);
  EXPECT_EQ(EncodeEvent(*back), now) << "re-encoded in the current format";
  std::string v8 = v7;
  v8[0] = 8;
  auto back8 = DecodeEvent(v8);
  ASSERT_TRUE(back8.has_value()) << back8.error().message();
  EXPECT_TRUE(*back8 == e);
  std::string v9 = v7;
  v9[0] = 9;
  EXPECT_FALSE(DecodeEvent(v9).has_value()) << "format 9 without the field is truncated";
  t.business_hours = "Mon-Fri 08:00-19:00 Europe/Berlin";
  auto set = DecodeEvent(EncodeEvent({0, TenantUpserted{t}}));
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(std::get<TenantUpserted>(set->body).spec.business_hours, "Mon-Fri 08:00-19:00 Europe/Berlin");
}

// A record of formats 10 and 11 (before arrays) decodes with no array, retries or dependencies;
// format 12 needs them. An element's array, retries and dependencies survive the journal.
TEST(EventCodecTest, ARecordOfFormatTenOrElevenStillDecodesWithNoArray) {
  Event e = BareJobSubmitted();
  std::string now = EncodeEvent(e);
  for (char format : {10, 11}) {
    std::string old = Before12(now);
    old[0] = format;
    auto back = DecodeEvent(old);
    ASSERT_TRUE(back.has_value()) << back.error().message();
    EXPECT_TRUE(*back == e);
    EXPECT_EQ(EncodeEvent(*back), now) << "re-encoded in the current format";
  }
  std::string v12 = Before12(now);
  v12[0] = 12;
  EXPECT_FALSE(DecodeEvent(v12).has_value()) << "format 12 without the fields is truncated";
  // Formats 12 and 13 (before templates) decode with no template and no vram; 14 needs them.
  for (char format : {12, 13}) {
    std::string old = Before14(now);
    old[0] = format;
    auto back = DecodeEvent(old);
    ASSERT_TRUE(back.has_value()) << back.error().message();
    EXPECT_TRUE(*back == e);
  }
  std::string v14 = Before14(now);
  v14[0] = 14;
  EXPECT_FALSE(DecodeEvent(v14).has_value()) << "format 14 without the fields is truncated";

  JobSpec& spec = std::get<JobSubmitted>(e.body).spec;
  spec.name = "render-4";
  spec.array = {"render", 4, 109, 120, 50};
  spec.retries = 3;
  spec.after = {{"prepare", AfterState::kSucceeded}, {"lint", AfterState::kFailed}};
  auto back = DecodeEvent(EncodeEvent(e));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_TRUE(*back == e);
}

// The environment's every field survives the journal (the sample job carries one of each).
TEST(EventCodecTest, AJobEnvironmentRoundTripsWithEveryField) {
  Event e = OneOfEach()[3];
  const JobEnvironment& sent = std::get<JobSubmitted>(e.body).spec.environment;
  ASSERT_EQ(sent.mounts.size(), 2u);
  auto back = DecodeEvent(EncodeEvent(e));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  const JobEnvironment& got = std::get<JobSubmitted>(back->body).spec.environment;
  EXPECT_EQ(got.image, "oci:/srv/images/pytorch:2.4");
  EXPECT_EQ(got.mounts, sent.mounts);
  EXPECT_TRUE(got.mounts[1].read_only);
  EXPECT_EQ(got.env, sent.env);
  EXPECT_EQ(got.shm_size_mib, 1024);
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
  EXPECT_EQ(message(newer), "event record: format " + std::to_string(kEventFormat + 1) + " is not known; expected 1 to " +
                               std::to_string(kEventFormat));
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
