// The service reconciler (scheduler/service_reconciler.h) and the service events: replicas
// added, restarted after their back-off, scaled down, replaced one at a time by a rolling
// update, and cancelled with the service; all through the state, as allotd and the simulator run it.
#include <gtest/gtest.h>

#include "scheduler/service_reconciler.h"
#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

class ServiceReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.AddNodes("n", 3, "z1", "r1", 64, 512, testing::kH100, 8);
    c_.Tenant("t");
  }
  ServiceId Create(int replicas, std::vector<std::string> command = {"serve"}, int32_t surge = 0, int32_t unavailable = 1) {
    ServiceSpec s;
    s.name = "web";
    s.tenant = c_.state.tenants().Find("t");
    s.replica = JobBuilder("tpl").Tenant("t").Gpus(1).Build(c_.state);
    s.replica.command = std::move(command);
    s.replicas = replicas;
    s.max_surge = surge;
    s.max_unavailable = unavailable;
    c_.Apply(ServiceCreated{s}, now_);
    return c_.state.FindService(s.tenant, "web");
  }
  // One round as allotd runs it: reconcile, apply, one pass.
  void Round() {
    for (EventBody& b : ReconcileServices(c_.state, now_).events) c_.Apply(std::move(b), now_);
    c_.RunPass(now_);
  }
  const Service& Svc(ServiceId id) const { return c_.state.service(id); }
  std::vector<std::string> Names(ServiceId id) const {
    std::vector<std::string> out;
    for (const ServiceReplica& r : Svc(id).replicas) out.push_back(c_.state.job(r.job).spec.name);
    return out;
  }
  Cluster c_;
  int64_t now_ = 1000;
};

TEST_F(ServiceReconcilerTest, AddsNamedReplicasWithPortsAndSpreadsThemOverNodes) {
  ServiceId id = Create(3);
  Round();
  ASSERT_EQ(Names(id), (std::vector<std::string>{"web-r0", "web-r1", "web-r2"}));
  std::set<uint32_t> nodes;
  for (const ServiceReplica& r : Svc(id).replicas) {
    const Job& j = c_.state.job(r.job);
    EXPECT_EQ(j.state, JobState::kRunning);
    EXPECT_EQ(j.spec.kind, JobKind::kInference);
    nodes.insert(j.placement[0].node.value());
    // ALLOT_PORT is the replica's port, from the documented range, one each.
    EXPECT_EQ(r.port, kServicePortFirst + r.slot);
    bool has_port = false;
    for (const auto& [k, v] : j.spec.environment.env) has_port |= k == "ALLOT_PORT" && v == std::to_string(r.port);
    EXPECT_TRUE(has_port);
  }
  EXPECT_EQ(nodes.size(), 3u) << "spread: node (the default) keeps replicas on distinct nodes while it can";
  // Nothing more to do: a second round changes nothing.
  EXPECT_TRUE(ReconcileServices(c_.state, now_).events.empty());
}

TEST_F(ServiceReconcilerTest, RestartsAFailedReplicaAtOnceThenAfterADoublingBackOff) {
  ServiceId id = Create(1);
  Round();
  JobId r0 = Svc(id).replicas[0].job;
  // 1st failure: restarted in the same round (back-off 0).
  c_.Apply(JobFailed{r0, "exit code 1"}, now_);
  Round();
  EXPECT_EQ(c_.state.job(r0).state, JobState::kRunning);
  EXPECT_EQ(Svc(id).replicas[0].restarts, 1);
  EXPECT_EQ(Svc(id).replicas[0].last_exit, "exit code 1");
  // 2nd failure soon after: 1 s; 3rd: 2 s.
  for (int64_t wait : {1000, 2000}) {
    now_ += 5000;
    c_.Apply(JobFailed{r0, "exit code 1"}, now_);
    ServiceActions a = ReconcileServices(c_.state, now_);
    EXPECT_TRUE(a.events.empty());
    EXPECT_EQ(a.wake_ms, now_ + wait);
    EXPECT_EQ(RestartAtMs(c_.state.job(r0), Svc(id).replicas[0]), now_ + wait);
    EXPECT_STREQ(ReplicaStateName(c_.state.job(r0)), "crash-loop");
    now_ += wait - 1;
    EXPECT_TRUE(ReconcileServices(c_.state, now_).events.empty()) << "one millisecond early";
    now_ += 1;
    Round();
    EXPECT_EQ(c_.state.job(r0).state, JobState::kRunning);
  }
  EXPECT_EQ(Svc(id).replicas[0].restarts, 3);
  EXPECT_EQ(c_.state.job(r0).ended_runs.size(), 3u) << "each failed run stays counted";
  // A run that lasted past the reset is healthy: its failure restarts at once again.
  now_ += kBackoffResetMs;
  c_.Apply(JobFailed{r0, "exit code 2"}, now_);
  Round();
  EXPECT_EQ(c_.state.job(r0).state, JobState::kRunning);
  EXPECT_EQ(Svc(id).replicas[0].crashes, 1);
}

TEST(RestartBackoff, DoublesFromOneSecondAndStopsAtFiveMinutes) {
  EXPECT_EQ(RestartBackoffMs(0), 0);
  EXPECT_EQ(RestartBackoffMs(1), 1000);
  EXPECT_EQ(RestartBackoffMs(2), 2000);
  EXPECT_EQ(RestartBackoffMs(9), 256000);
  EXPECT_EQ(RestartBackoffMs(10), kBackoffMaxMs);  // 512 s capped
  EXPECT_EQ(RestartBackoffMs(1000), kBackoffMaxMs);
}

TEST_F(ServiceReconcilerTest, ScalingDownRemovesTheHighestSlotsAndCancelsTheirJobs) {
  ServiceId id = Create(3);
  Round();
  JobId r2 = Svc(id).replicas[2].job;
  c_.Apply(ServiceScaled{id, 1, "test"}, now_);
  Round();
  EXPECT_EQ(Names(id), (std::vector<std::string>{"web-r0"}));
  EXPECT_EQ(c_.state.job(r2).state, JobState::kCancelled);
  // Up again: new slots, never a reused name.
  c_.Apply(ServiceScaled{id, 2, "test"}, now_);
  Round();
  EXPECT_EQ(Names(id), (std::vector<std::string>{"web-r0", "web-r3"}));
}

TEST_F(ServiceReconcilerTest, RollingUpdateReplacesOneReplicaAtATimeKeepingTheOthersRunning) {
  ServiceId id = Create(3);
  Round();
  JobSpec next = Svc(id).current();
  next.command = {"serve", "--v2"};
  c_.Apply(ServiceUpdated{id, next, "test"}, now_);
  EXPECT_EQ(Svc(id).revision, 2);
  // max_unavailable 1, no surge: each round takes one old replica down and starts its successor;
  // no old one goes until the new one runs (the pass runs it in the same round here).
  for (int round = 1; round <= 3; ++round) {
    Round();
    int running = 0, updated = 0;
    for (const ServiceReplica& r : Svc(id).replicas) {
      running += c_.state.job(r.job).state == JobState::kRunning;
      updated += r.revision == 2;
    }
    EXPECT_EQ(updated, round);
    EXPECT_GE(running, 2) << "round " << round << ": at most one unavailable";
    EXPECT_EQ(Svc(id).replicas.size(), 3u);
  }
  for (const ServiceReplica& r : Svc(id).replicas) EXPECT_EQ(c_.state.job(r.job).spec.command.back(), "--v2");
  // Rollback: a third revision with the first template, rolled out the same way.
  c_.Apply(ServiceUpdated{id, Svc(id).templates[0], "rollback"}, now_);
  for (int round = 0; round < 3; ++round) Round();
  for (const ServiceReplica& r : Svc(id).replicas) {
    EXPECT_EQ(r.revision, 3);
    EXPECT_EQ(c_.state.job(r.job).spec.command, (std::vector<std::string>{"serve"}));
  }
}

TEST_F(ServiceReconcilerTest, SurgeStartsTheNewReplicaBeforeTheOldOneGoes) {
  ServiceId id = Create(2, {"serve"}, /*surge=*/1, /*unavailable=*/0);
  Round();
  JobSpec next = Svc(id).current();
  next.command = {"serve", "--v2"};
  c_.Apply(ServiceUpdated{id, next, "test"}, now_);
  // The surge replica is added but not yet placed: no old replica may go.
  for (EventBody& b : ReconcileServices(c_.state, now_).events) c_.Apply(std::move(b), now_);
  EXPECT_EQ(Svc(id).replicas.size(), 3u);
  EXPECT_TRUE(ReconcileServices(c_.state, now_).events.empty()) << "nothing goes while the new one starts";
  c_.RunPass(now_);
  Round();  // the new one runs: one old one goes, its successor comes
  int old = 0;
  for (const ServiceReplica& r : Svc(id).replicas) old += r.revision == 1;
  EXPECT_EQ(old, 1);
}

TEST_F(ServiceReconcilerTest, AnUpdateMustKeepTheReplicasShape) {
  ServiceId id = Create(1);
  JobSpec next = Svc(id).current();
  next.groups[0].gpu = 2 * kGpuUnit;
  Status s = c_.state.apply({now_, ServiceUpdated{id, next, "test"}});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("GPU shape"), std::string::npos) << s.message();
  EXPECT_EQ(Svc(id).revision, 1);
}

TEST_F(ServiceReconcilerTest, DeletingTheServiceCancelsEveryReplicaAndANewOneTakesFreshNames) {
  ServiceId id = Create(2);
  Round();
  JobId r0 = Svc(id).replicas[0].job;
  c_.Apply(ServiceDeleted{id}, now_);
  EXPECT_EQ(c_.state.job(r0).state, JobState::kCancelled);
  EXPECT_FALSE(c_.state.ServiceOf(r0).valid());
  EXPECT_FALSE(c_.state.FindService(c_.state.tenants().Find("t"), "web").valid());
  ServiceId again = Create(1);
  Round();
  EXPECT_NE(again, id);
  EXPECT_EQ(Names(again), (std::vector<std::string>{"web-r0.1"}));
}

TEST_F(ServiceReconcilerTest, AReplicaCancelledBySomeoneIsReplaced) {
  ServiceId id = Create(1);
  Round();
  c_.Apply(JobCancelled{Svc(id).replicas[0].job}, now_);
  Round();
  EXPECT_EQ(Names(id), (std::vector<std::string>{"web-r1"}));
  EXPECT_EQ(c_.StateOf("web-r1"), JobState::kRunning);
}

TEST_F(ServiceReconcilerTest, ServicesSurviveASnapshot) {
  ServiceId id = Create(2);
  Round();
  c_.Apply(JobFailed{Svc(id).replicas[1].job, "exit code 9"}, now_);
  Round();
  std::string bytes = EncodeSnapshot(c_.state);
  ClusterState restored;
  ASSERT_TRUE(RestoreSnapshot(bytes, restored).ok());
  ASSERT_EQ(restored.services().size(), 1u);
  EXPECT_EQ(restored.services()[0], Svc(id));
  EXPECT_EQ(restored.ServiceOf(Svc(id).replicas[1].job), id);
  EXPECT_EQ(EncodeSnapshot(restored), bytes);
}

TEST_F(ServiceReconcilerTest, BadSpecsAreRefusedNamingTheField) {
  ServiceSpec s;
  s.name = "web";
  s.tenant = c_.state.tenants().Find("t");
  s.replica = JobBuilder("tpl").Tenant("t").Gpus(1).Build(c_.state);
  s.replicas = -1;
  Status bad = c_.state.apply({0, ServiceCreated{s}});
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("replicas: -1"), std::string::npos) << bad.message();
  s.replicas = 1;
  s.max_replicas = 4;  // without a target
  bad = c_.state.apply({0, ServiceCreated{s}});
  EXPECT_NE(bad.message().find("autoscale"), std::string::npos) << bad.message();
  s.max_replicas = 0;
  s.name = std::string(49, 'x');
  bad = c_.state.apply({0, ServiceCreated{s}});
  EXPECT_NE(bad.message().find("1 to 48 characters"), std::string::npos) << bad.message();
  EXPECT_TRUE(c_.state.services().empty());
}

}  // namespace
}  // namespace allot
