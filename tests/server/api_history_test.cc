// GET /v1/history (daemon/history.h) and the dashboard's static files (server/api_web.cc) over a
// real API: a member reads only its subtree's tenants; the ring keeps its bound; the files come
// with their type, ETag and CSP, and an unchanged one is a 304.
#include <gtest/gtest.h>
#include <httplib.h>

#include "daemon/history.h"
#include "server/web_assets.h"
#include "testing/api_fixture.h"

namespace allot {
namespace {

class HistoryApiTest : public testing::TwoTenantsFixture {
 protected:
  ApiOptions Options() override {
    ApiOptions o = TwoTenantsFixture::Options();
    o.history = history_;
    return o;
  }
  void Sample() {
    history_->Add(ctl_->Read([&](const ClusterState& st) { return SampleHistory(st, now_.load()); }));
  }
  std::shared_ptr<History> history_ = std::make_shared<History>(60000);
};

TEST_F(HistoryApiTest, AMemberReadsTheFleetAndOnlyItsOwnTenantsSamples) {
  ASSERT_EQ(Post("/v1/jobs", JobBody("a1", "org/a", R"({"gpus": 3})")).first, 201);
  ASSERT_EQ(Post("/v1/jobs", JobBody("b1", "org/b", R"({"gpus": 2})")).first, 201);
  ASSERT_EQ(Post("/v1/jobs", JobBody("b2", "org/b", R"({"count": 2, "gpus": 8})")).first, 201);  // waits: 11 free
  Sample();
  now_ += 90'000;
  Sample();

  auto [s, admin] = Get("/v1/history");
  ASSERT_EQ(s, 200) << admin.dump();
  EXPECT_EQ(admin["interval_s"], 60.0);
  ASSERT_EQ(admin["samples"].size(), 2u);
  const Json& last = admin["samples"][1];
  EXPECT_EQ(last["time"], FormatRfc3339(1'700'000'090'000));
  ASSERT_EQ(last["fleet"].size(), 1u);
  EXPECT_EQ(last["fleet"][0], (Json{{"model", "H100-80GB"}, {"allocated", 5}, {"idle", 11}}));
  std::map<std::string, Json> by_tenant;
  for (const Json& t : last["tenants"]) by_tenant[t["tenant"]] = t;
  ASSERT_EQ(by_tenant.size(), 3u) << "org, org/a, org/b";
  EXPECT_EQ(by_tenant["org"]["gpus"], 5.0) << "a subtree's usage";
  EXPECT_EQ(by_tenant["org/b"]["pending"], 1);
  EXPECT_EQ(by_tenant["org/b"]["oldest_wait_s"], 90) << "b2 queued one sample before";
  EXPECT_EQ(by_tenant["org"]["pending"], 1) << "its subtree's pending jobs";
  EXPECT_EQ(by_tenant["org/a"]["pending"], 0);

  auto [ms, member] = Call("GET", "/v1/history", alice_);
  ASSERT_EQ(ms, 200) << member.dump();
  for (const Json& sample : member["samples"]) {
    ASSERT_EQ(sample["tenants"].size(), 1u) << sample.dump();
    EXPECT_EQ(sample["tenants"][0]["tenant"], "org/a");
    EXPECT_EQ(sample["tenants"][0]["gpus"], 3.0);
    EXPECT_EQ(sample["fleet"][0]["allocated"], 5) << "the fleet is everyone's to see, as /v1/nodes is";
  }
}

TEST_F(HistoryApiTest, SinceLeavesOutOlderSamplesAndABadTimeIsNamed) {
  Sample();
  now_ += 60'000;
  Sample();
  auto [s, j] = Get("/v1/history?since=" + FormatRfc3339(1'700'000'030'000));
  ASSERT_EQ(s, 200);
  ASSERT_EQ(j["samples"].size(), 1u);
  EXPECT_EQ(j["samples"][0]["time"], FormatRfc3339(1'700'000'060'000));
  auto [bs, bad] = Get("/v1/history?since=yesterday");
  EXPECT_EQ(bs, 400);
  EXPECT_EQ(bad["error"]["message"],
            "since: 'yesterday' is not a time; expected Unix seconds or an RFC 3339 UTC time like 2026-11-01T00:00:00Z");
  EXPECT_EQ(Call("GET", "/v1/history", "").first, 401);
}

TEST(HistoryRing, KeepsADaysSamplesAtMost1440AndDropsTheOldest) {
  EXPECT_EQ(History(60'000).capacity(), 1440u) << "24 h at the default interval";
  EXPECT_EQ(History(3'600'000).capacity(), 24u) << "24 h at an hour";
  EXPECT_EQ(History(1'000).capacity(), 1440u) << "at most 1440, whatever the interval";
  History h(3'600'000);
  for (int i = 0; i < 30; ++i) h.Add(HistorySample{.time_ms = i});
  auto all = h.Since(0);
  ASSERT_EQ(all.size(), 24u);
  EXPECT_EQ(all.front().time_ms, 6);
  EXPECT_EQ(all.back().time_ms, 29);
}

TEST_F(HistoryApiTest, TheDashboardIsServedWithoutATokenWithItsTypeEtagAndPolicy) {
  httplib::Client c("127.0.0.1", api_->port());
  auto index = c.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("/ui/js/app.js"), std::string::npos);
  EXPECT_NE(index->get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(index->get_header_value("Cache-Control"), "no-cache");
  EXPECT_EQ(index->get_header_value("X-Content-Type-Options"), "nosniff");

  auto js = c.Get("/ui/js/app.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  const WebAsset* a = FindWebAsset("/js/app.js");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(js->body, a->body) << "the bytes of web/js/app.js";
  std::string etag = js->get_header_value("ETag");
  EXPECT_EQ(etag.size(), 18u) << etag;

  auto again = c.Get("/ui/js/app.js", {{"If-None-Match", etag}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());

  auto css = c.Get("/ui/vendor/uplot/uPlot.min.css");
  ASSERT_TRUE(css);
  EXPECT_EQ(css->get_header_value("Content-Type"), "text/css; charset=utf-8");
  EXPECT_NE(FindWebAsset("/vendor/uplot/LICENSE"), nullptr) << "uPlot's licence travels with it";

  auto missing = c.Get("/ui/js/nope.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("/ui/js/nope.js: no such file of the dashboard"), std::string::npos);
  auto escape = c.Get("/ui/../admin-token");
  ASSERT_TRUE(escape);
  EXPECT_EQ(escape->status, 404) << "only compiled-in files are served";
}

}  // namespace
}  // namespace allot
