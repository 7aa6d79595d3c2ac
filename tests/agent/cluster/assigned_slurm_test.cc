// The private Slurm each booked node's agent builds from its assignment: for a 2-node window,
// the same slurm.conf on both nodes (but for each agent's own paths), the controller on the
// first, each slurmd on its own node, gres.conf with the local node's device files only, and one
// munge key; a one-node window on loopback; assignments that do not fit this node, refused.
#include "agent/cluster/assigned_slurm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace allot {
namespace {

using ::testing::HasSubstr;

ClusterAssignment TwoNodeWindow() {
  ClusterAssignment a;
  a.reservation = "pair";
  a.reservation_id = 7;
  a.window = 1;
  a.tenant = "research";
  a.orchestrator = "slurm";
  a.nodes = {"gpu-a", "gpu-b"};
  a.start_ms = 1'000;
  a.end_ms = 2'000;
  a.ssh_port = 30339;  // gpu-b's: its slurmctld_port (30340) is not the controller's
  a.slurmctld_port = 30340;
  a.slurmd_port = 30341;
  a.members = {{.node = "gpu-a", .address = "10.0.0.1", .slurmd_port = 30338, .gpus = 2, .cpus = 16, .memory_mib = 65536},
               {.node = "gpu-b", .address = "10.0.0.2", .slurmd_port = 30341, .gpus = 1, .cpus = 8, .memory_mib = 16384}};
  a.controller_host = "10.0.0.1";
  a.controller_port = 30337;
  a.munge_key = std::string(1024, 'k');
  return a;
}

SlurmHost Host(const std::string& node, const std::string& dir, std::vector<std::string> gpu_files) {
  return SlurmHost{node, dir, 200001, "allot-200001", std::move(gpu_files), 4, 2048};
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

TEST(AssignedSlurm, BothNodesOfATwoNodeWindowWriteTheSameConfigurationWithTheControllerOnTheFirst) {
  auto a = AssignedSlurmSpec(TwoNodeWindow(), Host("gpu-a", "/c/a", {"/dev/nvidia0", "/dev/nvidia1"}));
  auto b = AssignedSlurmSpec(TwoNodeWindow(), Host("gpu-b", "/c/b", {"/dev/nvidia0"}));
  ASSERT_TRUE(a) << a.error().message();
  ASSERT_TRUE(b) << b.error().message();
  auto conf_a = SlurmConf(*a), conf_b = SlurmConf(*b);
  ASSERT_TRUE(conf_a) << conf_a.error().message();
  ASSERT_TRUE(conf_b) << conf_b.error().message();
  // DefMemPerCPU: the smaller of 65536/16 and 16384/8.
  EXPECT_EQ(*conf_a,
            "# A tenant's private Slurm, written by allot-agent (src/agent/cluster/slurm_conf.cc).\n"
            "ClusterName=allot-r7w1\n"
            "SlurmctldHost=localhost(10.0.0.1)\n"
            "SlurmctldPort=30337\n"
            "SlurmUser=allot-200001\n"
            "SlurmdUser=root\n"
            "AuthType=auth/munge\n"
            "CredType=cred/munge\n"
            "AuthInfo=socket=/c/a/munge-socket/sock\n"
            "StateSaveLocation=/c/a/ctld\n"
            "SlurmctldPidFile=/c/a/ctld/slurmctld.pid\n"
            "SlurmdSpoolDir=/c/a/spool/%n\n"
            "SlurmdPidFile=/c/a/spool/%n/slurmd.pid\n"
            "SlurmdParameters=config_overrides\n"
            "DebugFlags=NO_CONF_HASH\n"
            "ProctrackType=proctrack/linuxproc\n"
            "TaskPlugin=task/none\n"
            "JobAcctGatherType=jobacct_gather/none\n"
            "AccountingStorageType=accounting_storage/none\n"
            "JobCompType=jobcomp/none\n"
            "MpiDefault=none\n"
            "MailProg=/bin/true\n"
            "PropagateResourceLimits=NONE\n"
            "ReturnToService=2\n"
            "SelectType=select/cons_tres\n"
            "SelectTypeParameters=CR_Core_Memory\n"
            "DefMemPerCPU=2048\n"
            "GresTypes=gpu\n"
            "NodeName=gpu-a NodeHostname=localhost NodeAddr=10.0.0.1 Port=30338 CPUs=16 RealMemory=65536 Gres=gpu:2 "
            "State=UNKNOWN\n"
            "NodeName=gpu-b NodeHostname=localhost NodeAddr=10.0.0.2 Port=30341 CPUs=8 RealMemory=16384 Gres=gpu:1 "
            "State=UNKNOWN\n"
            "PartitionName=allot-r7w1 Nodes=gpu-a,gpu-b Default=YES MaxTime=INFINITE State=UP\n");
  EXPECT_EQ(*conf_b, Replace(*conf_a, "/c/a/", "/c/b/")) << "the same cluster but for the agent's own paths";

  // Who runs what: the controller on gpu-a only; each slurmd on its own node.
  EXPECT_FALSE(a->controller_remote);
  EXPECT_TRUE(b->controller_remote);
  EXPECT_FALSE(a->nodes[0].remote);
  EXPECT_TRUE(a->nodes[1].remote);
  EXPECT_TRUE(b->nodes[0].remote);
  EXPECT_FALSE(b->nodes[1].remote);
  EXPECT_EQ(a->munge_key, std::string(1024, 'k'));
  EXPECT_EQ(b->munge_key, a->munge_key) << "one key for the window";
  // gres.conf: the local node's device files only.
  EXPECT_EQ(*GresConf(*a),
            "# This host's nodes' GPU device files (src/agent/cluster/slurm_conf.cc).\n"
            "NodeName=gpu-a Name=gpu File=/dev/nvidia0\n"
            "NodeName=gpu-a Name=gpu File=/dev/nvidia1\n");
  EXPECT_EQ(*GresConf(*b),
            "# This host's nodes' GPU device files (src/agent/cluster/slurm_conf.cc).\n"
            "NodeName=gpu-b Name=gpu File=/dev/nvidia0\n");
}

TEST(AssignedSlurm, AOneNodeWindowStaysOnLoopbackWithItsKey) {
  ClusterAssignment w = TwoNodeWindow();
  w.nodes = {"gpu-a"};
  w.members.resize(1);
  w.members[0].address = "gpu-a.example";  // need not resolve: nothing leaves the host
  w.slurmctld_port = 30337;
  auto spec = AssignedSlurmSpec(w, Host("gpu-a", "/c/a", {"/dev/nvidia0", "/dev/nvidia1"}));
  ASSERT_TRUE(spec) << spec.error().message();
  auto conf = SlurmConf(*spec);
  ASSERT_TRUE(conf) << conf.error().message();
  EXPECT_THAT(*conf, HasSubstr("SlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=30337\n"));
  EXPECT_THAT(*conf, HasSubstr("NodeName=gpu-a NodeHostname=localhost NodeAddr=127.0.0.1 Port=30338 CPUs=4 RealMemory=2048"));
  EXPECT_EQ(spec->munge_key, w.munge_key);
}

TEST(AssignedSlurm, AnAssignmentFromAnOlderAllotdIsASlurmOfThisNodeAloneWithAFreshKey) {
  ClusterAssignment w = TwoNodeWindow();
  w.members.clear();
  w.controller_host.clear();
  w.controller_port = 0;
  w.munge_key.clear();
  auto spec = AssignedSlurmSpec(w, Host("gpu-b", "/c/b", {"/dev/nvidia0"}));
  ASSERT_TRUE(spec) << spec.error().message();
  ASSERT_EQ(spec->nodes.size(), 1u);
  EXPECT_EQ(spec->nodes[0].name, "gpu-b");
  EXPECT_EQ(spec->nodes[0].port, 30341);
  EXPECT_EQ(spec->controller_port, 30340) << "its own slurmctld on its own slurmctld port";
  EXPECT_FALSE(spec->controller_remote);
  EXPECT_TRUE(spec->munge_key.empty()) << "PrivateSlurm makes a fresh one";
  EXPECT_TRUE(CheckPrivateSlurmSpec(*spec).ok());
}

TEST(AssignedSlurm, RefusesAWindowWithoutThisNodeOrWithAnotherGpuCountNamingTheField) {
  auto absent = AssignedSlurmSpec(TwoNodeWindow(), Host("gpu-c", "/c/c", {}));
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().message(), "members: this node 'gpu-c' is not one of the window's 2 nodes");
  auto gpus = AssignedSlurmSpec(TwoNodeWindow(), Host("gpu-b", "/c/b", {"/dev/nvidia0", "/dev/nvidia1"}));
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().message(),
            "members[1].gpus: 1 GPUs, but this node has 2 GPU device files; expected the node's own count");
}

}  // namespace
}  // namespace allot
