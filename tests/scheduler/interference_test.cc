// The noisy-neighbour detector: it fires at the regression threshold and not below it, needs
// `onset_samples` consecutive bad samples with a risen neighbour, never blames a quiet neighbour,
// lifts a response only after the quiet period, and gives the same events for the same inputs.
#include "scheduler/interference.h"

#include <gtest/gtest.h>

#include "fleet/mig.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

constexpr int64_t kBeat = 1000;  // one heartbeat a second

class InterferenceTest : public ::testing::Test {
 protected:
  void SetUp() override { StartJobs(/*neighbour_checkpoint_ms=*/0); }
  void StartJobs(int64_t neighbour_checkpoint_ms) {
    NodeSpec mps{"mps-0", "z", "r", "", 64000, 512 * 1024, testing::kH100, 1};
    mps.sharing = Sharing::kMps;
    c_.Apply(NodeAdded{mps});
    c_.Tenant("serve");
    c_.Tenant("batch");
    victim_ = Share("api", "serve", JobKind::kInference);
    neighbour_ = Share("trainer", "batch", JobKind::kBatch, 40, neighbour_checkpoint_ms);
    c_.RunPass(100);
    ASSERT_EQ(c_.StateOf("api"), JobState::kRunning);
    ASSERT_EQ(c_.StateOf("trainer"), JobState::kRunning);
    node_ = c_.state.fleet().Find("mps-0");
  }

  JobId Share(const std::string& name, const std::string& tenant, JobKind kind, uint16_t percent = 40,
              int64_t checkpoint_ms = 0, int64_t submit_ms = 0) {
    JobSpec spec = JobBuilder(name).Tenant(tenant).Duration(3600000).Command({"run"}).At(submit_ms).Build(c_.state);
    spec.checkpoint_interval_ms = checkpoint_ms;
    spec.gpu_resource = c_.Res("gpu/H100-80GB");
    spec.kind = kind;
    TaskGroup g{1, 0, 1000, 1024};
    g.share = ShareKind::kMps;
    g.percent = percent;
    spec.groups = {g};
    JobId id = c_.state.next_job_id();
    c_.Apply(JobSubmitted{spec});
    return id;
  }

  // One heartbeat at `now`: the victim's p99 (ms; 0: none reported) and the neighbour's SM use.
  InterferenceOutcome Beat(int64_t now, double p99_ms, int32_t neighbour_sm) {
    GpuSamples g{0, {}};
    InterferenceSample v{victim_, 0, 0, 10, 5, std::nullopt};
    if (p99_ms > 0) v.p99_us = static_cast<int64_t>(p99_ms * 1000);
    g.tasks.push_back(v);
    g.tasks.push_back(InterferenceSample{neighbour_, 0, 0, neighbour_sm, 10, std::nullopt});
    return DetectInterference(c_.state, memory_, config_, node_, {g}, now);
  }
  // Five beats of 10 ms with a neighbour at 20% SM: the baselines. Returns the next beat's time.
  int64_t Learn() {
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(Beat(i * kBeat, 10, 20).events.empty());
    return 5 * kBeat;
  }
  // Baselines, then three bad beats with the neighbour risen, journaled: the neighbour is
  // throttled. Returns when.
  int64_t Throttled() {
    int64_t t = Learn();
    for (int i = 0; i < 3; ++i) Journal(Beat(t + i * kBeat, 30, 90), t + i * kBeat);
    EXPECT_EQ(c_.state.interference().size(), 1u);
    return t + 2 * kBeat;
  }
  // Applies the outcome's events to the state, as allotd journals them.
  void Journal(const InterferenceOutcome& o, int64_t now) {
    for (const EventBody& e : o.events) c_.Apply(e, now);
  }

  Cluster c_;
  InterferenceMemory memory_;
  InterferenceConfig config_;
  NodeId node_;
  JobId victim_, neighbour_;
};

TEST_F(InterferenceTest, ThrottlesTheNeighbourAtTheThirdConsecutiveBadSample) {
  int64_t t = Learn();
  // 15 ms is 1.5 × the 10 ms baseline: bad; the neighbour rose from 20% to 90% SM.
  EXPECT_TRUE(Beat(t, 15, 90).events.empty());
  EXPECT_TRUE(Beat(t + kBeat, 15, 90).events.empty());
  InterferenceOutcome o = Beat(t + 2 * kBeat, 15, 90);
  ASSERT_EQ(o.events.size(), 1u);
  const auto& acted = std::get<InterferenceActed>(o.events[0]);
  EXPECT_EQ(acted.response.victim, victim_);
  EXPECT_EQ(acted.response.neighbour, neighbour_);
  EXPECT_EQ(acted.response.percent, 20) << "half its 40% share";
  EXPECT_EQ(acted.response.neighbour_percent, 40);
  EXPECT_EQ(acted.response.baseline_p99_us, 10000);
  EXPECT_EQ(acted.response.p99_us, 15000);
  EXPECT_EQ(acted.response.neighbour_sm_percent, 90);
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].response, "throttle to 20%");
  Journal(o, t + 2 * kBeat);
  EXPECT_EQ(c_.state.ThrottleOf(node_, neighbour_, 0, 0), 20);
  EXPECT_TRUE(Beat(t + 3 * kBeat, 15, 90).events.empty()) << "already throttled: nothing more";
}

TEST_F(InterferenceTest, JustBelowTheThresholdNothingFires) {
  int64_t t = Learn();
  for (int i = 0; i < 20; ++i) {
    InterferenceOutcome o = Beat(t + i * kBeat, 14.999, 95);  // 1.4999 × baseline
    EXPECT_TRUE(o.events.empty() && o.findings.empty()) << i;
  }
}

TEST_F(InterferenceTest, ARegressionBesideAQuietNeighbourIsNotInterference) {
  int64_t t = Learn();
  for (int i = 0; i < 20; ++i) {
    InterferenceOutcome o = Beat(t + i * kBeat, 40, 25);  // 4 × baseline, but the neighbour stayed at ~20%
    EXPECT_TRUE(o.events.empty() && o.findings.empty()) << i;
  }
}

TEST_F(InterferenceTest, ANormalSampleBreaksTheStreak) {
  int64_t t = Learn();
  EXPECT_TRUE(Beat(t, 20, 90).events.empty());
  EXPECT_TRUE(Beat(t + kBeat, 20, 90).events.empty());
  EXPECT_TRUE(Beat(t + 2 * kBeat, 10, 90).events.empty()) << "normal: the streak starts again";
  EXPECT_TRUE(Beat(t + 3 * kBeat, 20, 90).events.empty());
  EXPECT_TRUE(Beat(t + 4 * kBeat, 20, 90).events.empty());
  EXPECT_EQ(Beat(t + 5 * kBeat, 20, 90).events.size(), 1u);
}

TEST_F(InterferenceTest, NoBaselineNoVerdict) {
  // The first reports only learn the baseline, however slow they are.
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(Beat(i * kBeat, 100, 95).events.empty()) << i;
}

TEST_F(InterferenceTest, TheThrottleIsLiftedOnlyAfterTheQuietPeriod) {
  config_.quiet_ms = 10 * kBeat;
  const int64_t acted = Throttled();
  // Normal again; a bad sample 4 s in restarts the quiet period from there.
  for (int64_t now = acted + kBeat; now < acted + 4 * kBeat; now += kBeat) EXPECT_TRUE(Beat(now, 10, 40).events.empty());
  EXPECT_TRUE(Beat(acted + 4 * kBeat, 30, 90).events.empty());
  for (int64_t now = acted + 5 * kBeat; now < acted + 14 * kBeat; now += kBeat) {
    EXPECT_TRUE(Beat(now, 10, 40).events.empty()) << now - acted;
  }
  InterferenceOutcome o = Beat(acted + 14 * kBeat, 10, 40);
  ASSERT_EQ(o.events.size(), 1u);
  const auto& cleared = std::get<InterferenceCleared>(o.events[0]);
  EXPECT_EQ(cleared.neighbour, neighbour_);
  EXPECT_EQ(cleared.why, "quiet for 10 s: the victim's p99 has stayed under 1.5x its baseline");
  Journal(o, acted + 14 * kBeat);
  EXPECT_EQ(c_.state.ThrottleOf(node_, neighbour_, 0, 0), 0);
}

TEST_F(InterferenceTest, ARegressionOutlastingTheThrottleIsReportedOnce) {
  config_.quiet_ms = 10 * kBeat;
  const int64_t acted = Throttled();
  int reported = 0;
  for (int64_t now = acted + kBeat; now <= acted + 20 * kBeat; now += kBeat) {
    InterferenceOutcome o = Beat(now, 30, 90);
    EXPECT_TRUE(o.events.empty()) << "still regressed: neither lifted nor acted on again";
    for (const InterferenceFinding& f : o.findings) {
      ++reported;
      EXPECT_GE(now - acted, 10 * kBeat) << "only after a quiet period's length under the throttle";
      EXPECT_EQ(f.response,
                "none: persists under the throttle to 20%; the neighbour cannot be moved: it does not checkpoint, so "
                "moving it would lose its work; the victim cannot be hardened: no MIG pool nor whole H100-80GB GPUs "
                "the victim's tenant may use");
    }
  }
  EXPECT_EQ(reported, 1);
}

TEST_F(InterferenceTest, ANeighbourOfTheVictimsOwnTenantIsReportedNotThrottled) {
  // Its tasks share the victim's MPS server: a throttle would slow the victim too.
  JobId sibling = Share("batch-of-serve", "serve", JobKind::kBatch, 20);
  c_.RunPass(200);
  ASSERT_EQ(c_.StateOf("batch-of-serve"), JobState::kRunning);
  auto beat = [&](int64_t now, double p99_ms, int32_t sibling_sm) {
    GpuSamples g{0, {InterferenceSample{victim_, 0, 0, 10, 5, static_cast<int64_t>(p99_ms * 1000)},
                     InterferenceSample{neighbour_, 0, 0, 20, 10, std::nullopt},
                     InterferenceSample{sibling, 0, 0, sibling_sm, 10, std::nullopt}}};
    return DetectInterference(c_.state, memory_, config_, node_, {g}, now);
  };
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(beat(i * kBeat, 10, 20).events.empty());
  std::vector<InterferenceFinding> findings;
  for (int i = 5; i < 15; ++i) {
    InterferenceOutcome o = beat(i * kBeat, 30, 90);
    EXPECT_TRUE(o.events.empty()) << i;
    findings.insert(findings.end(), o.findings.begin(), o.findings.end());
  }
  ASSERT_EQ(findings.size(), 1u) << "one finding at the onset";
  EXPECT_EQ(findings[0].neighbour, sibling);
  EXPECT_EQ(findings[0].response,
            "none: the neighbour is of the victim's tenant, whose tasks share one MPS server (a throttle would slow "
            "both); the neighbour cannot be moved: it does not checkpoint, so moving it would lose its work; the victim "
            "cannot be hardened: no MIG pool nor whole H100-80GB GPUs the victim's tenant may use");
}

TEST_F(InterferenceTest, AThrottleIsLiftedAtOnceWhenTheNeighbourEnds) {
  const int64_t acted = Throttled();
  c_.Apply(JobFinished{neighbour_}, acted + kBeat);
  InterferenceOutcome o = Beat(acted + 2 * kBeat, 30, 90);
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(std::get<InterferenceCleared>(o.events[0]).why, "the neighbour no longer runs on this GPU");
}

TEST_F(InterferenceTest, SamplesOfTasksNotRunningThereAreIgnored) {
  int64_t t = Learn();
  for (int i = 0; i < 5; ++i) {
    GpuSamples g{0, {InterferenceSample{victim_, 0, 0, 10, 5, 40000},
                     InterferenceSample{neighbour_, 0, 7, 99, 99, std::nullopt}}};  // run 7: not the one running
    EXPECT_TRUE(DetectInterference(c_.state, memory_, config_, node_, {g}, t + i * kBeat).events.empty());
  }
  GpuSamples other_gpu{3, {InterferenceSample{victim_, 0, 0, 10, 5, 40000}}};
  EXPECT_TRUE(DetectInterference(c_.state, memory_, config_, node_, {other_gpu}, t + 9 * kBeat).events.empty());
}

TEST_F(InterferenceTest, TheSameSamplesGiveTheSameEvents) {
  std::vector<EventBody> first, second;
  for (int round = 0; round < 2; ++round) {
    InterferenceMemory fresh;
    memory_ = fresh;
    std::vector<EventBody>& out = round == 0 ? first : second;
    for (int i = 0; i < 12; ++i) {
      InterferenceOutcome o = Beat(i * kBeat, i < 5 ? 10 : 25, i < 5 ? 20 : 80);
      out.insert(out.end(), o.events.begin(), o.events.end());
    }
  }
  ASSERT_FALSE(first.empty());  // not journaled here: each bad beat from the onset plans it again
  EXPECT_EQ(first, second);
}

// Moves and hardenings: a fixture whose neighbour checkpoints, and a second MPS node (and, for
// hardening, a MIG node and an exclusive node) the scheduler can use instead.
class InterferenceEscalationTest : public InterferenceTest {
 protected:
  void SetUp() override { StartJobs(/*neighbour_checkpoint_ms=*/600000); }
  void AddNode(const std::string& name, Sharing sharing) {
    NodeSpec n{name, "z", "r", "", 64000, 512 * 1024, testing::kH100, 1};
    n.sharing = sharing;
    c_.Apply(NodeAdded{n});
  }
  // Bad beats until a response is planned; journals it. Returns when.
  int64_t ActedAfter(int64_t t, InterferenceAction want) {
    for (int i = 0; i < 40; ++i, t += kBeat) {
      InterferenceOutcome o = Beat(t, 30, 90);
      Journal(o, t);
      for (const EventBody& e : o.events) {
        if (const auto* a = std::get_if<InterferenceActed>(&e); a && a->response.action == want) return t;
      }
    }
    ADD_FAILURE() << "no " << InterferenceActionName(want) << " within 40 beats";
    return t;
  }
};

TEST_F(InterferenceEscalationTest, ARegressionOutlastingTheThrottleMovesTheNeighbourOffTheGpu) {
  config_.quiet_ms = 10 * kBeat;
  const int64_t throttled = Throttled();
  const int64_t moved = ActedAfter(throttled + kBeat, InterferenceAction::kMove);
  EXPECT_GE(moved - throttled, 10 * kBeat) << "only after a quiet period's length under the throttle";
  const Job& n = c_.state.job(neighbour_);
  EXPECT_EQ(n.state, JobState::kPreempting) << "signalled to checkpoint";
  EXPECT_EQ(n.preempt_kind, PreemptKind::kInterference);
  EXPECT_EQ(n.preempt_deadline_ms, moved + n.spec.grace_ms);
  // Still there within its grace, still slow: nothing more (the victim is not hardened too).
  EXPECT_TRUE(Beat(moved + kBeat, 30, 90).events.empty());

  // It exits at its checkpoint and is requeued. The only GPU with room is the one it left: it
  // waits, kept off it, and a job of the same shape is not held back by that.
  c_.Apply(JobStopped{neighbour_, 600000}, moved + 2 * kBeat);
  JobId same = Share("same-shape", "batch", JobKind::kBatch, 40, 600000, moved + 3 * kBeat);  // queued after it
  c_.RunPass(moved + 3 * kBeat);
  EXPECT_EQ(c_.StateOf("trainer"), JobState::kPending);
  EXPECT_EQ(c_.StateOf("same-shape"), JobState::kRunning) << "the shape still fits there";
  c_.Apply(JobCancelled{same}, moved + 4 * kBeat);
  // The throttle goes with the neighbour at once; the move stays while the victim recovers.
  InterferenceOutcome lifted = Beat(moved + 5 * kBeat, 10, 0);
  ASSERT_EQ(lifted.events.size(), 1u);
  EXPECT_EQ(std::get<InterferenceCleared>(lifted.events[0]).action, InterferenceAction::kThrottle);
  Journal(lifted, moved + 5 * kBeat);
  // Another MPS node: the neighbour goes there, not back beside the victim.
  AddNode("mps-1", Sharing::kMps);
  c_.RunPass(moved + 6 * kBeat);
  ASSERT_EQ(c_.StateOf("trainer"), JobState::kRunning);
  EXPECT_EQ(c_.state.job(neighbour_).placement[0].node, c_.state.fleet().Find("mps-1"));
  EXPECT_EQ(c_.state.job(neighbour_).saved_work_ms, 600000) << "its checkpoint kept";
  // Quiet for the quiet period: the move is lifted.
  int64_t t = moved + 7 * kBeat;
  std::vector<InterferenceCleared> cleared;
  for (; t < moved + 30 * kBeat && cleared.empty(); t += kBeat) {
    GpuSamples g{0, {InterferenceSample{victim_, 0, 0, 10, 5, 10000}}};
    for (const EventBody& e : DetectInterference(c_.state, memory_, config_, node_, {g}, t).events) {
      cleared.push_back(std::get<InterferenceCleared>(e));
    }
  }
  ASSERT_EQ(cleared.size(), 1u);
  EXPECT_EQ(cleared[0].action, InterferenceAction::kMove);
  EXPECT_EQ(cleared[0].why.substr(0, 9), "quiet for");
}

TEST_F(InterferenceEscalationTest, AMovedNeighbourWaitsRatherThanReturnUntilTheMoveIsLifted) {
  config_.quiet_ms = 10 * kBeat;
  const int64_t moved = ActedAfter(ActedAfter(Learn(), InterferenceAction::kThrottle) + kBeat, InterferenceAction::kMove);
  c_.Apply(JobStopped{neighbour_, 0}, moved + kBeat);
  c_.RunPass(moved + 2 * kBeat);
  EXPECT_EQ(c_.StateOf("trainer"), JobState::kPending);
  std::vector<EventBody> lifts;
  for (int64_t t = moved + 3 * kBeat; t < moved + 20 * kBeat; t += kBeat) {
    GpuSamples g{0, {InterferenceSample{victim_, 0, 0, 10, 5, 10000}}};
    InterferenceOutcome o = DetectInterference(c_.state, memory_, config_, node_, {g}, t);
    lifts.insert(lifts.end(), o.events.begin(), o.events.end());
    Journal(o, t);
  }
  ASSERT_FALSE(lifts.empty());
  EXPECT_TRUE(c_.state.interference().empty());
  c_.RunPass(moved + 21 * kBeat);
  EXPECT_EQ(c_.StateOf("trainer"), JobState::kRunning) << "lifted: the GPU is open to it again";
}

TEST_F(InterferenceEscalationTest, ANeighbourThatCannotCheckpointHardensTheVictimToAMigInstance) {
  JobId stubborn = Share("stubborn", "batch", JobKind::kBatch, 20);  // no checkpoints
  c_.Apply(JobCancelled{neighbour_}, 150);
  c_.RunPass(200);
  ASSERT_EQ(c_.StateOf("stubborn"), JobState::kRunning);
  neighbour_ = stubborn;
  AddNode("mig-0", Sharing::kMig);
  AddNode("whole-0", Sharing::kExclusive);
  config_.quiet_ms = 10 * kBeat;
  const int64_t throttled = ActedAfter(Learn(), InterferenceAction::kThrottle);
  const int64_t hardened = ActedAfter(throttled + kBeat, InterferenceAction::kHarden);
  const InterferenceResponse* h = c_.state.HardeningOf(victim_);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->hardened.share, ShareKind::kMig);
  EXPECT_EQ(FindMigGeometry("H100-80GB")->profiles[h->hardened.mig_profile].name, "3g.40gb")
      << "the smallest covering 40% of the SMs and 32 GiB";
  const Job& v = c_.state.job(victim_);
  EXPECT_EQ(v.state, JobState::kPreempting);
  EXPECT_EQ(v.spec.groups[0].share, ShareKind::kMps) << "its share changes only when it is requeued";
  c_.Apply(JobStopped{victim_, 0}, hardened + kBeat);
  EXPECT_EQ(c_.state.job(victim_).spec.groups[0].share, ShareKind::kMig);
  EXPECT_EQ(c_.state.job(victim_).own_groups[0].share, ShareKind::kMps);
  c_.RunPass(hardened + 2 * kBeat);
  ASSERT_EQ(c_.StateOf("api"), JobState::kRunning);
  EXPECT_EQ(c_.state.job(victim_).placement[0].node, c_.state.fleet().Find("mig-0"));
  // The quiet period after: lifted; the victim keeps its instance while it runs, and takes its
  // own share again at its next start.
  InterferenceOutcome early = Beat(hardened + 5 * kBeat, 0, 90);
  ASSERT_EQ(early.events.size(), 1u) << "the throttle goes with the victim at once";
  EXPECT_EQ(std::get<InterferenceCleared>(early.events[0]).action, InterferenceAction::kThrottle);
  Journal(early, hardened + 5 * kBeat);
  InterferenceOutcome o = Beat(hardened + 11 * kBeat, 0, 90);
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(std::get<InterferenceCleared>(o.events[0]).action, InterferenceAction::kHarden);
  Journal(o, hardened + 11 * kBeat);
  EXPECT_EQ(c_.state.job(victim_).spec.groups[0].share, ShareKind::kMig) << "still running on it";
  c_.Apply(JobStopped{victim_, 0}, hardened + 12 * kBeat);
  EXPECT_EQ(c_.state.job(victim_).spec.groups[0].share, ShareKind::kMps);
  EXPECT_TRUE(c_.state.job(victim_).own_groups.empty());
  EXPECT_TRUE(c_.state.VerifyInvariants().ok());
}

// A hardening lifted while its victim waits in the queue changes the victim's shape there: the
// victim moves to the pending group of its own shape (the pass reads groups).
TEST_F(InterferenceEscalationTest, AHardeningLiftedWhileTheVictimWaitsMovesItsPendingGroup) {
  c_.Apply(JobCancelled{neighbour_}, 150);
  neighbour_ = Share("stubborn", "batch", JobKind::kBatch, 20);
  c_.RunPass(200);
  AddNode("whole-0", Sharing::kExclusive);
  config_.quiet_ms = 10 * kBeat;
  const int64_t hardened = ActedAfter(ActedAfter(Learn(), InterferenceAction::kThrottle) + kBeat, InterferenceAction::kHarden);
  c_.Apply(JobStopped{victim_, 0}, hardened + kBeat);
  ASSERT_EQ(c_.state.job(victim_).state, JobState::kPending);
  const uint32_t hardened_shape = c_.state.job(victim_).shape;
  InterferenceResponse h = *c_.state.HardeningOf(victim_);
  c_.Apply(InterferenceCleared{h.node, h.gpu, h.neighbour, h.neighbour_task, "quiet", InterferenceAction::kHarden},
           hardened + 2 * kBeat);
  const Job& v = c_.state.job(victim_);
  ASSERT_EQ(v.state, JobState::kPending);
  EXPECT_NE(v.shape, hardened_shape) << "its own share again";
  const auto& groups = c_.state.pending_groups();
  auto it = groups.find(ClusterState::PendingKeyOf(v));
  ASSERT_NE(it, groups.end());
  EXPECT_TRUE(std::any_of(it->second.begin(), it->second.end(), [&](const QueuedJob& q) { return q.id == victim_.value(); }));
  EXPECT_TRUE(c_.state.VerifyInvariants().ok()) << c_.state.VerifyInvariants().message();
}

TEST_F(InterferenceEscalationTest, WithoutMigTheVictimIsHardenedToAWholeGpu) {
  c_.Apply(JobCancelled{neighbour_}, 150);
  neighbour_ = Share("stubborn", "batch", JobKind::kBatch, 20);
  c_.RunPass(200);
  AddNode("whole-0", Sharing::kExclusive);
  config_.quiet_ms = 10 * kBeat;
  ActedAfter(ActedAfter(Learn(), InterferenceAction::kThrottle) + kBeat, InterferenceAction::kHarden);
  const InterferenceResponse* h = c_.state.HardeningOf(victim_);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->hardened.share, ShareKind::kWhole);
  EXPECT_EQ(h->hardened.gpu, kGpuUnit);
}

TEST_F(InterferenceEscalationTest, TheStateRefusesAHardeningThatDoesNotFitTheVictim) {
  InterferenceResponse r;
  r.node = node_;
  r.victim = victim_;
  r.neighbour = neighbour_;
  r.action = InterferenceAction::kHarden;
  r.victim_group = 0;
  r.hardened = TaskGroup{2, kGpuUnit, 1000, 1024};  // two tasks for a one-task group
  Status s = c_.state.apply({1000, InterferenceActed{r, ""}});
  EXPECT_EQ(s.message(), "interference response: hardened.count 2: expected the victim group's count, CPU and memory (1 tasks)");
  r.hardened = TaskGroup{1, kGpuUnit / 2, 1000, 1024};
  EXPECT_EQ(c_.state.apply({1000, InterferenceActed{r, ""}}).message(),
            "interference response: hardened.gpu 10500: expected 21000 (one whole GPU)");
  r.victim_group = 3;
  EXPECT_EQ(c_.state.apply({1000, InterferenceActed{r, ""}}).message(),
            "interference response: victim_group 3: expected 0 to 0");
  EXPECT_TRUE(c_.state.interference().empty());
  EXPECT_EQ(c_.state.job(victim_).state, JobState::kRunning) << "nothing changed";
}

}  // namespace
}  // namespace allot
