// Settled groups (docs/architecture.md, "The pass"): a pass that settles a failed group's jobs
// at once, in batches, plans exactly what a pass that tries every job one by one plans. A gate
// turns settling off (a gate may hold any job for its own reasons), so a gate that holds
// nothing gives the job-by-job pass to compare with, on random states.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "scheduler/scheduler.h"
#include "state/event_codec.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

// Holds nothing, warns of nothing: the pass then tries every job for itself.
class OpenGate : public PassGate {
 public:
  std::string Hold(const Job&, AdmissionClass) override { return ""; }
  void Placed(const Job&, AdmissionClass) override {}
  std::vector<EventBody> Notices() override { return {}; }
};

class OpenGateFactory : public PassGateFactory {
 public:
  std::unique_ptr<PassGate> Open(const ClusterState&, int64_t) const override { return std::make_unique<OpenGate>(); }
};

// The plan's events, as bytes, in order.
std::string EventBytes(const Plan& plan) {
  std::string out;
  for (const Event& e : plan.ToEvents()) out += EncodeEvent(e) + '|';
  return out;
}

// Each pending job's reason, by job. Batches settle a leaf tenant's settled runs one run after
// another, so the order of Plan::pending may differ from the job-by-job pass's; nothing reads
// that order (the daemon and the simulator keep reasons by job).
std::map<uint32_t, std::string> Reasons(const Plan& plan) {
  std::map<uint32_t, std::string> out;
  for (const PendingReason& p : plan.pending) EXPECT_TRUE(out.emplace(p.job.value(), plan.Why(p)).second) << "one reason per job";
  return out;
}

TEST(SettledGroupsTest, PlanAsTheJobByJobPassOnRandomStates) {
  int settled_passes = 0;  // passes where settling had something to settle
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    Cluster c;
    for (int r = 0; r < 3; ++r) c.AddNodes("n", 4, "z0", "r" + std::to_string(r), 96, 1024, "H100-80GB", 8);
    const char* gpu = "gpu/H100-80GB";
    // Two orgs of three teams: random guarantees and maxes, some unlimited.
    std::vector<std::string> teams;
    for (int o = 0; o < 2; ++o) {
      std::string org = "org" + std::to_string(o);
      const bool guaranteed = pick(2);
      if (guaranteed) {  // room for its teams' guarantees (at most 8 each)
        c.Tenant(org, {{gpu, std::to_string(24 + 8 * pick(3))}}, {{gpu, std::to_string(48 + 8 * pick(4))}});
      } else {
        c.Tenant(org);
      }
      for (int t = 0; t < 3; ++t) {
        std::string team = org + "/t" + std::to_string(t);
        switch (pick(3)) {
          case 0: c.Tenant(team); break;
          case 1:
            if (guaranteed) {
              c.Tenant(team, {{gpu, std::to_string(4 * pick(3))}});
              break;
            }
            [[fallthrough]];
          default: c.Tenant(team, {}, {{gpu, std::to_string(8 + 8 * pick(3))}}); break;
        }
        teams.push_back(team);
      }
    }
    SchedulerConfig open = c.config;
    open.gate = std::make_shared<OpenGateFactory>();
    int next = 0;
    for (int step = 0; step < 12; ++step) {
      const int64_t now = step * 60000;
      // Arrivals: few shapes and tenants, so groups hold many jobs.
      for (int i = pick(25); i > 0; --i) {
        JobBuilder b("j" + std::to_string(next++));
        const int shape = pick(5);
        b.Tenant(teams[pick(static_cast<int>(teams.size()))]).Gpus(shape == 4 ? 8 : 1 << shape).Cpus(4).MemGi(16);
        if (shape == 4) b.Tasks(2).Topology(Topology::kRack);
        b.Priority(pick(4) == 0 ? kPriorityHigh : kPriorityNormal).At(now).Duration(3600000).Grace(30000);
        c.Submit(b);
      }
      Plan settled = PlanPass(c.state, now, c.config);
      Plan one_by_one = PlanPass(c.state, now, open);
      ASSERT_EQ(EventBytes(settled), EventBytes(one_by_one)) << "step " << step;
      ASSERT_EQ(Reasons(settled), Reasons(one_by_one)) << "step " << step;
      if (settled.pending.size() > settled.reasons.size()) ++settled_passes;
      c.RunPass(now);
      // Victims exit, some jobs end: the next pass starts from another state.
      for (JobId id : std::vector<JobId>(c.state.preempting().begin(), c.state.preempting().end())) {
        if (pick(2)) c.Apply(JobStopped{id, 0}, now + 1);
      }
      for (JobId id : std::vector<JobId>(c.state.active().begin(), c.state.active().end())) {
        if (c.state.job(id).state == JobState::kRunning && pick(6) == 0) c.Apply(JobFinished{id}, now + 2);
      }
    }
  }
  EXPECT_GT(settled_passes, 30) << "the random states must exercise settling (shared reasons)";
}

}  // namespace
}  // namespace allot
