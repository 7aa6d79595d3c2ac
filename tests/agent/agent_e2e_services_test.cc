// End to end, inference services (docs/services.md) on real agents over the fake NVML: a failed
// replica is restarted on its node within seconds and its crash loop shows; a rolling update
// replaces the replicas one at a time while the others keep running; and a replica's load,
// reported through ALLOT_LOAD_FILE, scales the service up within seconds and back down.
#include <fstream>

#include "agent/agent_e2e_fixture.h"

namespace allot {
namespace {

using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: serve}\n";
// A replica: marks its start, then runs until a "stop-<slot>" file appears in its directory,
// which it removes before exiting with code 3; meanwhile it reports the number in "load" (when
// there is one) as its load.
constexpr const char* kReplica =
    "echo \"start $ALLOT_REPLICA $ALLOT_PORT $VERSION\" >> marks; echo \"VERSION=$VERSION\"; echo \"ALLOT_PORT=$ALLOT_PORT\"; "
    "while [ ! -f stop-$ALLOT_REPLICA ]; do [ -f load ] && cat load >> \"$ALLOT_LOAD_FILE\"; sleep 0.2; done; "
    "rm -f stop-$ALLOT_REPLICA; exit 3";

class ServicesE2eTest : public AgentE2eTest {
 protected:
  void SetUp() override {
    // This branch's test ports (21000-21499), where the fixture's pick does not collide.
    port_ = 0;
    const int start = static_cast<int>(::getpid() % 500);
    for (int i = 0; i < 500 && port_ == 0; ++i) {
      int p = 21000 + (start + i) % 500;
      if (testing::CanBind(p)) port_ = p;
    }
    ASSERT_NE(port_, 0);
  }
  void StartTwoNodes(std::vector<std::string> allotd_args = {}) {
    StartAllotd(kTenants, std::move(allotd_args));
    StartAgent("gpu-a");
    StartAgent("gpu-b");
    WaitReady("gpu-a");
    WaitReady("gpu-b");
  }
  // Creates service `name` through `allot submit`'s route (POST /v1/jobs, kind: service).
  void Create(const std::string& name, const std::string& fields) {
    Json command = {"/bin/sh", "-c", kReplica};
    std::string body = R"({"name": ")" + name + R"(", "tenant": "serve", "kind": "service", "command": )" + command.dump() +
                       R"(, "env": {"VERSION": "1"}, "tasks": {"gpus": 1, "cpu": 1, "memory": "1Gi"}, )" + fields + "}";
    auto [code, reply] = Call("POST", "/v1/jobs", body);
    ASSERT_EQ(code, 201) << reply.dump();
    ASSERT_TRUE(reply.contains("desired")) << reply.dump();
  }
  Json Service(const std::string& name) { return Get("/v1/services/" + name); }
  int Running(const std::string& name) { return Service(name).value("running", -1); }
  // The replica in `slot`, or null.
  Json Replica(const std::string& name, int slot) {
    for (const Json& r : Service(name).value("replicas", Json::array())) {
      if (r.value("slot", -1) == slot) return r;
    }
    return nullptr;
  }
  void WriteLoad(const std::string& node, int load) {
    std::filesystem::create_directories(TaskDir(node, "serve"));
    std::ofstream(TaskDir(node, "serve") / "load.tmp") << load << "\n";
    std::filesystem::rename(TaskDir(node, "serve") / "load.tmp", TaskDir(node, "serve") / "load");
  }
};

TEST_F(ServicesE2eTest, AFailedReplicaIsRestartedWithinSecondsAndItsCrashLoopShows) {
  StartTwoNodes();
  Create("web", R"("replicas": 2)");
  ASSERT_TRUE(WaitFor(20, [&] { return Running("web") == 2; })) << Service("web").dump();
  Json svc = Service("web");
  std::set<std::string> nodes;
  std::set<int> ports;
  for (const Json& r : svc["replicas"]) {
    nodes.insert(r.value("node", ""));
    ports.insert(r.value("port", 0));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"gpu-a", "gpu-b"})) << "spread over the nodes: " << svc.dump();
  EXPECT_EQ(ports, (std::set<int>{20000, 20001})) << svc.dump();
  EXPECT_EQ(EnvLines(WaitLog("web-r0", "ALLOT_PORT="))["ALLOT_PORT"], "20000");

  // Replica 0's task exits with code 3: it is restarted at once (its first failure) on a node,
  // and runs again within the goal of 5 s.
  std::string node = Replica("web", 0).value("node", "");
  auto t0 = std::chrono::steady_clock::now();
  std::ofstream(TaskDir(node, "serve") / "stop-0") << "";
  ASSERT_TRUE(WaitFor(10, [&] {
    Json r = Replica("web", 0);
    return r.value("restarts", 0) == 1 && r.value("state", "") == "running";
  })) << Service("web").dump();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 5.0) << "a failed replica replaced and running within 5 s";
  Json r0 = Replica("web", 0);
  EXPECT_NE(r0.value("last_exit", "").find("exited with code 3"), std::string::npos) << r0.dump();
  EXPECT_EQ(r0.value("name", ""), "web-r0") << "the same job, queued again";

  // A second failure soon after waits 1 s, a third 2 s: a crash loop, shown while it waits.
  auto fail = [&] {
    std::string on = Replica("web", 0).value("node", "");
    std::ofstream(TaskDir(on, "serve") / "stop-0") << "";
  };
  fail();
  ASSERT_TRUE(WaitFor(15, [&] { return Replica("web", 0).value("restarts", 0) == 2 && Replica("web", 0).value("state", "") == "running"; }))
      << Service("web").dump();
  fail();
  Json looping;
  ASSERT_TRUE(WaitFor(10, [&] { return !(looping = Replica("web", 0))["next_restart"].is_null(); })) << Service("web").dump();
  EXPECT_EQ(looping.value("state", ""), "crash-loop") << looping.dump();
  EXPECT_EQ(looping.value("crashes", 0), 2) << looping.dump();
  EXPECT_NE(looping["next_restart"].get<std::string>().find('T'), std::string::npos) << "RFC 3339: " << looping.dump();
  ASSERT_TRUE(WaitFor(15, [&] { return Replica("web", 0).value("restarts", 0) == 3 && Replica("web", 0).value("state", "") == "running"; }))
      << Service("web").dump();
  EXPECT_EQ(Replica("web", 1).value("restarts", -1), 0) << "its sibling was never touched";
  // The watch stream counts the restarts.
  int restarted = 0;
  const Json events = Get("/v1/events?since=0")["events"];
  for (const Json& e : events) restarted += e.value("type", "") == "ServiceReplicaRestarted";
  EXPECT_EQ(restarted, 3);
  // Deleted: its replicas' jobs are cancelled and their tasks stopped.
  auto [code, body] = Call("DELETE", "/v1/services/web");
  ASSERT_EQ(code, 200) << body.dump();
  WaitState("web-r0", "cancelled");
  EXPECT_EQ(Call("GET", "/v1/services/web").first, 404);
}

TEST_F(ServicesE2eTest, ARollingUpdateReplacesReplicasOneAtATimeAndRollsBack) {
  StartTwoNodes();
  Create("api", R"("replicas": 2)");
  ASSERT_TRUE(WaitFor(20, [&] { return Running("api") == 2; })) << Service("api").dump();
  auto [code, reply] = Call("POST", "/v1/services/api/update", R"({"env": {"VERSION": "2"}})");
  ASSERT_EQ(code, 200) << reply.dump();
  EXPECT_EQ(reply.value("revision", 0), 2);
  // Until every replica runs revision 2, at least one replica keeps running (max_unavailable 1).
  int least = 2;
  ASSERT_TRUE(WaitFor(30, [&] {
    Json s = Service("api");
    least = std::min(least, s.value("running", 0));
    return s.value("updated", 0) == 2 && s.value("running", 0) == 2;
  })) << Service("api").dump();
  EXPECT_GE(least, 1) << "capacity kept during the update";
  for (const Json& r : Json(Service("api")["replicas"])) {
    EXPECT_EQ(r.value("revision", 0), 2);
    EXPECT_EQ(EnvLines(WaitLog(r.value("name", ""), "VERSION="))["VERSION"], "2") << r.dump();
  }
  // Rollback: revision 3 runs revision 1's template.
  auto [rc, rolled] = Call("POST", "/v1/services/api/rollback");
  ASSERT_EQ(rc, 200) << rolled.dump();
  ASSERT_TRUE(WaitFor(30, [&] {
    Json s = Service("api");
    return s.value("revision", 0) == 3 && s.value("updated", 0) == 2 && s.value("running", 0) == 2;
  })) << Service("api").dump();
  for (const Json& r : Json(Service("api")["replicas"])) {
    EXPECT_EQ(EnvLines(WaitLog(r.value("name", ""), "VERSION="))["VERSION"], "1") << r.dump();
  }
  // An update that changes nothing is refused, naming why.
  auto [same, why] = Call("POST", "/v1/services/api/update", R"({"env": {"VERSION": "1"}})");
  EXPECT_EQ(same, 400) << why.dump();
}

TEST_F(ServicesE2eTest, ADoubledLoadAddsAReplicaWithinSecondsAndTheCountFallsBackLater) {
  StartTwoNodes();
  WriteLoad("gpu-a", 10);
  WriteLoad("gpu-b", 10);
  Create("chat", R"("min_replicas": 1, "max_replicas": 3, "replicas": 1, "autoscale": {"target": 10, "stable_window": "10s", "panic_window": "2s", "scale_down_delay": "4s"})");
  ASSERT_TRUE(WaitFor(20, [&] { return Running("chat") == 1; })) << Service("chat").dump();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // 10 in flight at target 10: one replica
  EXPECT_EQ(Service("chat").value("desired", 0), 1) << Service("chat").dump();
  // Doubled: 20 in flight asks for two replicas; the second runs within 10 s.
  auto t0 = std::chrono::steady_clock::now();
  WriteLoad("gpu-a", 20);
  WriteLoad("gpu-b", 20);
  ASSERT_TRUE(WaitFor(15, [&] { return Running("chat") >= 2; })) << Service("chat").dump();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 10.0) << "a doubled load answered by a new replica within 10 s";
  Json scaled = Service("chat")["scaled"];
  EXPECT_NE(scaled.value("why", "").find("load"), std::string::npos) << scaled.dump();
  // Every replica now reports 20: more are wanted, never beyond max_replicas.
  ASSERT_TRUE(WaitFor(15, [&] { return Service("chat").value("desired", 0) == 3; })) << Service("chat").dump();
  // The load gone: back down to min_replicas, after the stable window and the delay.
  WriteLoad("gpu-a", 0);
  WriteLoad("gpu-b", 0);
  ASSERT_TRUE(WaitFor(40, [&] { return Service("chat").value("desired", 0) == 1 && Running("chat") == 1; })) << Service("chat").dump();
  // The watch stream hears of a batch once it is journaled, which a read of the state may
  // overtake: the scale-down's event is waited for, not expected at once.
  int scalings = 0;
  EXPECT_TRUE(WaitFor(10, [&] {
    scalings = 0;
    const Json events = Get("/v1/events?since=0")["events"];
    for (const Json& e : events) scalings += e.value("type", "") == "ServiceScaled";
    return scalings >= 3;
  })) << scalings << " ServiceScaled events: up, up and down expected";
}

}  // namespace
}  // namespace allot
