// The services routes (server/api_services.cc; docs/services.md) over a simulated fleet: create
// through POST /v1/jobs (`allot submit`) and POST /v1/services, show each replica's node, port
// and state, scope like jobs (another tenant's service is a 404, a viewer may not change one),
// update, roll back, scale and delete; bad bodies refused naming the field.
#include <gtest/gtest.h>

#include "testing/api_fixture.h"

namespace allot {
namespace {

class ApiServicesTest : public testing::TwoTenantsFixture {
 protected:
  static std::string ServiceBody(const std::string& name, const std::string& tenant, const std::string& extra = "") {
    return R"({"name": ")" + name + R"(", "tenant": ")" + tenant + R"(", "kind": "service", "replicas": 2,)" +
           R"( "command": ["serve"], "env": {"VERSION": "1"}, "tasks": {"gpus": 1})" + (extra.empty() ? "" : ", " + extra) + "}";
  }
};

TEST_F(ApiServicesTest, ASubmittedServiceShowsEachReplicasNodePortAndState) {
  auto [code, created] = Call("POST", "/v1/jobs", alice_, ServiceBody("chat", "org/a"));
  ASSERT_EQ(code, 201) << created.dump();
  EXPECT_EQ(created["desired"], 2);
  ASSERT_TRUE(ctl_->Sync().ok());
  auto [c2, svc] = Call("GET", "/v1/services/chat", alice_);
  ASSERT_EQ(c2, 200) << svc.dump();
  EXPECT_EQ(svc["state"], "ready");
  EXPECT_EQ(svc["running"], 2);
  ASSERT_EQ(svc["replicas"].size(), 2u);
  std::set<std::string> nodes;
  for (const Json& r : svc["replicas"]) {
    EXPECT_EQ(r["state"], "running") << r;
    EXPECT_TRUE(r["port"].is_number()) << r;
    EXPECT_EQ(r["revision"], 1);
    nodes.insert(r["node"].get<std::string>());
  }
  EXPECT_EQ(nodes.size(), 2u) << "spread over the two nodes: " << svc;
  EXPECT_EQ(svc["replicas"][0]["name"], "chat-r0");
  // The replicas are jobs too.
  auto [c3, job] = Call("GET", "/v1/jobs/chat-r0", alice_);
  EXPECT_EQ(c3, 200) << job;
  EXPECT_EQ(job["kind"], "inference");
  // Listed for its tenant; another tenant sees none, and its name is a 404.
  EXPECT_EQ(Call("GET", "/v1/services", alice_).second["services"].size(), 1u);
  EXPECT_EQ(Call("GET", "/v1/services", bob_).second["services"].size(), 0u);
  EXPECT_EQ(Call("GET", "/v1/services/chat", bob_).first, 404);
  EXPECT_EQ(Call("DELETE", "/v1/services/chat", bob_).first, 404);
  // The watch stream names the service.
  int added = 0;
  const Json events = Call("GET", "/v1/events?since=0", alice_).second["events"];
  for (const Json& e : events) {
    added += e["type"] == "ServiceReplicaAdded" && e["service"] == "chat";
  }
  EXPECT_EQ(added, 2) << events.dump();
}

TEST_F(ApiServicesTest, AViewerMayReadButNotChangeAService) {
  ASSERT_EQ(Call("POST", "/v1/services", alice_, ServiceBody("chat", "org/a")).first, 201);
  std::string viewer = Token("vic", Role::kViewer, "org/a");
  EXPECT_EQ(Call("GET", "/v1/services/chat", viewer).first, 200);
  EXPECT_EQ(Call("DELETE", "/v1/services/chat", viewer).first, 403);
  EXPECT_EQ(Call("POST", "/v1/services/chat/scale", viewer, R"({"replicas": 3})").first, 403);
  EXPECT_EQ(Call("POST", "/v1/services", viewer, ServiceBody("other", "org/a")).first, 403);
}

TEST_F(ApiServicesTest, UpdateRollbackScaleAndDelete) {
  ASSERT_EQ(Call("POST", "/v1/services", alice_, ServiceBody("chat", "org/a")).first, 201);
  ASSERT_TRUE(ctl_->Sync().ok());
  auto [u, updated] = Call("PATCH", "/v1/services/chat", alice_, R"({"env": {"VERSION": "2"}})");
  ASSERT_EQ(u, 200) << updated;
  EXPECT_EQ(updated["revision"], 2);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(ctl_->Sync().ok());
  auto svc = Call("GET", "/v1/services/chat", alice_).second;
  EXPECT_EQ(svc["updated"], 2) << svc;
  EXPECT_EQ(svc["running"], 2) << svc;
  auto [r, rolled] = Call("POST", "/v1/services/chat/rollback", alice_);
  ASSERT_EQ(r, 200) << rolled;
  EXPECT_EQ(rolled["revision"], 3);
  auto [s, scaled] = Call("POST", "/v1/services/chat/scale", alice_, R"({"replicas": 3})");
  ASSERT_EQ(s, 200) << scaled;
  EXPECT_EQ(scaled["desired"], 3);
  auto [d, deleted] = Call("DELETE", "/v1/services/chat", alice_);
  ASSERT_EQ(d, 200) << deleted;
  EXPECT_EQ(deleted["state"], "deleted");
  EXPECT_EQ(Call("GET", "/v1/services/chat", alice_).first, 404);
  EXPECT_EQ(Call("GET", "/v1/jobs/chat-r0", alice_).second["state"], "cancelled");
}

TEST_F(ApiServicesTest, BadServicesAreRefusedNamingTheFieldAndCreateNothing) {
  auto bad = [&](const std::string& extra, const std::string& says) {
    auto [code, body] = Call("POST", "/v1/services", alice_, ServiceBody("chat", "org/a", extra));
    EXPECT_EQ(code, 400) << extra << ": " << body;
    EXPECT_NE(body.dump().find(says), std::string::npos) << extra << ": " << body;
  };
  bad(R"("duration": "1h")", "service.duration");
  bad(R"("spread": "planet")", "service.spread");
  bad(R"("max_replicas": 4)", "service.autoscale");
  bad(R"("min_replicas": 5, "max_replicas": 4, "autoscale": {"target": 10})", "service.min_replicas");
  bad(R"("autoscale": {"target": 10, "panic_window": "2m"}, "max_replicas": 3)", "panic_window");
  bad(R"("load": [{"at": "0s", "value": 1}])", "service.load");
  bad(R"("port": 70000)", "service.port");
  EXPECT_EQ(Call("GET", "/v1/services", admin_).second["services"].size(), 0u);
  auto [code, body] = Call("POST", "/v1/services/chat/scale", alice_, R"({"replicas": 3})");
  EXPECT_EQ(code, 404) << body;
}

}  // namespace
}  // namespace allot
