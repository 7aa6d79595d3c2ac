// The task environment: rank and world, devices by UUID (GPU and MIG), CPU-only tasks, MPS shares
// and the refusals, as tables of inputs and the variables they give.
#include "agent/run/task_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

namespace allot {
namespace {

using ::testing::HasSubstr;

std::string Get(const EnvList& env, const std::string& name) {
  for (const auto& [k, v] : env)
    if (k == name) return v;
  return "<unset>";
}

TaskEnvInput Base() {
  TaskEnvInput in;
  in.job_name = "train";
  in.job_id = "7";
  in.task_index = 1;
  in.world_size = 4;
  in.master_addr = "node-a";
  in.checkpoint_dir = "/w/ck";
  in.preempt_file = "/w/pre";
  return in;
}

TEST(TaskEnvTest, AnArrayElementKnowsItsIndexAndFrameAndOtherTasksHaveNeither) {
  TaskEnvInput in = Base();
  in.array_index = 3;
  in.frame = 107;
  auto env = BuildTaskEnv(in);
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ(Get(*env, "ALLOT_ARRAY_INDEX"), "3");
  EXPECT_EQ(Get(*env, "ALLOT_FRAME"), "107");
  in.frame = -1;  // a counted array
  EXPECT_EQ(Get(*BuildTaskEnv(in), "ALLOT_FRAME"), "<unset>");
  auto plain = BuildTaskEnv(Base());
  EXPECT_EQ(Get(*plain, "ALLOT_ARRAY_INDEX"), "<unset>");
  EXPECT_EQ(Get(*plain, "ALLOT_FRAME"), "<unset>");
}

TEST(TaskEnvTest, NamesTheTaskInItsJobAndWhereToCheckpoint) {
  auto env = BuildTaskEnv(Base());
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ(Get(*env, "ALLOT_JOB_ID"), "7");
  EXPECT_EQ(Get(*env, "ALLOT_JOB_NAME"), "train");
  EXPECT_EQ(Get(*env, "ALLOT_TASK_INDEX"), "1");
  EXPECT_EQ(Get(*env, "ALLOT_WORLD_SIZE"), "4");
  EXPECT_EQ(Get(*env, "ALLOT_MASTER_ADDR"), "node-a");
  EXPECT_EQ(Get(*env, "ALLOT_CHECKPOINT_DIR"), "/w/ck");
  EXPECT_EQ(Get(*env, "ALLOT_PREEMPT_FILE"), "/w/pre");
  EXPECT_EQ(Get(*env, "CUDA_MPS_PIPE_DIRECTORY"), "<unset>");
}

TEST(TaskEnvTest, DevicesAreListedByUuidInTheGivenOrder) {
  struct Case {
    std::vector<std::string> devices;
    std::string cuda, nvidia;
  };
  const Case cases[] = {
      {{}, "", "void"},  // CPU-only: no runtime may fall back to "all GPUs"
      {{"GPU-aaaa"}, "GPU-aaaa", "GPU-aaaa"},
      {{"GPU-bbbb", "GPU-aaaa"}, "GPU-bbbb,GPU-aaaa", "GPU-bbbb,GPU-aaaa"},
      {{"MIG-1111-2222"}, "MIG-1111-2222", "MIG-1111-2222"},
  };
  for (const Case& c : cases) {
    TaskEnvInput in = Base();
    in.devices = c.devices;
    auto env = BuildTaskEnv(in);
    ASSERT_TRUE(env) << env.error().ToString();
    EXPECT_EQ(Get(*env, "CUDA_VISIBLE_DEVICES"), c.cuda);
    EXPECT_EQ(Get(*env, "NVIDIA_VISIBLE_DEVICES"), c.nvidia);
  }
}

TEST(TaskEnvTest, AnMpsShareGivesPipeThreadsAndAMemoryCapPerVisibleDevice) {
  struct Case {
    std::vector<std::string> devices;
    int64_t mib;
    std::string limit;
  };
  const Case cases[] = {
      {{"GPU-aaaa"}, 10240, "0=10240M"},               // the task sees its one GPU as device 0
      {{"GPU-aaaa", "GPU-bbbb"}, 512, "0=512M,1=512M"},
      {{"GPU-aaaa"}, 0, "<unset>"},                      // no cap asked: none set
  };
  for (const Case& c : cases) {
    TaskEnvInput in = Base();
    in.devices = c.devices;
    in.mps = MpsShare{"/run/mps/GPU-aaaa/pipe", 25, c.mib};
    auto env = BuildTaskEnv(in);
    ASSERT_TRUE(env) << env.error().ToString();
    EXPECT_EQ(Get(*env, "CUDA_MPS_PIPE_DIRECTORY"), "/run/mps/GPU-aaaa/pipe");
    EXPECT_EQ(Get(*env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "25");
    EXPECT_EQ(Get(*env, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), c.limit);
  }
}

TEST(TaskEnvTest, RefusesInputsThatWouldMisdirectTheTaskNamingTheField) {
  struct Case {
    std::function<void(TaskEnvInput&)> edit;
    std::string field;
  };
  const Case cases[] = {
      {[](TaskEnvInput& in) { in.task_index = 4; }, "task_index 4"},
      {[](TaskEnvInput& in) { in.task_index = -1; }, "task_index -1"},
      {[](TaskEnvInput& in) { in.world_size = 0; }, "world_size 0"},
      {[](TaskEnvInput& in) { in.devices = {"0"}; }, "device '0'"},  // an index, not a UUID
      {[](TaskEnvInput& in) { in.devices = {"GPU-a,GPU-b"}; }, "device 'GPU-a,GPU-b'"},
      {[](TaskEnvInput& in) { in.mps = MpsShare{"/p", 50, 0}; }, "needs a device"},
      {[](TaskEnvInput& in) { in.devices = {"GPU-a"}; in.mps = MpsShare{"/p", 0, 0}; }, "active_thread_percentage 0"},
      {[](TaskEnvInput& in) { in.devices = {"GPU-a"}; in.mps = MpsShare{"/p", 101, 0}; }, "active_thread_percentage 101"},
  };
  for (const Case& c : cases) {
    TaskEnvInput in = Base();
    c.edit(in);
    auto env = BuildTaskEnv(in);
    ASSERT_FALSE(env) << c.field;
    EXPECT_EQ(env.error().code(), Code::kInvalidArgument);
    EXPECT_THAT(env.error().message(), HasSubstr(c.field));
  }
}

}  // namespace
}  // namespace allot
