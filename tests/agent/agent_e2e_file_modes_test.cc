// Who can read a task's output: on the node, its log is the agent's and its own task's group's
// (0640) in a directory nobody lists (0711); allotd's copy in DATA/logs is 0600 in a 0700 data
// directory. Before, both were world-readable: any local user read every tenant's output.
#include <sys/stat.h>

#include "agent/agent_e2e_fixture.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using testing::AgentE2eTest;

mode_t Mode(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST_F(AgentE2eTest, ATasksLogIsReadableOnlyByTheAgentAllotdAndTheTasksOwnGroup) {
  StartAllotd("tenants:\n  - {path: research}\n");
  StartAgent("gpu-a");
  WaitReady("gpu-a");
  Submit("modes", "research", "echo GID=$(id -g)", R"({"gpus": 1, "cpu": 1, "memory": "1Gi"})");
  WaitState("modes", "finished");
  std::string log = WaitLog("modes", "GID=");

  fs::path node_logs = dir_ / "gpu-a" / "work" / "logs";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(node_logs)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(Mode(node_logs), 0711u);
  struct stat st;
  ASSERT_EQ(::stat(files[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid()) << "the agent's";
  if (::geteuid() == 0) {
    EXPECT_EQ(st.st_mode & 0777, 0640u) << files[0];
    EXPECT_NE(log.find("GID=" + std::to_string(st.st_gid) + "\n"), std::string::npos) << "the task's own group: " << log;
  } else {
    EXPECT_EQ(st.st_mode & 0777, 0600u) << files[0];
  }

  fs::path data = dir_ / "data";
  EXPECT_EQ(Mode(data), 0700u);
  // allotd's copy, under the job's id ("job=0": names are unique only within a tenant).
  std::vector<fs::path> jobs;
  for (const auto& e : fs::directory_iterator(data / "logs")) jobs.push_back(e.path());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].filename(), "job=0");
  fs::path copy = jobs[0] / "run-0" / "task-0.log";
  EXPECT_EQ(Mode(copy), 0600u);
  EXPECT_EQ(Mode(copy.parent_path()), 0700u);
}

}  // namespace
}  // namespace allot
