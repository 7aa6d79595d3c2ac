// A reservation as written: RFC 3339 with offsets, end or duration, a recurrence expanded into
// windows, and every mistake named by field.
#include <gtest/gtest.h>

#include "core/calendar.h"
#include "spec/reservation_spec.h"

namespace allot {
namespace {

TEST(Rfc3339, ReadsOffsetsFractionsAndRefusesWhatIsNotADay) {
  EXPECT_EQ(ParseRfc3339("2026-12-01T08:00:00Z"), 1796112000000);
  EXPECT_EQ(ParseRfc3339("2026-12-01T09:00:00+01:00"), 1796112000000);
  EXPECT_EQ(ParseRfc3339("2026-11-30T22:30:00-09:30"), 1796112000000);
  EXPECT_EQ(ParseRfc3339("2026-12-01T08:00:00.25Z"), 1796112000250);
  EXPECT_EQ(FormatRfc3339(*ParseRfc3339("2026-12-01T08:00:00Z")), "2026-12-01T08:00:00Z");
  for (const char* bad : {"2026-12-01 08:00:00Z", "2026-12-01T08:00:00", "2026-02-30T00:00:00Z", "2026-12-01T24:00:00Z",
                          "2026-12-01T08:00:00+1:00", "2026-12-01T08:00:00Zjunk", "tomorrow", ""}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
}

class ReservationSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(state_.apply({0, NodeAdded{NodeSpec{"n0", "z", "r", "", 64000, 1 << 19, "H100-80GB", 8}}}).ok());
    TenantSpec t;
    t.path = "org";
    ASSERT_TRUE(state_.apply({0, TenantUpserted{t}}).ok());
  }
  Result<ReservationSpec> Read(const std::string& yaml, ReservationClock clock = ReservationClock::kWallClock) {
    YAML::Node n = YAML::Load(yaml);
    YamlReader rd("r.yaml");
    auto r = ReadReservation(rd, n, "reservations[0]", clock);
    if (!r) return Err(r.error());
    return ResolveReservation(*r, state_, "reservations[0].");
  }
  ClusterState state_;
};

TEST_F(ReservationSpecTest, ADailyWindowUntilADateBecomesOneWindowADay) {
  auto s = Read("{name: nightly, tenant: org, model: H100-80GB, gpus: 4, topology: rack, start: '2026-12-01T22:00:00+01:00', "
                "duration: 6h, every: daily, until: '2026-12-08T00:00:00Z', drain_before: 30m}");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  ASSERT_EQ(s->windows.size(), 7u);
  EXPECT_EQ(FormatRfc3339(s->windows[0].start_ms), "2026-12-01T21:00:00Z");
  EXPECT_EQ(FormatRfc3339(s->windows[0].end_ms), "2026-12-02T03:00:00Z");
  EXPECT_EQ(FormatRfc3339(s->windows[6].start_ms), "2026-12-07T21:00:00Z");
  EXPECT_EQ(s->topology, Topology::kRack);
  EXPECT_EQ(s->drain_before_ms, 30 * 60 * 1000);
  auto scenario = Read("{name: v, tenant: org, model: H100-80GB, nodes: 1, start: 2h, end: 3h}", ReservationClock::kVirtual);
  ASSERT_TRUE(scenario.has_value()) << scenario.error().message();
  EXPECT_EQ(scenario->windows, (std::vector<Window>{{2 * 3600000, 3 * 3600000}}));
  EXPECT_EQ(scenario->nodes, 1);
}

TEST_F(ReservationSpecTest, MistakesAreNamedWithFileLineFieldAndWhatWasExpected) {
  struct Case { const char* yaml; const char* says; };
  const Case cases[] = {
      {"{name: x, tenant: org, model: H100-80GB, gpus: 1, start: 2026-12-01T09:00:00Z}",
       "r.yaml:1: reservations[0].end: give end or duration, one of them"},
      {"{name: x, tenant: org, model: H100-80GB, gpus: 1, start: '2026-12-01T09:00:00Z', end: '2026-12-01T08:00:00Z'}",
       "reservations[0].end: is not after start; expected a later time"},
      {"{name: x, tenant: org, model: H100-80GB, gpus: 1, start: '2026-12-01T09:00:00Z', duration: 2h, every: 1h, until: '2026-12-02T00:00:00Z'}",
       "reservations[0].every: '1h' is shorter than the window"},
      {"{name: x, tenant: org, model: H100-80GB, gpus: 1, start: '2026-12-01T09:00:00Z', duration: 1h, every: 1h, until: '2029-12-02T00:00:00Z'}",
       "reservations[0].until: more than 1000 windows"},
      {"{name: x, tenant: nope, model: H100-80GB, gpus: 1, start: '2026-12-01T09:00:00Z', duration: 1h}",
       "reservations[0].tenant: unknown tenant 'nope'"},
      {"{name: x, tenant: org, model: H100-80GB, gpus: 1, topology: ring, start: '2026-12-01T09:00:00Z', duration: 1h}",
       "reservations[0].topology: 'ring' is not valid; expected none, nvlink, rack or zone"},
      {"{name: x, tenant: org, model: H100-80GB, gpus: 1, start: '2026-12-01T09:00:00Z', duration: 1h, drain_before: 31d}",
       "reservations[0].drain_before: '31d' is out of range; expected a duration from 0s to 30d"},
      {"{tenant: org, model: H100-80GB, gpus: 1, start: '2026-12-01T09:00:00Z', duration: 1h}",
       "reservations[0].name: missing"},
  };
  for (const Case& c : cases) {
    auto s = Read(c.yaml);
    ASSERT_FALSE(s.has_value()) << c.yaml;
    EXPECT_NE(s.error().message().find(c.says), std::string::npos) << s.error().message();
  }
}

}  // namespace
}  // namespace allot
