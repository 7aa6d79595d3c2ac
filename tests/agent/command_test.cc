// RunCommand's two ways with stderr: with stdout by default (a scrub's or MPS command's whole
// story), apart when asked (a provisioning hook's stdout is its answer).
#include "agent/run/command.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(RunCommand, KeepsStderrWithStdoutUnlessAskedToKeepItApart) {
  CommandSpec c;
  c.argv = {"sh", "-c", "echo out; echo err >&2; echo out2"};
  auto together = RunCommand(c);
  ASSERT_TRUE(together) << together.error().message();
  EXPECT_EQ(together->output_tail, "out\nerr\nout2\n");
  EXPECT_EQ(together->error_tail, "");

  c.split_stderr = true;
  auto apart = RunCommand(c);
  ASSERT_TRUE(apart) << apart.error().message();
  EXPECT_EQ(apart->exit_code, 0);
  EXPECT_EQ(apart->output_tail, "out\nout2\n");
  EXPECT_EQ(apart->error_tail, "err\n");
}

}  // namespace
}  // namespace allot
