// State snapshots: a restored state encodes to the very bytes it came from, goes on from there
// exactly as the original does (same events apply, same end state, same scheduling plan), keeps
// what history left behind (tenant tombstones and their ids, revoked tokens, the audit chain,
// MIG layouts and their ready times, MPS shares, preemptions under way, the reservation), and
// damaged bytes are refused with the reason.
#include "state/snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "scheduler/scheduler.h"
#include "spec/scenario.h"
#include "sim/simulator.h"
#include "state/codec_fields.h"
#include "state/event_codec.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

// The plan's events and pending reasons, as bytes: equal plans give equal strings.
std::string PlanBytes(const ClusterState& state, int64_t now, const SchedulerConfig& config) {
  Plan plan = PlanPass(state, now, config);
  std::string out;
  for (const Event& e : plan.ToEvents()) out += EncodeEvent(e) + '|';
  for (const PendingReason& p : plan.pending) out += std::to_string(p.job.value()) + ':' + plan.Why(p) + '|';
  return out;
}

ClusterState Restored(const std::string& bytes) {
  ClusterState s;
  Status r = RestoreSnapshot(bytes, s);
  EXPECT_TRUE(r.ok()) << r.ToString();
  return s;
}

TEST(SnapshotTest, GoldenScenariosRestoredAtAnyPointGoOnExactlyAsTheFullReplay) {
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(std::string(ALLOT_SOURCE_DIR) + "/tests/scenarios")) {
    if (f.path().extension() == ".yaml") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 10u);
  // What the restored states held, over all scenarios and points: each kind must be met.
  int preempting = 0, reserved = 0, relaid = 0, mps_clients = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    auto scenario = LoadScenario(file.string());
    // A scenario the reader must refuse (its expected report says so) has nothing to restore.
    std::ifstream expected(std::filesystem::path(file).replace_extension(".expected.json"));
    std::string want((std::istreambuf_iterator<char>(expected)), std::istreambuf_iterator<char>());
    if (!scenario.has_value() && want.find("\"refused_contains\"") != std::string::npos) continue;
    ASSERT_TRUE(scenario.has_value()) << scenario.error().message();
    std::vector<Event> events;
    SimOptions options;
    options.on_event = [&](const Event& e) { events.push_back(e); };
    auto run = RunScenarioFile(file.string(), options, std::nullopt);
    ASSERT_TRUE(run.has_value()) << run.error().message();
    const std::string full = EncodeSnapshot(run->state);

    // Snapshots at eight points of the run (the first after the fleet and tenants exist).
    ClusterState state;
    size_t applied = 0;
    for (int part = 1; part <= 8; ++part) {
      size_t k = events.size() * part / 8;
      for (; applied < k; ++applied) ASSERT_TRUE(state.apply(events[applied]).ok());
      SCOPED_TRACE("after event " + std::to_string(k) + " of " + std::to_string(events.size()));
      std::string bytes = EncodeSnapshot(state);
      ClusterState restored = Restored(bytes);
      ASSERT_EQ(EncodeSnapshot(restored), bytes) << "a restored state encodes to the bytes it came from";
      preempting += !restored.preempting().empty();
      reserved += restored.reservation().has_value();
      for (const Node& n : restored.fleet().nodes()) {
        for (const GpuShareState& g : restored.fleet().shares(n.id)) {
          relaid += g.layout_ms >= 0;
          mps_clients += n.pool.sharing == Sharing::kMps && g.clients > 0;
        }
      }
      int64_t now = k > 0 ? events[k - 1].time_ms : 0;
      EXPECT_EQ(PlanBytes(restored, now, scenario->scheduler), PlanBytes(state, now, scenario->scheduler))
          << "the pass plans the same on the restored state";
      for (size_t i = k; i < events.size(); ++i) {
        Status s = restored.apply(events[i]);
        ASSERT_TRUE(s.ok()) << "event " << i << ": " << s.ToString();
      }
      Status inv = restored.VerifyInvariants();
      EXPECT_TRUE(inv.ok()) << inv.ToString();
      EXPECT_EQ(EncodeSnapshot(restored), full) << "restore + the tail == the whole run";
    }
  }
  EXPECT_GT(preempting, 0);
  EXPECT_GT(reserved, 0);
  EXPECT_GT(relaid, 0);
  EXPECT_GT(mps_clients, 0);
}

// One state with everything history leaves: a deleted tenant (its path since reused), a moved
// one with a running job, revoked tokens, audit records, a re-laid-out MIG GPU not ready yet,
// MIG and MPS shares held, a job being preempted, a backfill reservation.
class SnapshotStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.AddNodes("x-", 3, "z", "r", 64, 512, testing::kH100, 8);
    NodeSpec mig{"mig-0", "z", "r2", "", 64000, 512 * 1024, testing::kH100, 2};
    mig.sharing = Sharing::kMig;
    mig.mig_layout = {"3g.40gb", "3g.40gb"};
    c_.Apply(NodeAdded{mig});
    NodeSpec mps{"mps-0", "z2", "r", "", 64000, 512 * 1024, testing::kH100, 1};
    mps.sharing = Sharing::kMps;
    c_.Apply(NodeAdded{mps});
    c_.Apply(NodeConditionChanged{NodeId(1), NodeCondition::kCordoned});
    c_.Tenant("a", {{"gpu/H100-80GB", "4"}});
    c_.Tenant("a/team");
    c_.Tenant("b");
    TenantId gone = old_gone_ = c_.Tenant("gone");
    Token('1', "ann", Role::kOrgAdmin, c_.state.tenants().Find("a"));
    Token('2', "gus", Role::kMember, gone);
    Token('3', "bob", Role::kViewer, c_.state.tenants().Find("b"));
    c_.Apply(TokenRevoked{std::string(64, '3')});
    c_.Apply(TenantRemoved{"gone"});
    c_.Tenant("gone");  // the path again: a new id, the tombstone keeps the old one
    Audit("job.submit");
    Audit("tenant.delete");

    // GPU 1 of mig-0 re-laid out at 500, ready at 40000.
    const MigGeometry* geo = FindMigGeometry(testing::kH100);
    auto layout = LayoutFromNames(*geo, {"2g.20gb", "1g.10gb", "1g.10gb"});
    ASSERT_TRUE(layout.has_value()) << layout.error().message();
    c_.Apply(MigRelayout{c_.state.fleet().Find("mig-0"), 1, *layout, 40000}, 500);

    JobEnvironment env{"/srv/images/pytorch", {{"a/team", "data", "/data", false}, {"a", "models", "/models", true}},
                       {{"HF_HOME", "/data/hf"}}, 2048};
    c_.Submit(JobBuilder("big").Tenant("a/team").Gpus(8).Duration(3600000).Command({"train"}).Environment(env));
    SubmitShare("mig-job", "a", ShareKind::kMig, 0, geo->Find("3g.40gb"));
    SubmitShare("mps-job", "b", ShareKind::kMps, 30, 0);
    SubmitShare("mps-job2", "b", ShareKind::kWhole, 0, 0, kGpuUnit / 4);  // a bare 0.25 GPU
    c_.RunPass(1000);
    ASSERT_EQ(c_.StateOf("big"), JobState::kRunning);
    ASSERT_EQ(c_.StateOf("mig-job"), JobState::kRunning);
    ASSERT_EQ(c_.StateOf("mps-job"), JobState::kRunning);
    ASSERT_EQ(c_.StateOf("mps-job2"), JobState::kRunning);
    // mps-job throttled as mps-job2's noisy neighbour on mps-0's GPU.
    InterferenceResponse noisy{c_.state.fleet().Find("mps-0"), 0, c_.Id("mps-job2"), 0, c_.Id("mps-job"), 0, 0,
                               InterferenceAction::kThrottle, 15, 30, 10000, 25000, 90, 40, 0};
    c_.Apply(InterferenceActed{noisy, "test"}, 1200);
    c_.Submit(JobBuilder("victim").Tenant("b").Gpus(1).Priority(kPriorityLow).At(1500).Duration(600000));
    c_.RunPass(2000);
    ASSERT_EQ(c_.StateOf("victim"), JobState::kRunning);
    c_.Submit(JobBuilder("waiting").Tenant("a/team").Gpus(8).Tasks(2).At(2500).Duration(60000));
    c_.Apply(JobPreemptionStarted{c_.Id("victim"), PreemptKind::kPriority, c_.Id("waiting"), 62000}, 3000);
    c_.Apply(ReservationSet{c_.Id("waiting"), 3600000, {TaskPlacement{NodeId(0), 0xFF, 0, 0, {}}}}, 3000);
    c_.Apply(TenantMoved{"a/team", "b/team"}, 3500);
    c_.Submit(JobBuilder("done").Tenant("b").Gpus(1).At(3600).Duration(1));
    c_.Apply(JobCancelled{c_.Id("done")}, 3700);
    ASSERT_TRUE(c_.state.VerifyInvariants().ok());
  }

  void Token(char c, const std::string& name, Role role, TenantId scope) {
    c_.Apply(TokenIssued{TokenRecord{std::string(64, c), Principal{name, role, scope}, 0, false}});
  }
  void Audit(const std::string& action) {
    std::string hash(64, static_cast<char>('a' + c_.state.audit().size()));
    c_.Apply(AuditRecorded{AuditRecord{100, "ann", Role::kOrgAdmin, "a", action, "x", "ok", "r1",
                                       c_.state.last_audit_hash(), hash}});
  }
  void SubmitShare(const std::string& name, const std::string& tenant, ShareKind kind, uint16_t percent, int profile,
                   int64_t gpu = 0) {
    JobSpec spec = JobBuilder(name).Tenant(tenant).Duration(3600000).Build(c_.state);
    spec.gpu_resource = c_.Res("gpu/H100-80GB");
    TaskGroup g{1, gpu, 1000, 1024};
    g.share = kind;
    g.percent = percent;
    g.mig_profile = static_cast<uint8_t>(profile);
    spec.groups = {g};
    c_.Apply(JobSubmitted{spec});
  }

  Cluster c_;
  TenantId old_gone_;
};

TEST_F(SnapshotStateTest, ARestoredStateKeepsTombstonesTokensTheAuditChainSharesAndTheReservation) {
  std::string bytes = EncodeSnapshot(c_.state);
  EXPECT_EQ(EncodeSnapshot(c_.state), bytes) << "deterministic";
  ClusterState r = Restored(bytes);
  EXPECT_EQ(EncodeSnapshot(r), bytes);

  // Tenants: the tombstone keeps its id, the path's new tenant its own, the moved one its place.
  ASSERT_EQ(r.tenants().size(), c_.state.tenants().size());
  TenantId old_gone = old_gone_;
  EXPECT_TRUE(r.tenants().tenant(old_gone).removed);
  EXPECT_EQ(r.tenants().tenant(old_gone).path, "gone");
  EXPECT_EQ(r.tenants().Find("gone"), c_.state.tenants().Find("gone"));
  EXPECT_NE(r.tenants().Find("gone"), old_gone);
  EXPECT_EQ(r.tenants().Find("b/team"), c_.state.tenants().Find("b/team"));
  EXPECT_FALSE(r.tenants().Find("a/team").valid());
  ResourceId gpu = c_.Res("gpu/H100-80GB");
  EXPECT_EQ(r.tenants().tenant(r.tenants().Find("b")).usage[gpu],
            c_.state.tenants().tenant(c_.state.tenants().Find("b")).usage[gpu]) << "usage rebuilt with the move";
  // Tokens: revoked by hand and by deleting their scope; the live one still found.
  EXPECT_EQ(r.access().Find(std::string(64, '3')), nullptr);
  EXPECT_EQ(r.access().Find(std::string(64, '2')), nullptr);
  EXPECT_NE(r.access().Find(std::string(64, '1')), nullptr);
  EXPECT_EQ(r.access().tokens().size(), 3u);
  EXPECT_EQ(r.last_audit_hash(), c_.state.last_audit_hash());
  // Shares, MIG layouts and their times, what each node has free.
  NodeId mig = r.fleet().Find("mig-0"), mps = r.fleet().Find("mps-0");
  EXPECT_EQ(r.fleet().shares(mig), c_.state.fleet().shares(mig));
  EXPECT_EQ(r.fleet().shares(mig)[1].ready_ms, 40000);
  EXPECT_EQ(r.fleet().shares(mps), c_.state.fleet().shares(mps));
  EXPECT_EQ(r.fleet().shares(mps)[0].clients, 2);
  for (const Node& n : c_.state.fleet().nodes()) {
    EXPECT_EQ(r.fleet().node(n.id).free.gpu_mask, n.free.gpu_mask) << n.name;
    EXPECT_EQ(r.fleet().node(n.id).free.cpu, n.free.cpu) << n.name;
    EXPECT_EQ(r.fleet().node(n.id).condition, n.condition) << n.name;
  }
  // Jobs and their indexes.
  EXPECT_EQ(r.preempting(), c_.state.preempting());
  EXPECT_EQ(r.victims_of(c_.Id("waiting")), std::vector<JobId>{c_.Id("victim")});
  EXPECT_EQ(r.pending(), c_.state.pending());
  EXPECT_EQ(r.active_by_end(), c_.state.active_by_end());
  EXPECT_EQ(r.burstable_running(), c_.state.burstable_running());
  EXPECT_EQ(allot::testing::OnlyJobNamed(r, "mps-job2"), c_.Id("mps-job2"));
  EXPECT_EQ(r.job(c_.Id("big")).spec.environment, c_.state.job(c_.Id("big")).spec.environment);
  EXPECT_EQ(r.job(c_.Id("big")).spec.environment.mounts.size(), 2u);
  EXPECT_EQ(r.shape_count(), c_.state.shape_count());
  EXPECT_EQ(r.mps_shapes(), c_.state.mps_shapes());
  ASSERT_TRUE(r.reservation().has_value());
  EXPECT_EQ(r.reservation()->job, c_.Id("waiting"));
  EXPECT_EQ(r.reservation()->made_ms, 3000);
  ASSERT_EQ(r.interference().size(), 1u);
  EXPECT_EQ(r.interference(), c_.state.interference());
  EXPECT_EQ(r.interference()[0].since_ms, 1200);
}


TEST_F(SnapshotStateTest, ARestoredStatePlansAndGoesOnAsTheOriginal) {
  Cluster restored;
  restored.state = Restored(EncodeSnapshot(c_.state));
  for (int64_t now : {4000, 41000, 70000}) {
    EXPECT_EQ(PlanBytes(restored.state, now, restored.config), PlanBytes(c_.state, now, c_.config)) << now;
  }
  // The same history on both from here: the victim exits, a job arrives at a reused shape and
  // one at a new tenant, passes run, a tenant moves back.
  for (Cluster* c : {&c_, &restored}) {
    c->Apply(JobStopped{c->Id("victim"), 0}, 62000);
    c->Tenant("c");
    c->Submit(JobBuilder("later").Tenant("c").Gpus(8).At(63000).Duration(60000));
    c->Submit(JobBuilder("again").Tenant("b").Gpus(1).At(63000).Duration(60000));
    c->RunPass(64000);
    c->Apply(JobFinished{c->Id("mps-job")}, 65000);
    c->Apply(TenantMoved{"b/team", "a/team"}, 65000);
    c->RunPass(66000);
  }
  EXPECT_EQ(EncodeSnapshot(restored.state), EncodeSnapshot(c_.state));
}

// Format 17 ends each job's spec with the template it came from (name, tenant) and its vram (none:
// three zero bytes, as event format 14 writes it), and the body with the templates (none: one zero
// byte). Without them, the body is what an allotd of format 15 (or 16) wrote.
constexpr size_t kTemplateTail = 3;
std::string SpecBefore14(const JobSpec& spec) {
  std::string e = EncodeEvent({0, JobSubmitted{spec}}).substr(3);
  EXPECT_EQ(e.substr(e.size() - kTemplateTail), std::string(kTemplateTail, '\0')) << "no template, no vram";
  return e.substr(0, e.size() - kTemplateTail);
}
std::string Before17(const ClusterState& state) {
  std::string body = EncodeSnapshot(state).substr(17);
  EXPECT_EQ(body.back(), '\0') << "no templates";
  body.pop_back();
  for (const Job& j : state.jobs()) {
    std::string full = EncodeEvent({0, JobSubmitted{j.spec}}).substr(3);
    size_t at = body.find(full);
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos) body.erase(at + full.size() - kTemplateTail, kTemplateTail);
  }
  return body;
}

// Format 15 ends each job's spec with its array (no name, index -1, frame -1, count 0, parallel
// 0), retries (0) and dependencies (none): seven bytes for a job that is no element, as event
// format 12 writes it; and writes the job's retried failures (0: one byte) right after its spec.
constexpr size_t kArrayTail = 7;
std::string SpecBefore12(const JobSpec& spec) {
  std::string e = SpecBefore14(spec);
  EXPECT_EQ(e.substr(e.size() - kArrayTail), std::string("\0\1\1\0\0\0\0", kArrayTail)) << "no array, retries or dependencies";
  return e.substr(0, e.size() - kArrayTail);
}
// Without them, the body is what an allotd before arrays wrote.
std::string DropArrays(std::string body, const JobSpec& spec) {
  std::string full = SpecBefore14(spec);
  size_t at = body.find(full);
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return body;
  EXPECT_EQ(body[at + full.size()], '\0') << "no failures retried";
  body.erase(at + full.size(), 1);
  body.erase(at + full.size() - kArrayTail, kArrayTail);
  return body;
}

// Rewrites the header so forged bodies pass the length and checksum checks.
std::string Forge(std::string body) {
  std::string out(17, '\0');
  out[0] = static_cast<char>(kSnapshotFormat);
  for (int i = 0; i < 8; ++i) out[1 + i] = static_cast<char>(body.size() >> (8 * i));
  uint64_t sum = SnapshotChecksum(body);
  for (int i = 0; i < 8; ++i) out[9 + i] = static_cast<char>(sum >> (8 * i));
  return out + body;
}

// Format 12 writes each tenant's business hours after its max_reserved: none in these tests, an
// empty string, one zero byte after each second unlimited amount (see DropBookingCaps).
// Where the encoded unlimited amounts start in `body`, and how long each is.
std::pair<std::vector<size_t>, size_t> UnlimitedAmounts(const std::string& body) {
  codec::Writer w;
  w(Resources::Filled(kUnlimited));
  std::vector<size_t> at;
  for (size_t i = body.find(w.out); i != std::string::npos; i = body.find(w.out, i + w.out.size())) at.push_back(i);
  EXPECT_TRUE(!at.empty() && at.size() % 2 == 0) << at.size() << " unlimited amounts";
  return {at, w.out.size()};
}

// Format 14's last section, the hardened jobs' own task groups (none: one zero byte).
// The hardened jobs (format 14): none, one zero byte, the last section once the services
// (format 16) are dropped.
std::string DropHardened(std::string body) {
  EXPECT_EQ(body.back(), '\0') << "no hardened jobs (format 14)";
  body.pop_back();
  return body;
}

std::string DropBusinessHours(std::string body) {
  auto [at, size] = UnlimitedAmounts(body);
  for (size_t k = at.size(); k-- > 0;) {
    if (k % 2 == 0) continue;
    EXPECT_EQ(body[at[k] + size], '\0') << "no business hours";
    body.erase(at[k] + size, 1);
  }
  return body;
}

// Format 16's last section, the services (none: one zero byte): without it, the body is what an
// allotd before services wrote.
std::string DropServices(std::string body) {
  EXPECT_EQ(body.back(), '\0') << "no services (format 16)";
  body.pop_back();
  return body;
}

// Format 9 writes each tenant's max_reserved after its removed flag. Every tenant of these tests
// leaves both max and max_reserved unlimited, so the unlimited amounts come in pairs, max first:
// dropping every second one gives what an older allotd wrote.
// Also drops format 9's last section, the SSH keys (none: one zero byte).
// And format 12's business hours, which come after the max_reserved, and format 11's last section,
// the interference responses in force (none: one zero byte).
std::string DropBookingCaps(std::string body) {
  body = DropBusinessHours(DropHardened(DropServices(std::move(body))));
  EXPECT_EQ(body.back(), '\0') << "no interference responses (format 11)";
  body.pop_back();
  EXPECT_EQ(body.back(), '\0') << "no ssh keys";
  body.pop_back();
  auto [at, size] = UnlimitedAmounts(body);
  for (size_t k = at.size(); k-- > 0;) {
    if (k % 2 == 1) body.erase(at[k], size);
  }
  return body;
}

TEST_F(SnapshotStateTest, AFormatTwoSnapshotStillRestoresWithNoBillingState) {
  // No nodes and no jobs: format 3 also added a flag per node and a count per job.
  ClusterState s;
  TenantSpec t;
  t.path = "team";
  ASSERT_TRUE(s.apply({0, TenantUpserted{t}}).ok());
  // Format 3 appends the billing section: no budgets, no warnings, no ledger, no closed period
  // (four zero bytes here), format 4 the task reports, format 5 the floor changes and format 8
  // the reservations (none: one zero byte each). Without them, and marked 2, it is what an
  // older allotd wrote.
  std::string body = DropBookingCaps(Before17(s));
  ASSERT_EQ(body.substr(body.size() - 7), std::string(7, '\0'));
  std::string old = Forge(body.substr(0, body.size() - 7));
  old[0] = 2;
  ClusterState restored;
  Status r = RestoreSnapshot(old, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(restored.tenants().Find("team"), s.tenants().Find("team"));
  EXPECT_TRUE(restored.billing().budgets().empty());
}

TEST_F(SnapshotStateTest, AFormatThreeSnapshotStillRestoresWithNoTaskReports) {
  ClusterState s;
  TenantSpec t;
  t.path = "team";
  ASSERT_TRUE(s.apply({0, TenantUpserted{t}}).ok());
  // Format 4 appends the task reports, format 5 the floor changes, format 8 the reservations:
  // none here, one zero byte each. Without them, marked 3.
  std::string body = DropBookingCaps(Before17(s));
  ASSERT_EQ(body.substr(body.size() - 3), std::string(3, '\0'));
  std::string old = Forge(body.substr(0, body.size() - 3));
  old[0] = 3;
  ClusterState restored;
  Status r = RestoreSnapshot(old, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(restored.tenants().Find("team"), s.tenants().Find("team"));
  EXPECT_TRUE(restored.task_reports().empty());
}

TEST_F(SnapshotStateTest, AFormatFiveSnapshotStillRestoresJobsWithNoEnvironment) {
  Cluster c;
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Duration(60000).Command({"run"}));
  // Format 6 writes each job's environment after its command: with none, four zero bytes (the
  // image's length, no mounts, no variables, no shm size); format 9 the reservation's name after
  // it (one zero byte), format 10 its requirements (none: one zero byte), format 11 its sizing
  // (none: one zero byte). The job's spec as the event codec writes it ends with them; the
  // snapshot holds the same bytes. Without them, marked 5.
  std::string spec = SpecBefore12(c.state.job(c.Id("plain")).spec);
  ASSERT_EQ(spec.substr(spec.size() - 7), std::string(7, '\0'));
  std::string body = DropArrays(DropBookingCaps(Before17(c.state)), c.state.job(c.Id("plain")).spec);
  size_t at = body.find(spec);
  ASSERT_NE(at, std::string::npos);
  body.erase(at + spec.size() - 7, 7);
  ASSERT_EQ(body.back(), '\0') << "format 8's reservations: none";
  body.pop_back();
  std::string old = Forge(body);
  old[0] = 5;
  ClusterState restored;
  Status r = RestoreSnapshot(old, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  ASSERT_TRUE(allot::testing::OnlyJobNamed(restored, "plain").valid());
  EXPECT_EQ(restored.job(allot::testing::OnlyJobNamed(restored, "plain")).spec, c.state.job(c.Id("plain")).spec);
  EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
}

// Format 8 (before JobSpec.reservation): its jobs are in event format 5 and restore with none
// (nor any requirement, format 10, nor sizing, format 11: one more zero byte each).
TEST_F(SnapshotStateTest, AFormatEightSnapshotStillRestoresJobsWithNoReservation) {
  Cluster c;
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Duration(60000).Command({"run"}));
  std::string spec = SpecBefore12(c.state.job(c.Id("plain")).spec);
  ASSERT_EQ(spec.substr(spec.size() - 3), std::string(3, '\0')) << "no reservation, no requirement, no sizing";
  std::string body = DropArrays(DropBookingCaps(Before17(c.state)), c.state.job(c.Id("plain")).spec);
  size_t at = body.find(spec);
  ASSERT_NE(at, std::string::npos);
  body.erase(at + spec.size() - 3, 3);
  std::string old = Forge(body);
  old[0] = 8;
  ClusterState restored;
  Status r = RestoreSnapshot(old, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(restored.job(allot::testing::OnlyJobNamed(restored, "plain")).spec, c.state.job(c.Id("plain")).spec);
  EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
}

// The job's spec in a snapshot body ends with its sizing (event format 10): none, one zero byte.
// Without it (and the services of format 16, the arrays of format 15 and the hardened jobs of
// format 14), the body is what an allotd before sizing wrote.
std::string DropSizing(std::string body, const JobSpec& spec) {
  body = DropHardened(DropArrays(DropServices(std::move(body)), spec));
  std::string encoded = SpecBefore12(spec);
  EXPECT_EQ(encoded.back(), '\0') << "no sizing";
  size_t at = body.find(encoded);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) body.erase(at + encoded.size() - 1, 1);
  return body;
}

// Format 11 (before business hours): its tenants restore with none; its jobs are in event format
// 8, which has no sizing either.
TEST_F(SnapshotStateTest, AFormatElevenSnapshotStillRestoresTenantsWithNoBusinessHours) {
  Cluster c;
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Duration(60000).Command({"run"}));
  std::string body = DropSizing(Before17(c.state), c.state.job(c.Id("plain")).spec);
  std::string old = Forge(DropBusinessHours(body));
  old[0] = 11;
  ClusterState restored;
  Status r = RestoreSnapshot(old, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
  std::string as_twelve = old;
  as_twelve[0] = 12;
  ClusterState refused;
  EXPECT_FALSE(RestoreSnapshot(as_twelve, refused).ok()) << "format 12 without the field is short";
}

TEST_F(SnapshotStateTest, ATenantsBusinessHoursSurviveASnapshot) {
  ClusterState s;
  TenantSpec t;
  t.path = "team";
  t.business_hours = "Mon-Fri 08:00-19:00 Europe/Berlin";
  ASSERT_TRUE(s.apply({0, TenantUpserted{t}}).ok());
  ClusterState restored;
  Status r = RestoreSnapshot(EncodeSnapshot(s), restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(restored.tenants().tenant(restored.tenants().Find("team")).business_hours, "Mon-Fri 08:00-19:00 Europe/Berlin");
}

// Format 12 (before JobSpec.sizing): its jobs are in event format 9 and restore with none.
TEST_F(SnapshotStateTest, AFormatTwelveSnapshotStillRestoresJobsWithNoSizing) {
  Cluster c;
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Duration(60000).Command({"run"}));
  std::string body = DropSizing(Before17(c.state), c.state.job(c.Id("plain")).spec);
  std::string old = Forge(body);
  old[0] = 12;
  ClusterState restored;
  Status r = RestoreSnapshot(old, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(restored.job(allot::testing::OnlyJobNamed(restored, "plain")).spec, c.state.job(c.Id("plain")).spec);
  EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
  ClusterState refused;
  EXPECT_FALSE(RestoreSnapshot(Forge(body), refused).ok()) << "format 13 needs the sizing";
}

// Formats 13 and 14 (before arrays): jobs in event format 10 restore with no array, retries or
// dependencies and no failures retried; format 15 needs them. An element's array, its retries,
// its dependencies and its failures survive a snapshot.
TEST_F(SnapshotStateTest, AFormatThirteenSnapshotStillRestoresJobsWithNoArrays) {
  Cluster c;
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Duration(60000).Command({"run"}));
  std::string body = DropArrays(DropServices(Before17(c.state)), c.state.job(c.Id("plain")).spec);
  for (char format : {13, 14}) {
    std::string old = Forge(format == 13 ? DropHardened(body) : body);  // format 14 added the hardened jobs
    old[0] = format;
    ClusterState restored;
    Status r = RestoreSnapshot(old, restored);
    ASSERT_TRUE(r.ok()) << r.ToString();
    EXPECT_EQ(restored.job(allot::testing::OnlyJobNamed(restored, "plain")).spec, c.state.job(c.Id("plain")).spec);
    EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
  }
  std::string as_fifteen = Forge(body);
  as_fifteen[0] = 15;
  ClusterState refused;
  EXPECT_FALSE(RestoreSnapshot(as_fifteen, refused).ok()) << "format 15 needs the arrays";

  JobSpec element = JobBuilder("").Element("render", 0, 1, 1, 101).Tenant("team").Duration(60000).Command({"run"})
                        .Retries(2).After("plain", AfterState::kFinished).Build(c.state);
  ASSERT_TRUE(c.state.apply({0, JobSubmitted{element}}).ok());
  ClusterState restored;
  ASSERT_TRUE(RestoreSnapshot(EncodeSnapshot(c.state), restored).ok());
  const Job& back = restored.job(allot::testing::OnlyJobNamed(restored, "render-0"));
  EXPECT_EQ(back.spec.array, element.array);
  EXPECT_EQ(back.spec.retries, 2);
  EXPECT_EQ(back.spec.after, element.after);
  EXPECT_EQ(restored.ArrayElements(back.spec.tenant, "render"), std::vector<JobId>{back.id}) << "the array index is rebuilt";
}

TEST_F(SnapshotStateTest, DamagedBytesAreRefusedWithTheReasonAndChangeNothing) {
  const std::string bytes = EncodeSnapshot(c_.state);
  auto message = [](std::string_view b) {
    ClusterState s;
    Status r = RestoreSnapshot(b, s);
    EXPECT_TRUE(s.jobs().empty() && s.fleet().size() == 0) << "nothing restored";
    return r.ok() ? std::string("accepted") : r.message();
  };
  EXPECT_EQ(message(""), "snapshot: truncated: no bytes");
  std::string newer = bytes;
  newer[0] = static_cast<char>(kSnapshotFormat + 1);
  EXPECT_EQ(message(newer), "snapshot: format " + std::to_string(kSnapshotFormat + 1) + " is not known; expected 2 to " +
                               std::to_string(kSnapshotFormat));
  EXPECT_EQ(message(bytes.substr(0, 9)), "snapshot: truncated: 9 bytes, less than the 17-byte header");
  std::string body = std::to_string(bytes.size() - 17);
  EXPECT_EQ(message(bytes.substr(0, bytes.size() - 5)),
            "snapshot: truncated: the body is " + std::to_string(bytes.size() - 22) + " bytes; the header says " + body);
  EXPECT_EQ(message(bytes + "xy"), "snapshot: 2 trailing byte(s) after the " + body + "-byte body");
  for (size_t n = 0; n < bytes.size(); n += 7) EXPECT_NE(message(bytes.substr(0, n)), "accepted") << n;
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x20;
  EXPECT_NE(message(flipped).find("does not match the stored"), std::string::npos) << message(flipped);
  EXPECT_NE(message(flipped).find("the bytes are damaged"), std::string::npos);

  // Behind a good checksum: a body cut short, one with bytes left over, one naming a job twice in
  // its tenant (b's "victim" renamed to its "mps-job"; a name in two tenants is allowed).
  std::string good = bytes.substr(17);
  EXPECT_NE(message(Forge(good.substr(0, good.size() - 1))).find("snapshot: templates: truncated at byte"),
            std::string::npos) << message(Forge(good.substr(0, good.size() - 1)));
  EXPECT_EQ(message(Forge(good + '\0')),
            "snapshot: bytes left over after the last section at byte " + std::to_string(good.size()));
  std::string twice = good;
  size_t at = twice.find("\x06victim");
  ASSERT_NE(at, std::string::npos);
  twice.replace(at, 7, "\x07mps-job");
  EXPECT_EQ(message(Forge(twice)), "snapshot: job 'mps-job' appears twice in its tenant");

  // A state that is not fresh is not restored into, and is left as it was.
  std::string before = EncodeSnapshot(c_.state);
  Status s = RestoreSnapshot(bytes, c_.state);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "snapshot: restores into a fresh, empty state; this one has 5 nodes and 7 jobs");
  EXPECT_EQ(EncodeSnapshot(c_.state), before);
}

// Format 15 (before services) restores with none: the body of format 16 less its last byte.
TEST_F(SnapshotStateTest, AFormatFifteenSnapshotStillRestoresWithNoServices) {
  Cluster c;
  c.AddNodes("n", 1, "z1", "r1", 64, 512, testing::kH100, 8);
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Gpus(1).Duration(60000).Command({"run"}));
  std::string body = DropServices(Before17(c.state));
  for (char format : {15}) {
    std::string old = Forge(body);
    old[0] = format;
    ClusterState restored;
    Status r = RestoreSnapshot(old, restored);
    ASSERT_TRUE(r.ok()) << int(format) << ": " << r.ToString();
    EXPECT_TRUE(restored.services().empty());
    EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
  }
  ClusterState refused;
  EXPECT_FALSE(RestoreSnapshot(Forge(body), refused).ok()) << "format 16 needs the services";
}

// Format 10 (before the noisy-neighbour responses) restores with none: its body is the current
// one less the last byte (no responses), the tenants' business hours (format 12) and the jobs'
// sizing (format 13).
TEST_F(SnapshotStateTest, AFormatTenSnapshotStillRestoresWithNoInterferenceResponses) {
  Cluster c;
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Duration(60000).Command({"run"}));
  std::string body = DropBusinessHours(DropSizing(Before17(c.state), c.state.job(c.Id("plain")).spec));
  ASSERT_EQ(body.back(), '\0');
  body.pop_back();
  std::string old = Forge(body);
  old[0] = 10;
  ClusterState restored;
  Status r = RestoreSnapshot(old, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_TRUE(restored.interference().empty());
  EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
}

// Format 13 (before moves and hardenings) restores with no hardened job: its body is the
// current one less the hardened jobs (and the arrays of format 15 and the services of format 16).
TEST_F(SnapshotStateTest, AFormatThirteenSnapshotStillRestoresWithNoHardenedJobs) {
  Cluster c;
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Duration(60000).Command({"run"}));
  std::string body = DropHardened(DropArrays(DropServices(Before17(c.state)), c.state.job(c.Id("plain")).spec));
  std::string old = Forge(body);
  old[0] = 13;
  ClusterState restored;
  Status r = RestoreSnapshot(old, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
  ClusterState refused;
  EXPECT_FALSE(RestoreSnapshot(Forge(body), refused).ok()) << "format 14 needs the section";
}

// Format 16 (before templates) restores with no template and jobs with none; format 17 needs
// them. Templates, and the template a job came from with its vram, survive a snapshot.
TEST_F(SnapshotStateTest, AFormatSixteenSnapshotStillRestoresWithNoTemplates) {
  Cluster c;
  c.Tenant("team");
  c.Submit(JobBuilder("plain").Tenant("team").Duration(60000).Command({"run"}));
  std::string body = Before17(c.state);
  for (char format : {16}) {
    std::string old = Forge(body);
    old[0] = format;
    ClusterState restored;
    Status r = RestoreSnapshot(old, restored);
    ASSERT_TRUE(r.ok()) << r.ToString();
    EXPECT_TRUE(restored.templates().empty());
    EXPECT_EQ(EncodeSnapshot(restored), EncodeSnapshot(c.state)) << "written again in the current format";
  }
  ClusterState refused;
  EXPECT_FALSE(RestoreSnapshot(Forge(body), refused).ok()) << "format 17 needs the templates";

  TenantId team = c.state.tenants().Find("team");
  ASSERT_TRUE(c.state.apply({5, TemplateSaved{JobTemplate{team, "render", "d", "{retries: 2}", "olga", 0}}}).ok());
  ASSERT_TRUE(c.state.apply({6, TemplateSaved{JobTemplate{team, "a", "", "{vram: 12Gi}", "olga", 0}}}).ok());
  JobSpec spec = JobBuilder("from-template").Tenant("team").Duration(60000).Command({"run"}).Build(c.state);
  spec.template_name = "render";
  spec.template_tenant = "team";
  spec.vram_mib = 12288;
  ASSERT_TRUE(c.state.apply({7, JobSubmitted{spec}}).ok());
  ClusterState restored;
  Status r = RestoreSnapshot(EncodeSnapshot(c.state), restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(restored.templates(), c.state.templates());
  ASSERT_NE(restored.FindTemplate(team, "render"), nullptr);
  EXPECT_EQ(restored.FindTemplate(team, "render")->saved_ms, 5);
  EXPECT_EQ(restored.job(allot::testing::OnlyJobNamed(restored, "from-template")).spec, spec);
}

}  // namespace
}  // namespace allot
