// A private Slurm's configuration as text: the exact files for two nodes, and the specs refused
// with the field, the value and what was expected.
#include "agent/cluster/slurm_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PrivateSlurmSpec TwoNodes() {
  PrivateSlurmSpec s;
  s.cluster = "acme";
  s.dir = "/var/lib/allot/clusters/acme";
  s.uid = 200001;
  s.gid = 200001;
  s.user = "acme";
  s.controller_port = 7001;
  s.nodes = {{.name = "n1", .gpus = 2, .cpus = 16, .memory_mib = 65536, .port = 7002,
              .gpu_files = {"/dev/nvidia0", "/dev/nvidia1"}},
             {.name = "n2", .gpus = 1, .cpus = 8, .memory_mib = 16384, .port = 7003, .gpu_files = {"/dev/nvidia2"}}};
  return s;
}

TEST(SlurmConf, WritesTheControllerTheTenantsDaemonsAndEachNodeOnItsOwnPort) {
  auto conf = SlurmConf(TwoNodes());
  ASSERT_TRUE(conf) << conf.error().message();
  // DefMemPerCPU: the smaller of 65536/16 and 16384/8.
  EXPECT_EQ(*conf,
            "# A tenant's private Slurm, written by allot-agent (src/agent/cluster/slurm_conf.cc).\n"
            "ClusterName=acme\n"
            "SlurmctldHost=localhost(127.0.0.1)\n"
            "SlurmctldPort=7001\n"
            "SlurmUser=acme\n"
            "SlurmdUser=root\n"
            "AuthType=auth/munge\n"
            "CredType=cred/munge\n"
            "AuthInfo=socket=/var/lib/allot/clusters/acme/munge-socket/sock\n"
            "StateSaveLocation=/var/lib/allot/clusters/acme/ctld\n"
            "SlurmctldPidFile=/var/lib/allot/clusters/acme/ctld/slurmctld.pid\n"
            "SlurmdSpoolDir=/var/lib/allot/clusters/acme/spool/%n\n"
            "SlurmdPidFile=/var/lib/allot/clusters/acme/spool/%n/slurmd.pid\n"
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
            "NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=7002 CPUs=16 RealMemory=65536 Gres=gpu:2 "
            "State=UNKNOWN\n"
            "NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=7003 CPUs=8 RealMemory=16384 Gres=gpu:1 "
            "State=UNKNOWN\n"
            "PartitionName=acme Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP\n");
}

TEST(SlurmConf, GresConfNamesEachNodesDeviceFilesOneALine) {
  auto gres = GresConf(TwoNodes());
  ASSERT_TRUE(gres) << gres.error().message();
  EXPECT_EQ(*gres,
            "# This host's nodes' GPU device files (src/agent/cluster/slurm_conf.cc).\n"
            "NodeName=n1 Name=gpu File=/dev/nvidia0\n"
            "NodeName=n1 Name=gpu File=/dev/nvidia1\n"
            "NodeName=n2 Name=gpu File=/dev/nvidia2\n");
}

TEST(SlurmConf, ANodeWithoutGpusHasNoGresAndNoDeviceLines) {
  PrivateSlurmSpec s = TwoNodes();
  s.nodes[1].gpus = 0;
  s.nodes[1].gpu_files.clear();
  auto conf = SlurmConf(s);
  ASSERT_TRUE(conf) << conf.error().message();
  EXPECT_THAT(*conf, HasSubstr("Port=7003 CPUs=8 RealMemory=16384 State=UNKNOWN\n"));
  EXPECT_THAT(*GresConf(s), Not(HasSubstr("n2")));
}

// Each case: what is changed, and the message expected to name the field, value and expectation.
TEST(SlurmConf, RefusesBadSpecsNamingTheFieldTheValueAndWhatWasExpected) {
  struct Case {
    const char* what;
    void (*change)(PrivateSlurmSpec&);
    std::string message;
  };
  const Case cases[] = {
      {"no nodes", [](PrivateSlurmSpec& s) { s.nodes.clear(); }, "nodes: '[]' is empty; expected at least one node"},
      {"duplicate names", [](PrivateSlurmSpec& s) { s.nodes[1].name = "n1"; },
       "nodes[1].name: 'n1' is also nodes[0]'s name; expected a name of its own"},
      {"port 0", [](PrivateSlurmSpec& s) { s.nodes[1].port = 0; },
       "nodes[1].port: '0' is not a port; expected 1 to 65535"},
      {"controller port 0", [](PrivateSlurmSpec& s) { s.controller_port = 0; },
       "controller_port: '0' is not a port; expected 1 to 65535"},
      {"a node on the controller's port", [](PrivateSlurmSpec& s) { s.nodes[0].port = 7001; },
       "nodes[0].port: '7001' is also controller_port; expected a port of its own"},
      {"two nodes on one port", [](PrivateSlurmSpec& s) { s.nodes[1].port = 7002; },
       "nodes[1].port: '7002' is also nodes[0].port; expected a port of its own"},
      {"gpus without files", [](PrivateSlurmSpec& s) { s.nodes[0].gpu_files.pop_back(); },
       "nodes[0].gpu_files: '1 files' does not match gpus 2; expected one device file per GPU"},
      {"one file for two GPUs", [](PrivateSlurmSpec& s) { s.nodes[1].gpu_files = {"/dev/nvidia0"}; },
       "nodes[1].gpu_files[0]: '/dev/nvidia0' is also nodes[0].gpu_files[0]; expected each GPU's own device file"},
      {"a relative device file", [](PrivateSlurmSpec& s) { s.nodes[1].gpu_files = {"dev/nvidia2"}; },
       "nodes[1].gpu_files[0]: 'dev/nvidia2' is not absolute"},
      {"negative gpus", [](PrivateSlurmSpec& s) { s.nodes[0].gpus = -1; },
       "nodes[0].gpus: '-1' is negative; expected 0 or more"},
      {"no cpus", [](PrivateSlurmSpec& s) { s.nodes[0].cpus = 0; }, "nodes[0].cpus: '0' is too few; expected 1 or more"},
      {"no memory", [](PrivateSlurmSpec& s) { s.nodes[0].memory_mib = 0; },
       "nodes[0].memory_mib: '0' is too little; expected 1 or more"},
      {"a node name with a comma", [](PrivateSlurmSpec& s) { s.nodes[0].name = "n1,n3"; }, "nodes[0].name: 'n1,n3'"},
      {"root as the tenant", [](PrivateSlurmSpec& s) { s.uid = 0; },
       "uid: '0' is root; expected the tenant's own unprivileged uid"},
      {"no user", [](PrivateSlurmSpec& s) { s.user = ""; }, "user: ''"},
      {"an uppercase cluster", [](PrivateSlurmSpec& s) { s.cluster = "Acme"; },
       "cluster: 'Acme' is not valid; expected 1 to 40 of a-z 0-9 _ -, starting with a letter"},
      {"a dir with a space", [](PrivateSlurmSpec& s) { s.dir = "/var/lib/my cluster"; },
       "dir: '/var/lib/my cluster' holds a character slurm.conf reads specially; expected an absolute path"},
      {"a relative dir", [](PrivateSlurmSpec& s) { s.dir = "clusters/acme"; }, "dir: 'clusters/acme' is not absolute"},
      {"a dir too long for munged's socket", [](PrivateSlurmSpec& s) { s.dir = "/" + std::string(90, 'd'); },
       "is 91 bytes long; expected a shorter path: munged's socket /munge-socket/sock under it must fit a Unix "
       "socket's 107 bytes"},
      {"a node name too long for slurmstepd's socket", [](PrivateSlurmSpec& s) { s.nodes[1].name = std::string(30, 'n'); },
       "nodes[1].name: '" + std::string(30, 'n') + "' makes a socket path of 118 bytes; expected a shorter name or dir"},
      {"a node address with a space", [](PrivateSlurmSpec& s) { s.nodes[1].address = "10.0.0.2 x"; },
       "nodes[1].address: '10.0.0.2 x' is not an address; expected a host name or IP address"},
      {"a host range as the controller", [](PrivateSlurmSpec& s) { s.controller_address = "n[1-2]"; },
       "controller_address: 'n[1-2]' is not an address"},
      {"device files of another host's node",
       [](PrivateSlurmSpec& s) {
         s.nodes[1].remote = true;
         s.munge_key = std::string(32, 'k');
       },
       "nodes[1].gpu_files: '1 files' are another host's (remote); expected none: that host's gres.conf names them"},
      {"nothing to run here",
       [](PrivateSlurmSpec& s) {
         s.controller_remote = true;
         for (PrivateSlurmNode& n : s.nodes) n.remote = true, n.gpu_files.clear();
       },
       "nodes: 'all remote' with controller_remote leaves nothing to run here; expected a node of this host"},
      {"several hosts without a shared key",
       [](PrivateSlurmSpec& s) {
         s.nodes[1].remote = true;
         s.nodes[1].gpu_files.clear();
       },
       "munge_key: '' is empty for a cluster over several hosts; expected the cluster's shared key"},
      {"a munge key too short", [](PrivateSlurmSpec& s) { s.munge_key = std::string(31, 'k'); },
       "munge_key: '31 bytes' is not a munge key's size; expected 32 to 1024 bytes"},
  };
  for (const Case& c : cases) {
    PrivateSlurmSpec s = TwoNodes();
    c.change(s);
    Status st = CheckPrivateSlurmSpec(s);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << c.what;
    EXPECT_THAT(st.message(), HasSubstr(c.message)) << c.what;
    EXPECT_FALSE(SlurmConf(s)) << c.what;
    EXPECT_FALSE(GresConf(s)) << c.what;
  }
}

}  // namespace
}  // namespace allot
