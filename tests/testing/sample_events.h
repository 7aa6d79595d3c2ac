// Sample events for codec and journal tests: one of each type, every field set away from its
// default, so a round trip that drops or mangles a field shows.
#pragma once

#include <string>
#include <vector>

#include "core/resources.h"
#include "state/event.h"

namespace allot::testing {

// A service spec with every field away from its default, its replicas `j`.
inline ServiceSpec ServiceSpecSample(const JobSpec& j) {
  ServiceSpec s;
  s.name = "chat";
  s.tenant = TenantId(3);
  s.replica = j;
  s.replicas = 3;
  s.min_replicas = 2;
  s.max_replicas = 9;
  s.spread = Spread::kRack;
  s.port = 8000;
  s.max_unavailable = 2;
  s.max_surge = 1;
  s.autoscale = {12500, 30000, 3000, 2500, 45000};
  return s;
}

// One event of each type, in EventBody order.
inline std::vector<Event> OneOfEach() {
  NodeSpec n{"node-7", "z2", "r9", "nvl-a", 96000, 1048576, "H100-80GB", 8};
  n.sharing = Sharing::kMig;
  n.mig_layout = {"3g.40gb", "1g.10gb"};
  n.replicas = 7;
  n.oversubscription_milli = 1500;
  n.gpu_groups = {{0, 1}, {2, 3, 4}};
  n.labels = {{"cuda", "9.0"}, {"driver", "550.54.15"}, {"interconnect", "nvlink"}};
  TenantSpec t;
  t.path = "org/team";
  t.SetGuarantee(2, 5 * kGpuUnit);
  t.max[kCpu] = 64000;
  t.weight = 2500;
  t.trust = Trust::kUntrusted;
  t.pools = 0x3;
  JobSpec j;
  j.name = "train";
  j.tenant = TenantId(3);
  j.gpu_resource = 2;
  TaskGroup g{4, 3000, 8000, 65536};
  g.share = ShareKind::kMps;
  g.fractional = true;
  g.mig_profile = 5;
  g.percent = 30;
  g.gpu_memory = 24576;
  j.groups = {g, TaskGroup{2, 8 * kGpuUnit, 1, 2}};
  j.topology = Topology::kRack;
  j.require = {{"cuda", RequireOp::kGe, "9.0"}, {"driver", RequireOp::kGe, "550"}, {"interconnect", RequireOp::kNe, "pcie"}};
  j.kind = JobKind::kInference;
  j.command = {"python", "train.py", "--epochs", ""};
  j.environment.image = "oci:/srv/images/pytorch:2.4";
  j.environment.mounts = {{"org/team", "datasets", "/data", false}, {"org", "shared-models", "/models", true}};
  j.environment.env = {{"EMPTY", ""}, {"HF_HOME", "/data/hf"}};
  j.environment.shm_size_mib = 1024;
  GroupSizing sized;
  sized.group = 1;
  sized.model = {.name = "", .parameters = 70'000'000'000, .precision = ModelPrecision::kInt4, .context = 4096,
                 .batch = 2, .layers = 80, .hidden = 8192, .mode = ModelMode::kLora, .override = false};
  sized.estimate = {.weights_mib = 33379, .kv_cache_mib = 20480, .training_mib = 10682, .overhead_mib = 13421};
  sized.allocation = "2 × H100-80GB GPUs (nvlink)";
  sized.why = "estimated 77962Mi";
  j.sizing = {sized};
  j.template_name = "train";
  j.template_tenant = "org";
  j.vram_mib = 12288;
  j.priority = -7;
  j.duration_ms = 3600000;
  j.time_limit_ms = 7200000;
  j.min_runtime_ms = 60000;
  j.checkpoint_interval_ms = 900000;
  j.grace_ms = 45000;
  j.submit_ms = 123456;
  TaskPlacement p{NodeId(4), 0xF0, 32000, 262144, {}};
  TaskPlacement s{NodeId(5), 0x4, 1000, 2048, {ShareKind::kMig, {3, 4}, true, 0, 0}};
  TaskPlacement m{NodeId(6), 0x1, 1000, 2048, {ShareKind::kMps, {}, false, 30, 24576}};
  return {
      {1, NodeAdded{n}},
      {2, NodeConditionChanged{NodeId(9), NodeCondition::kDraining}},
      {3, TenantUpserted{t}},
      {4, JobSubmitted{j}},
      {5, JobRejected{JobId(11), "needs 16 GPUs — in one rack"}},
      {6, JobPlaced{JobId(12), AdmissionClass::kBurstable, {p, s, m}}},
      {7, JobPreemptionStarted{JobId(12), PreemptKind::kFairShare, JobId(13), 99000}},
      {8, JobStopped{JobId(12), 5000}},
      {9, JobFinished{JobId(14)}},
      {-10, JobCancelled{JobId(15)}},
      {11, MigRelayout{NodeId(5), 3, {{0, 0}, {6, 4}}, 41000}},
      {12, ReservationSet{JobId(16), 7200000, {p}}},
      {13, TokenIssued{TokenRecord{std::string(64, 'a'), Principal{"alice", Role::kTeamAdmin, TenantId(2)}, 77, true}}},
      {14, TokenRevoked{std::string(64, 'b')}},
      {15, AuditRecorded{AuditRecord{15, "alice", Role::kMember, "org/team", "job.submit", "train", "ok", "req-9",
                                     std::string(64, 'c'), std::string(64, 'd')}}},
      {16, TenantRemoved{"org/old-team"}},
      {17, TenantMoved{"org/team", "other-org/team"}},
      {18, NodeRegistered{NodeSpec{"agent-1", "z1", "r2", "", 64000, 512 * 1024, "H100-80GB", 8, Sharing::kMig,
                                   {"7g.80gb"}, 4, 1000, {{0, 1, 2, 3}, {4, 5, 6, 7}}}}},
      {19, NodeFailed{NodeId(1), NodeCondition::kRepair, "failed its health check: GPU 3: 2 uncorrected ECC errors"}},
      {20, JobFailed{JobId(4), "task 1 on agent-1: killed by SIGKILL: memory limit 512 MiB exceeded"}},
      {21, BudgetSet{"org/team", 5000000000, 1000000}},
      {22, BudgetWarned{"org/team", "2026-11", "spend", 80, "budget of org/team for 2026-11: spend 4,100.00 USD of 5,000.00 USD (82%)"}},
      {23, LedgerAppended{{"1\t2026-11\torg/team\tusage\tgpu/H100-80GB\tguaranteed\tnone\t1\t2\t3\t4\t5\t-\t-\t-\tab"}, "2026-11"}},
      {24, TaskRunReported{JobId(4), 1, 2, "agent-1", 1763800000000, 1763800042000}},
      {25, MigLayoutReported{NodeId(5), 2, {{2, 0}, {2, 4}}}},
      {26, ReservationBooked{ReservationSpec{"nightly", TenantId(3), 2, 12, 0, Topology::kRack,
                                             {{1000, 2000}, {87400000, 87401000}}, 1800000, Orchestrator::kNone,
                                             {{"interconnect", RequireOp::kEq, "nvlink"}}},
                             {{{NodeId(4), 8}, {NodeId(7), 4}}, {{NodeId(4), 8}, {NodeId(7), 4}}}}},
      {27, ReservationCancelled{ReservationId(3)}},
      {28, ReservationEndSet{ReservationId(2), 1, 90000000}},
      {29, SshKeyAdded{SshKeyRecord{SshKeyId(0), TenantId(3), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE0 alice@laptop",
                                    "SHA256:abc", "alice", 29, false, 0}}},
      {30, SshKeyRemoved{SshKeyId(0)}},
      {31, ReservationShrunk{ReservationId(2), 6}},
      {32, ReservationNodeAccepted{ReservationId(2), 1, NodeId(7), false, "cmd:false: exited with code 1"}},
      {33, ReservationHoldMoved{ReservationId(2), 1, NodeId(7), NodeId(9), "node is cordoned"}},
      // A hardening, so every field of the response is set (a throttle's percentages are not
      // checked by the codec).
      {34, InterferenceActed{InterferenceResponse{NodeId(2), 1, JobId(4), 0, JobId(5), 1, 2, InterferenceAction::kHarden,
                                                  15, 30, 12500, 40000, 92, 61, 34, 0,
                                                  TaskGroup{1, 9000, 1000, 1024, ShareKind::kMig, false, 2, 0, 0}},
                             "harden the victim"}},
      {35, InterferenceCleared{NodeId(2), 1, JobId(5), 1, "quiet for 60 s", InterferenceAction::kHarden}},
      {36, ServiceCreated{ServiceSpecSample(j)}},
      {37, ServiceReplicaAdded{ServiceId(2), 4, 3, 20007, j}},
      {38, ServiceReplicaRestarted{ServiceId(2), JobId(9), "restart 2 after: exit code 3"}},
      {39, ServiceReplicaRemoved{ServiceId(2), JobId(9), "replaced by revision 3"}},
      {40, ServiceScaled{ServiceId(2), 5, "load 41.0 over 6s: panic"}},
      {41, ServiceUpdated{ServiceId(2), j, "update by alice: image"}},
      {42, ServiceDeleted{ServiceId(2)}},
      {43, TemplateSaved{JobTemplate{TenantId(3), "render", "the studio's renderer", "{command: [render.sh], retries: 3}", "olga", 43}}},
      {44, TemplateRemoved{TenantId(3), "render"}},
  };
}

}  // namespace allot::testing
