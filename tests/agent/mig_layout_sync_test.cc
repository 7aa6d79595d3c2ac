// The agent's MIG layout keeping: the pure diff (what to destroy and create), and the keeper
// bringing GPUs of the fake NVML to allotd's plan, sparing instances in use.
#include "agent/node/mig_layout_sync.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "agent/fake_nvml_fixture.h"

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Slots = std::vector<MigSlotName>;

TEST(DiffMigLayoutTest, DestroysWhatThePlanDroppedAndCreatesWhatItAddedByStart) {
  Slots held = {{"3g.40gb", 4}, {"3g.40gb", 0}};
  Slots desired = {{"1g.10gb", 6}, {"3g.40gb", 0}, {"2g.20gb", 4}};
  MigLayoutChanges c = DiffMigLayout(held, desired, {});
  EXPECT_EQ(c.destroy, (Slots{{"3g.40gb", 4}}));
  EXPECT_EQ(c.create, (Slots{{"2g.20gb", 4}, {"1g.10gb", 6}}));
}

TEST(DiffMigLayoutTest, AnInstanceInUseStaysEvenWhenThePlanDropsIt) {
  MigLayoutChanges c = DiffMigLayout({{"3g.40gb", 0}, {"3g.40gb", 4}}, {}, {{"3g.40gb", 4}});
  EXPECT_EQ(c.destroy, (Slots{{"3g.40gb", 0}}));
  EXPECT_TRUE(c.create.empty());
}

TEST(DiffMigLayoutTest, ANodeAtItsPlanChangesNothing) {
  Slots layout = {{"3g.40gb", 0}, {"3g.40gb", 4}};
  EXPECT_EQ(DiffMigLayout(layout, {layout[1], layout[0]}, {}), MigLayoutChanges{});
}

std::string Uuid(int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08x-0000-4000-8000-%012x", 0x5eed0000u + i, i);
  return buf;
}

// The fake HGX board: GPU 2 holds 3g.40gb@0 (a process runs on it) and 2g.20gb@4; GPU 3 is an
// empty MIG GPU. The keeper's GPU 0 is board GPU 2, its GPU 1 board GPU 3.
class MigLayoutKeeperTest : public testing::FakeNvmlTest {
 protected:
  void SetUp() override {
    Configure(testing::kHgxConfig);
    backend_ = Open();
    ASSERT_NE(backend_, nullptr);
    keeper_ = std::make_unique<MigLayoutKeeper>(*backend_, std::vector<std::string>{Uuid(2), Uuid(3)},
                                                [this](const std::string& l) { lines_ += l + "\n"; });
  }
  std::unique_ptr<GpuBackend> backend_;
  std::unique_ptr<MigLayoutKeeper> keeper_;
  std::string lines_;
};

TEST_F(MigLayoutKeeperTest, BringsEachGpuToThePlanAndFindsTheInstancesItMade) {
  keeper_->Sync(0, {});
  EXPECT_THAT(Log(), Not(HasSubstr("Create"))) << "nothing before the first plan";
  keeper_->SetDesired({{0, {{"3g.40gb", 0}, {"1g.10gb", 4}, {"1g.10gb", 5}}}, {1, {{"3g.40gb", 0}, {"3g.40gb", 4}}}});
  keeper_->Sync(0, {});
  std::vector<MigGpuLayout> held = keeper_->Held();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].instances, (Slots{{"3g.40gb", 0}, {"1g.10gb", 4}, {"1g.10gb", 5}})) << lines_;
  EXPECT_EQ(held[1].instances, (Slots{{"3g.40gb", 0}, {"3g.40gb", 4}})) << lines_;
  const MigGpuInstanceInfo* made = keeper_->Find(1, "3g.40gb", 4);
  ASSERT_NE(made, nullptr);
  EXPECT_THAT(made->compute[0].uuid, ::testing::StartsWith("MIG-"));
  EXPECT_EQ(keeper_->Find(1, "1g.10gb", 0), nullptr);
  EXPECT_THAT(Log(), HasSubstr("nvmlGpuInstanceDestroy gpu=2 gi=2")) << "the 2g the plan dropped";
  EXPECT_THAT(Log(), Not(HasSubstr("nvmlGpuInstanceDestroy gpu=2 gi=1"))) << "the 3g the plan keeps";
  EXPECT_EQ(keeper_->Problem(0), "");

  std::string calls = Log();
  keeper_->Sync(1, {});
  EXPECT_EQ(Log(), calls) << "at its plan, a sync before the recheck time asks NVML nothing";
}

TEST_F(MigLayoutKeeperTest, SparesAnInstanceInUseAndNamesWhatItCouldNotCreate) {
  keeper_->SetDesired({{0, {{"4g.40gb", 0}}}});
  keeper_->Sync(0, {{0, {"3g.40gb", 0}}});
  EXPECT_THAT(Log(), Not(HasSubstr("nvmlGpuInstanceDestroy gpu=2 gi=1")));
  EXPECT_EQ(keeper_->Held()[0].instances, (Slots{{"3g.40gb", 0}}));
  EXPECT_THAT(keeper_->Problem(0), HasSubstr("creating 4g.40gb@0")) << lines_;
  EXPECT_EQ(keeper_->Find(0, "4g.40gb", 0), nullptr);
}

}  // namespace
}  // namespace allot
