// Reservations over the API (issue 16): booking all or nothing with the earliest window that
// would fit and what collides, the tenant's privacy, extend and cancel, live availability with
// the earliest start after running jobs, and bad bodies named field by field.
#include <map>

#include "core/calendar.h"
#include "testing/api_fixture.h"

namespace allot {
namespace {

// The fixture's clock: 2023-11-14T22:13:20Z; its fleet: two nodes of 8 H100 in rack z/r.
class ReservationApiTest : public testing::TwoTenantsFixture {
 protected:
  static std::string Body(const std::string& name, const std::string& tenant, int gpus, int64_t start_h, const std::string& duration,
                          const std::string& extra = "") {
    return R"({"name": ")" + name + R"(", "tenant": ")" + tenant + R"(", "model": "H100-80GB", "gpus": )" +
           std::to_string(gpus) + R"(, "start": ")" + At(start_h) + R"(", "duration": ")" + duration + "\"" + extra + "}";
  }
};

TEST_F(ReservationApiTest, ABookingIsAllOrNothingAndARefusalSaysWhenItWouldFitAndWhatCollides) {
  auto [s1, r1] = Call("POST", "/v1/reservations", alice_, Body("train", "org/a", 12, 2, "4h"));
  ASSERT_EQ(s1, 201) << r1;
  EXPECT_EQ(r1["state"], "confirmed");
  EXPECT_EQ(r1["windows"][0]["start"], At(2));
  EXPECT_EQ(r1["windows"][0]["end"], At(6));
  int held = 0;
  for (const auto& h : r1["windows"][0]["holds"]) held += h["gpus"].get<int>();
  EXPECT_EQ(held, 12);
  // Bob asks 8 in an overlapping window: only 4 are free then. Refused, with the earliest
  // window of the same length (when train ends) and a collision he may not name.
  auto [s2, r2] = Call("POST", "/v1/reservations", bob_, Body("eval", "org/b", 8, 4, "3h"));
  ASSERT_EQ(s2, 409) << r2;
  std::string message = r2["error"]["message"];
  EXPECT_NE(message.find("only 4 of 8 GPUs of H100-80GB are free for the whole window"), std::string::npos) << message;
  EXPECT_EQ(r2["error"]["earliest_start"], At(6));
  EXPECT_EQ(r2["error"]["colliding"]["others"], 1);
  EXPECT_TRUE(r2["error"]["colliding"]["visible"].empty()) << "org/a's reservation is not named to org/b";
  EXPECT_EQ(Call("GET", "/v1/reservations", bob_).second["reservations"].size(), 0u);
  EXPECT_EQ(Call("GET", "/v1/reservations/train", bob_).first, 404) << "a hidden reservation is as missing as none";
  // Back to back is fine.
  EXPECT_EQ(Call("POST", "/v1/reservations", bob_, Body("eval", "org/b", 8, 6, "3h")).first, 201);
  // The audit log has both the booking and the refusal.
  auto audit = Get("/v1/audit").second["records"];
  int booked = 0, refused = 0;
  for (const auto& r : audit) {
    if (r["action"] == "reservation.book") (r["outcome"] == "ok" ? booked : refused)++;
  }
  EXPECT_EQ(booked, 2);
  EXPECT_EQ(refused, 1);
}

TEST_F(ReservationApiTest, AJobNamingAReservationWaitsForItsWindowAndRunsInIt) {
  ASSERT_EQ(Call("POST", "/v1/reservations", alice_, Body("train", "org/a", 8, 2, "4h")).first, 201);
  auto job = [](const std::string& name, const std::string& tenant, const std::string& reservation) {
    return R"({"name": ")" + name + R"(", "tenant": ")" + tenant + R"(", "duration": "1h", "tasks": {"gpus": 8}, "reservation": ")" +
           reservation + "\"}";
  };
  auto [s1, r1] = Call("POST", "/v1/jobs", alice_, job("typo", "org/a", "trian"));
  ASSERT_EQ(s1, 400) << r1;
  EXPECT_EQ(r1["error"]["message"],
            "job.reservation: 'trian' is not a confirmed reservation of tenant 'org/a'; expected the name of one (allot reservations)");
  auto [s2, r2] = Call("POST", "/v1/jobs", bob_, job("theirs", "org/b", "train"));
  ASSERT_EQ(s2, 400) << r2 << ": another tenant's reservation is not named";
  auto [s3, r3] = Call("POST", "/v1/jobs", alice_, job("in-train", "org/a", "train"));
  ASSERT_EQ(s3, 201) << r3;
  EXPECT_EQ(r3["reservation"], "train");
  ASSERT_TRUE(ctl_->Sync().ok());
  auto pending = Call("GET", "/v1/jobs/in-train", alice_).second;
  EXPECT_EQ(pending["state"], "pending");
  EXPECT_EQ(pending["reason"], "waiting for reservation 'train': its window opens at " + At(2));
  now_ += 2 * 3'600'000;
  ASSERT_TRUE(ctl_->Sync().ok());
  auto running = Call("GET", "/v1/jobs/in-train", alice_).second;
  EXPECT_EQ(running["state"], "running") << running;
  EXPECT_EQ(running["class"], "reserved");
  auto shown = Call("GET", "/v1/reservations/train", alice_).second;
  EXPECT_EQ(shown["now"], Json::parse(R"({"window": 0, "open": true, "jobs": 1, "gpus_in_use": 8, "lent_gpus": 0})")) << shown;
  // An hour into it: 32 GPU-hours booked, 8 used by its job so far, 24 idle.
  now_ += 3'600'000;
  auto usage = Get("/v1/usage?from=" + At(0) + "&to=" + At(6)).second;
  for (const auto& t : usage["tenants"]) {
    if (t["path"] != "org/a") continue;
    EXPECT_EQ(t["reserved_gpu_hours"]["H100-80GB"], 32.0) << t;
    EXPECT_EQ(t["idle_reserved_gpu_hours"]["H100-80GB"], 24.0) << t;
  }
}

TEST_F(ReservationApiTest, ARecurringReservationBooksEveryWindowOrNone) {
  auto [s, r] = Call("POST", "/v1/reservations", alice_,
                     Body("nightly", "org/a", 16, 1, "2h", R"(, "every": "daily", "until": ")" + At(1 + 24 * 6 + 1) + "\""));
  ASSERT_EQ(s, 201) << r;
  EXPECT_EQ(r["windows"].size(), 7u);
  EXPECT_EQ(r["windows"][6]["start"], At(1 + 24 * 6));
  // A one-off that collides with the fourth night refuses; nothing of it is booked.
  auto [s2, r2] = Call("POST", "/v1/reservations", bob_, Body("x", "org/b", 1, 24 * 3, "4h"));
  EXPECT_EQ(s2, 409) << r2;
  EXPECT_EQ(Call("GET", "/v1/reservations", bob_).second["reservations"].size(), 0u);
}

TEST_F(ReservationApiTest, ATenantBooksWithinItsGuaranteePlusTheMaxReservedItsParentSets) {
  auto [s0, r0] = Post("/v1/tenants", R"({"path": "org/a", "guarantee": {"gpu/H100-80GB": 2}, "max_reserved": {"gpu/H100-80GB": 3}})");
  ASSERT_EQ(s0, 200) << r0;
  auto listed = Get("/v1/tenants").second["tenants"];
  for (const auto& t : listed) {
    if (t["path"] == "org/a") {
      EXPECT_EQ(t["max_reserved"]["gpu/H100-80GB"], "3") << t;
    }
  }
  EXPECT_EQ(Call("POST", "/v1/reservations", alice_, Body("five", "org/a", 5, 2, "1h")).first, 201);
  auto [s1, r1] = Call("POST", "/v1/reservations", alice_, Body("one-more", "org/a", 1, 2, "1h"));
  ASSERT_EQ(s1, 409) << r1;
  EXPECT_EQ(r1["error"]["message"],
            "reservation 'one-more' windows[0]: tenant 'org/a' may have at most its guarantee (2) plus max_reserved (3): 5 GPUs "
            "of H100-80GB booked at once; 5 are booked then and 1 asked");
  EXPECT_EQ(Call("POST", "/v1/reservations", alice_, Body("later", "org/a", 1, 3, "1h")).first, 201) << "after the first ends";
  auto [s2, r2] = Post("/v1/tenants", R"({"path": "org/b", "max_reserved": {"gpu/H100-80GB": -1}})");
  EXPECT_EQ(s2, 400) << r2;
}

TEST_F(ReservationApiTest, ExtendOnlyWhereFreeShortenAndCancel) {
  ASSERT_EQ(Call("POST", "/v1/reservations", alice_, Body("a1", "org/a", 16, 1, "2h")).first, 201);
  ASSERT_EQ(Call("POST", "/v1/reservations", bob_, Body("b1", "org/b", 8, 4, "2h")).first, 201);
  auto [s1, r1] = Call("PATCH", "/v1/reservations/a1", alice_, R"({"end": ")" + At(4) + "\"}");
  ASSERT_EQ(s1, 200) << r1;
  EXPECT_EQ(r1["windows"][0]["end"], At(4));
  auto [s2, r2] = Call("PATCH", "/v1/reservations/a1", alice_, R"({"duration": "4h"})");
  EXPECT_EQ(s2, 409) << r2;
  EXPECT_NE(r2["error"]["message"].get<std::string>().find("GPUs not booked for the whole window"), std::string::npos) << r2;
  EXPECT_EQ(Call("PATCH", "/v1/reservations/a1", bob_, R"({"duration": "1h"})").first, 404) << "bob cannot see it";
  ASSERT_EQ(Call("DELETE", "/v1/reservations/b1", bob_).first, 200);
  EXPECT_EQ(Call("PATCH", "/v1/reservations/a1", alice_, R"({"duration": "5h"})").first, 200) << "free once b1 is cancelled";
  EXPECT_EQ(Call("GET", "/v1/reservations/b1", bob_).first, 404);
  EXPECT_EQ(Call("GET", "/v1/reservations?all=true", bob_).second["reservations"][0]["state"], "cancelled");
}

TEST_F(ReservationApiTest, AShrinkFreesTheCutAtOnceButNeverWhatItsJobsHold) {
  ASSERT_EQ(Call("POST", "/v1/reservations", alice_, Body("a1", "org/a", 12, 1, "2h")).first, 201);
  ASSERT_EQ(Call("POST", "/v1/reservations", bob_, Body("b1", "org/b", 8, 1, "2h")).first, 409) << "only 4 free";
  EXPECT_EQ(Call("PATCH", "/v1/reservations/a1", bob_, R"({"gpus": 4})").first, 404) << "bob cannot see it";
  auto [s1, r1] = Call("PATCH", "/v1/reservations/a1", alice_, R"({"gpus": 4})");
  ASSERT_EQ(s1, 200) << r1;
  EXPECT_EQ(r1["gpus"], 4);
  int held = 0;
  for (const auto& h : r1["windows"][0]["holds"]) held += h["gpus"].get<int>();
  EXPECT_EQ(held, 4);
  EXPECT_EQ(r1["shrinks"], Json::parse(R"([{"at": ")" + At(0) + R"(", "from_window": 0, "gpus_before": 12, "gpus_after": 4}])"));
  ASSERT_EQ(Call("POST", "/v1/reservations", bob_, Body("b1", "org/b", 8, 1, "2h")).first, 201) << "the cut is free at once";
  // In the window, its job holds 3 GPUs: it may go down to 3, not below.
  now_ += 3'600'000 + 1'800'000;
  auto [sj, rj] = Call("POST", "/v1/jobs", alice_,
                       R"({"name": "in-a1", "tenant": "org/a", "duration": "1h", "tasks": {"gpus": 3}, "reservation": "a1"})");
  ASSERT_EQ(sj, 201) << rj;
  ASSERT_TRUE(ctl_->Sync().ok());
  ASSERT_EQ(Call("GET", "/v1/jobs/in-a1", alice_).second["state"], "running");
  auto [s2, r2] = Call("PATCH", "/v1/reservations/a1", alice_, R"({"gpus": 2})");
  ASSERT_EQ(s2, 409) << r2;
  EXPECT_EQ(r2["error"]["message"],
            "reservation 'a1' windows[0]: its jobs hold 3 GPUs there now; expected at most 2 (stop some of its jobs first)");
  auto [s3, r3] = Call("PATCH", "/v1/reservations/a1", alice_, R"({"gpus": 3})");
  ASSERT_EQ(s3, 200) << r3;
  ASSERT_TRUE(ctl_->Sync().ok());
  EXPECT_EQ(Call("GET", "/v1/jobs/in-a1", alice_).second["state"], "running") << "its job keeps running";
  // Billed: 4 GPUs for the first half hour of the window, 3 since.
  now_ += 1'800'000;
  auto usage = Get("/v1/usage?from=" + At(0) + "&to=" + At(3)).second;
  for (const auto& t : usage["tenants"]) {
    if (t["path"] == "org/a") {
      EXPECT_EQ(t["reserved_gpu_hours"]["H100-80GB"], 2.0 + 4.5) << t;
    }
  }
  // Bad shrinks name the field and change nothing.
  struct Case { std::string body; int status; std::string says; };
  const Case cases[] = {
      {R"({"nodes": 1})", 400, "nodes: the reservation was booked by GPUs; expected gpus"},
      {R"({"gpus": 3})", 400, "reservation 'a1': 3 GPUs; expected from 1 to 2 (it holds 3; to grow it, book another)"},
      {R"({"gpus": 0})", 400, "gpus"},
      {R"({"gpus": 2, "window": 0})", 400, "window: a shrink applies to every window not yet over; give no window"},
      {R"({"gpus": 2, "end": ")" + At(4) + "\"}", 400, "body: give one of end, duration, gpus or nodes"},
  };
  for (const Case& c : cases) {
    auto [s, r] = Call("PATCH", "/v1/reservations/a1", alice_, c.body);
    EXPECT_EQ(s, c.status) << c.body << " → " << r;
    EXPECT_NE(r["error"]["message"].get<std::string>().find(c.says), std::string::npos) << c.body << " → " << r;
  }
  EXPECT_EQ(Call("GET", "/v1/reservations/a1", alice_).second["gpus"], 3);
}

// Node labels and `require` over the API: a third node with a newer driver; a job and a
// reservation that require it land only there, availability counts only it, and a bad
// requirement names the field.
TEST_F(ReservationApiTest, RequireTakesOnlyNodesWhoseLabelsSatisfyItForJobsReservationsAndAvailability) {
  NodeSpec newer{"n2", "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
  newer.labels = {{"driver", "550.54.15"}, {"interconnect", "nvlink"}};
  ASSERT_TRUE(ctl_->Execute(NodeAdded{newer}).has_value());
  auto [sn, node] = Get("/v1/nodes/n2");
  ASSERT_EQ(sn, 200) << node;
  EXPECT_EQ(node["labels"], Json::parse(R"({"driver": "550.54.15", "interconnect": "nvlink"})")) << node;

  auto [sa, avail] = Call("GET", "/v1/availability?model=H100-80GB&gpus=8&require=driver%3E%3D550", alice_);
  ASSERT_EQ(sa, 200) << avail;
  EXPECT_EQ(avail["free_now"]["gpus"], 8) << "only n2 satisfies it: " << avail;
  EXPECT_EQ(Call("GET", "/v1/availability?model=H100-80GB&gpus=8", alice_).second["free_now"]["gpus"], 24);

  auto [sj, job] = Call("POST", "/v1/jobs", alice_,
                        R"({"name": "new-driver", "tenant": "org/a", "duration": "1h", "tasks": {"gpus": 4}, "require": {"driver": ">=550"}})");
  ASSERT_EQ(sj, 201) << job;
  EXPECT_EQ(job["require"], "driver>=550") << job;
  ASSERT_TRUE(ctl_->Sync().ok());
  auto running = Call("GET", "/v1/jobs/new-driver", alice_).second;
  EXPECT_EQ(running["state"], "running") << running;
  EXPECT_NE(running.dump().find("\"n2\""), std::string::npos) << "placed on n2: " << running;

  auto [sr, r] = Call("POST", "/v1/reservations", bob_, Body("nv", "org/b", 4, 2, "1h", R"(, "require": "interconnect=nvlink")"));
  ASSERT_EQ(sr, 201) << r;
  EXPECT_EQ(r["require"], "interconnect=nvlink") << r;
  EXPECT_EQ(r["windows"][0]["holds"], Json::parse(R"([{"node": "n2", "gpus": 4}])")) << r;
  auto [s2, r2] = Call("POST", "/v1/reservations", bob_, Body("nv2", "org/b", 12, 2, "1h", R"(, "require": "interconnect=nvlink")"));
  EXPECT_EQ(s2, 409) << r2;
  EXPECT_NE(r2["error"]["message"].get<std::string>().find("interconnect=nvlink"), std::string::npos) << r2;

  auto [sb, bad] = Call("POST", "/v1/jobs", alice_,
                        R"({"name": "bad", "tenant": "org/a", "duration": "1h", "tasks": {"gpus": 1}, "require": {"driver": ">=abc"}})");
  EXPECT_EQ(sb, 400) << bad;
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("require"), std::string::npos) << bad;
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("abc"), std::string::npos) << bad;
  EXPECT_EQ(Call("GET", "/v1/jobs/bad", alice_).first, 404) << "nothing changed";
}

// An untrusted tenant books and counts only nodes whose agent confines tasks in every way: a node
// labelled isolation=partial is neither offered to its reservations nor counted in its
// availability, and a refusal says why. A trusted tenant books it.
TEST_F(ReservationApiTest, AnUntrustedTenantIsNotOfferedNodesWhoseIsolationIsPartial) {
  NodeSpec partial{"n2", "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
  partial.labels = {{"isolation", "partial"}};
  ASSERT_TRUE(ctl_->Execute(NodeAdded{partial}).has_value());
  TenantSpec b;
  b.path = "org/b";
  b.trust = Trust::kUntrusted;
  ASSERT_TRUE(ctl_->Execute(TenantUpserted{b}).has_value());

  auto [sa, avail] = Call("GET", "/v1/availability?model=H100-80GB&gpus=8&tenant=org/b", bob_);
  ASSERT_EQ(sa, 200) << avail;
  EXPECT_EQ(avail["free_now"]["gpus"], 16) << avail;
  EXPECT_EQ(avail["not_offered"], "1 node whose agent cannot confine tasks in every way (isolation=partial): the tenant is untrusted");
  EXPECT_EQ(Call("GET", "/v1/availability?model=H100-80GB&gpus=8&tenant=org/a", alice_).second["free_now"]["gpus"], 24);

  auto [s1, r1] = Call("POST", "/v1/reservations", bob_, Body("all", "org/b", 24, 2, "1h"));
  ASSERT_EQ(s1, 409) << r1;
  EXPECT_NE(r1["error"]["message"].get<std::string>().find(
                "its tenant is untrusted: the 1 node whose agent cannot confine tasks in every way (isolation=partial) is not offered to it"),
            std::string::npos)
      << r1;
  auto [s2, r2] = Call("POST", "/v1/reservations", bob_, Body("two", "org/b", 16, 2, "1h"));
  ASSERT_EQ(s2, 201) << r2;
  EXPECT_EQ(r2["windows"][0]["holds"], Json::parse(R"([{"node": "n0", "gpus": 8}, {"node": "n1", "gpus": 8}])")) << r2;
  auto [s3, r3] = Call("POST", "/v1/reservations", alice_, Body("rest", "org/a", 8, 2, "1h"));
  ASSERT_EQ(s3, 201) << r3;
  EXPECT_EQ(r3["windows"][0]["holds"], Json::parse(R"([{"node": "n2", "gpus": 8}])")) << r3;
}

TEST_F(ReservationApiTest, AvailabilityCountsWhatIsFreeNowAndWaitsForRunningJobsAndReservations) {
  // A running job of 8 GPUs for 3 h, and a reservation of 8 from 1 h to 5 h.
  auto [sj, job] = Call("POST", "/v1/jobs", alice_,
                        R"({"name": "long", "tenant": "org/a", "duration": "3h", "time_limit": "3h", "tasks": {"gpus": 8}})");
  ASSERT_EQ(sj, 201) << job;
  ASSERT_EQ(job["state"], "running") << job;
  ASSERT_EQ(Call("POST", "/v1/reservations", bob_, Body("r", "org/b", 8, 1, "4h")).first, 201);
  auto [s, a] = Call("GET", "/v1/availability?model=H100-80GB&gpus=16&duration=2h", bob_);
  ASSERT_EQ(s, 200) << a;
  EXPECT_EQ(a["free_now"]["gpus"], 8) << a;
  EXPECT_EQ(a["earliest_start"], At(5)) << "after the job's 3 h and the reservation's end at 5 h: " << a;
  int jobs = 0, reservations = 0;
  for (const auto& w : a["waited_for"]) (w["kind"] == "job" ? jobs : reservations)++;
  EXPECT_EQ(jobs, 1) << a;
  EXPECT_EQ(reservations, 1) << a;
  for (const auto& w : a["waited_for"]) {
    if (w["kind"] == "job") {
      EXPECT_FALSE(w.contains("name")) << "bob may not see org/a's job";
    } else {
      EXPECT_EQ(w["name"], "r");
    }
  }
  auto [s8, a8] = Call("GET", "/v1/availability?model=H100-80GB&gpus=8&duration=1h", bob_);
  ASSERT_EQ(s8, 200) << a8;
  EXPECT_EQ(a8["earliest_start"], At(0)) << "8 are free for the first hour";
  auto [s3, a3] = Call("GET", "/v1/availability?model=H100-80GB&gpus=17&duration=1h", bob_);
  ASSERT_EQ(s3, 200) << a3;
  EXPECT_TRUE(a3["earliest_start"].is_null()) << a3;
  EXPECT_NE(a3["why"].get<std::string>().find("only 16 of 17"), std::string::npos) << a3;
}

// With tenant=, the tenant's own queued jobs go first, each where it would start: org/a's 16-GPU
// job runs for 2 h and the next 16-GPU job waits for it, so 8 more GPUs for org/a are free only
// after both (5 h), while the answer without the queue says 2 h.
TEST_F(ReservationApiTest, AvailabilityForATenantCountsItsQueuedJobsAheadInOrder) {
  auto submit = [&](const std::string& name, const std::string& limit) {
    return Call("POST", "/v1/jobs", alice_,
                R"({"name": ")" + name + R"(", "tenant": "org/a", "duration": ")" + limit + R"(", "time_limit": ")" + limit +
                    R"(", "tasks": {"count": 2, "gpus": 8}})");
  };
  auto [s1, j1] = submit("first", "2h");
  ASSERT_EQ(s1, 201) << j1;
  ASSERT_EQ(j1["state"], "running") << j1;
  auto [s2, j2] = submit("second", "3h");
  ASSERT_EQ(s2, 201) << j2;
  ASSERT_EQ(j2["state"], "pending") << j2;
  auto [s, plain] = Call("GET", "/v1/availability?model=H100-80GB&gpus=8&duration=1h", alice_);
  ASSERT_EQ(s, 200) << plain;
  EXPECT_EQ(plain["earliest_start"], At(2)) << plain;
  EXPECT_TRUE(plain.contains("not_considered")) << plain;
  auto [sq, queued] = Call("GET", "/v1/availability?model=H100-80GB&gpus=8&duration=1h&tenant=org/a", alice_);
  ASSERT_EQ(sq, 200) << queued;
  EXPECT_EQ(queued["earliest_start"], At(5)) << queued;
  bool named = false;
  for (const auto& w : queued["waited_for"]) named |= w["kind"] == "queued job" && w["name"] == "second";
  EXPECT_TRUE(named) << queued;
  EXPECT_FALSE(queued.contains("not_considered"));
  EXPECT_EQ(Call("GET", "/v1/availability?model=H100-80GB&gpus=8&tenant=org/a", bob_).first, 404)
      << "another tenant's queue is as unknown as a missing tenant";
}

TEST_F(ReservationApiTest, TheCalendarShowsFreeReservedAndInUseGpusPerStep) {
  auto [sj, job] = Call("POST", "/v1/jobs", alice_,
                        R"({"name": "long", "tenant": "org/a", "duration": "2h", "time_limit": "2h", "tasks": {"gpus": 4}})");
  ASSERT_EQ(job["state"], "running") << job;
  ASSERT_EQ(Call("POST", "/v1/reservations", bob_, Body("r", "org/b", 4, 0, "1h")).first, 201);
  ASSERT_EQ(Call("POST", "/v1/reservations", bob_, Body("r2", "org/b", 16, 2, "2h")).first, 201);
  auto [s, c] = Call("GET", "/v1/calendar?model=H100-80GB&from=" + At(0) + "&to=" + At(4) + "&step=1h", bob_);
  ASSERT_EQ(s, 200) << c;
  EXPECT_EQ(c["capacity"], 16);
  ASSERT_EQ(c["steps"].size(), 4u) << c;
  // Hour 0: the job's 4 and r's 4; hour 1: the job's 4; hours 2 and 3: r2's 16.
  const int want[4][3] = {{8, 4, 4}, {12, 0, 4}, {0, 16, 0}, {0, 16, 0}};  // free, reserved, in use
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c["steps"][i]["start"], At(i));
    EXPECT_EQ(c["steps"][i]["free"], want[i][0]) << i << ": " << c["steps"][i];
    EXPECT_EQ(c["steps"][i]["reserved"], want[i][1]) << i;
    EXPECT_EQ(c["steps"][i]["in_use"], want[i][2]) << i;
  }
  EXPECT_EQ(Get("/v1/calendar?model=H100-80GB&step=1m&to=" + At(24)).first, 400) << "past 1000 steps";
  EXPECT_EQ(Get("/v1/calendar?model=H100-80GB&from=" + At(2) + "&to=" + At(1)).first, 400);
  EXPECT_EQ(Get("/v1/calendar?model=B300").first, 400);
}

// Usage shows each tenant's reserved GPU-hours inside the window, rolled up its subtree; jobs do
// not run in reservations yet, so all of it is idle reserved time.
TEST_F(ReservationApiTest, UsageShowsReservedGpuHoursInTheWindowPerTenantAndItsParents) {
  ASSERT_EQ(Call("POST", "/v1/reservations", alice_, Body("a", "org/a", 4, 1, "2h")).first, 201);
  ASSERT_EQ(Call("POST", "/v1/reservations", bob_, Body("b", "org/b", 2, 2, "4h")).first, 201);
  // The window [now, now + 3h): a's 2 h × 4 GPUs, b's first hour × 2 GPUs.
  auto [s, u] = Get("/v1/usage?from=" + At(0) + "&to=" + At(3));
  ASSERT_EQ(s, 200) << u;
  std::map<std::string, Json> rows;
  for (const auto& t : u["tenants"]) rows[t["path"]] = t;
  EXPECT_EQ(rows["org/a"]["reserved_gpu_hours"]["H100-80GB"], 8.0) << u;
  EXPECT_EQ(rows["org/b"]["reserved_gpu_hours"]["H100-80GB"], 2.0) << u;
  EXPECT_EQ(rows["org"]["reserved_gpu_hours"]["H100-80GB"], 10.0) << u;
  auto [sb, ub] = Call("GET", "/v1/usage?from=" + At(0) + "&to=" + At(3), bob_);
  ASSERT_EQ(sb, 200);
  for (const auto& t : ub["tenants"]) EXPECT_NE(t["path"], "org/a") << "bob sees only his subtree";
  ASSERT_EQ(Call("DELETE", "/v1/reservations/a", alice_).first, 200);
  EXPECT_FALSE(Get("/v1/usage?from=" + At(0) + "&to=" + At(3)).second["tenants"][1].contains("reserved_gpu_hours"))
      << "a cancelled reservation is not reserved time";
}

TEST_F(ReservationApiTest, BadBodiesAndQueriesNameTheFieldAndChangeNothing) {
  struct Case { std::string body; std::string says; };
  const Case cases[] = {
      {Body("x", "org/a", 0, 1, "1h"), "body: gpus: '0' is not valid; expected an integer from 1 to 100000"},
      {R"({"name": "x", "tenant": "org/a", "model": "H100-80GB", "gpus": 1, "nodes": 1, "start": ")" + At(1) + R"(", "duration": "1h"})",
       "give gpus (whole GPUs) or nodes (whole nodes), one of them"},
      {R"({"name": "x", "tenant": "org/a", "model": "H100-80GB", "gpus": 1, "start": "tomorrow", "duration": "1h"})",
       "body: start: 'tomorrow' is not a time; expected RFC 3339 with an offset"},
      {R"({"name": "x", "tenant": "org/a", "model": "B300", "gpus": 1, "start": ")" + At(1) + R"(", "duration": "1h"})",
       "model: no node in the fleet has GPU model 'B300'; expected one of: H100-80GB"},
      {Body("x", "org/a", 1, 1, "1h", R"(, "every": "30m", "until": ")" + At(5) + "\""), "is shorter than the window"},
      {Body("x", "org/a", 1, 1, "1h", R"(, "every": "daily")"), "every and until go together"},
      {Body("x", "org/a", 1, -3, "1h"), "is in the past"},
      {Body("a/b", "org/a", 1, 1, "1h"), "body:"},
      {Body("x", "org/a", 1, 1, "1h", R"(, "color": "red")"), "body: color: unknown field; expected one of: name, tenant"},
  };
  for (const Case& c : cases) {
    auto [s, r] = Call("POST", "/v1/reservations", alice_, c.body);
    EXPECT_EQ(s, 400) << c.body << " → " << r;
    EXPECT_NE(r["error"]["message"].get<std::string>().find(c.says), std::string::npos) << r;
  }
  EXPECT_EQ(Call("POST", "/v1/reservations", bob_, Body("x", "org/a", 1, 1, "1h")).first, 400) << "org/a is unknown to bob";
  EXPECT_EQ(Get("/v1/reservations?all=true").second["reservations"].size(), 0u);
  EXPECT_EQ(Get("/v1/availability?model=H100-80GB&gpus=1&nodes=1").first, 400);
  EXPECT_EQ(Get("/v1/availability?model=B300&gpus=1").first, 400);
  EXPECT_EQ(Get("/v1/availability?model=H100-80GB&gpus=1&duration=forever").first, 400);
}

}  // namespace
}  // namespace allot
