// Pending groups (ClusterState::pending_groups): jobs leave from the front by moving the
// group's head, from the middle by erasing, and the group stays in queue order throughout.
#include <gtest/gtest.h>

#include <random>

#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

std::vector<uint32_t> Ids(const ClusterState::PendingGroup& g) {
  std::vector<uint32_t> out;
  for (const QueuedJob& q : g) out.push_back(q.id);
  return out;
}

TEST(PendingGroupsTest, AGroupDrainedFromItsHeadAndMiddleStaysInQueueOrder) {
  Cluster c;
  c.AddNodes("n", 1, "z0", "r0", 96, 1024, "H100-80GB", 8);
  c.Tenant("t");
  std::vector<uint32_t> expect;
  for (int i = 0; i < 300; ++i) {
    expect.push_back(c.Submit(JobBuilder("j" + std::to_string(i)).Tenant("t").Gpus(1).At(i)).value());
  }
  ASSERT_EQ(c.state.pending_groups().size(), 1u);
  std::mt19937 rng(7);
  while (!expect.empty()) {
    // Mostly the head (a pass places in queue order), now and then one from the middle.
    size_t at = rng() % 5 == 0 ? rng() % expect.size() : 0;
    c.Apply(JobCancelled{JobId(expect[at])}, 1000);
    expect.erase(expect.begin() + static_cast<std::ptrdiff_t>(at));
    ASSERT_TRUE(c.state.VerifyInvariants().ok()) << c.state.VerifyInvariants().message();
    if (expect.empty()) {
      EXPECT_TRUE(c.state.pending_groups().empty());
      break;
    }
    const auto& g = c.state.pending_groups().begin()->second;
    ASSERT_EQ(Ids(g), expect);
    EXPECT_EQ(g.front().id, expect.front());
    EXPECT_EQ(g.data(), &*g.begin());
  }
  // A group refilled after it was drained starts again from an empty vector.
  JobId again = c.Submit(JobBuilder("again").Tenant("t").Gpus(1).At(2000));
  ASSERT_EQ(c.state.pending_groups().size(), 1u);
  EXPECT_EQ(Ids(c.state.pending_groups().begin()->second), std::vector<uint32_t>{again.value()});
}

}  // namespace
}  // namespace allot
