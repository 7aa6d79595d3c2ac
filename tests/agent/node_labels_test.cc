// The labels an agent registers its node with: what the fake NVML reports (driver version,
// CUDA compute capability, NVLink) reaches the node's labels through registration, and the
// operator's --label wins on the same name.
#include "agent/node/node_labels.h"

#include <gtest/gtest.h>

#include "agent/fake_nvml_fixture.h"
#include "server/agent_wire.h"

namespace allot {
namespace {

using testing::kHgxConfig;

class NodeLabelsTest : public testing::FakeNvmlTest {
 protected:
  GpuInventory Discover(const std::string& config) {
    Configure(config);
    auto backend = Open();
    EXPECT_TRUE(backend != nullptr);
    if (!backend) return {};
    auto inv = backend->Discover();
    EXPECT_TRUE(inv.has_value()) << (inv ? "" : inv.error().ToString());
    return inv ? *inv : GpuInventory{};
  }
};

TEST_F(NodeLabelsTest, TheFakeNvmlsDriverComputeCapabilityAndNvLinkBecomeTheNodesLabels) {
  GpuInventory inv = Discover(kHgxConfig);  // driver 550.54.15, 8 × H100 on NVSwitches
  ASSERT_FALSE(inv.gpus.empty());
  EXPECT_EQ(inv.gpus[0].cuda_capability, "9.0");
  NodeLabels labels = ReportedLabels(inv, {});
  EXPECT_EQ(labels, (NodeLabels{{"cuda", "9.0"}, {"driver", "550.54.15"}, {"interconnect", "nvlink"}}));

  // Through the agent protocol to the node allotd registers.
  NodeSpec spec{"hgx-0", "z", "r", "", 64000, 512 * 1024, "", 0};
  spec.labels = labels;
  auto reg = ParseRegistration(RegistrationJson(spec, AgentIdentity{"hgx-0", "allot-agent test", inv.driver_version}, {}));
  ASSERT_TRUE(reg.has_value()) << reg.error().ToString();
  EXPECT_EQ(reg->spec.labels, labels);
}

TEST_F(NodeLabelsTest, PcieGpusReportTheirCapabilityAndPcieAndTheOperatorsLabelsWin) {
  GpuInventory inv = Discover("driver version=535.104.05\ngpus count=2 name=\"NVIDIA L40S\"\n");
  NodeLabels labels = ReportedLabels(inv, {{"interconnect", "infiniband"}, {"rack_power", "a"}});
  EXPECT_EQ(labels, (NodeLabels{{"cuda", "8.9"}, {"driver", "535.104.05"}, {"interconnect", "infiniband"},
                                {"rack_power", "a"}}));
  EXPECT_EQ(ReportedLabels(inv, {}), (NodeLabels{{"cuda", "8.9"}, {"driver", "535.104.05"}, {"interconnect", "pcie"}}));
}

TEST(NodeLabelFlagTest, ALabelFlagIsNameEqualsValueAndABadOneSaysWhatWasExpected) {
  auto ok = ParseLabelFlag("interconnect=infiniband");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, (std::pair<std::string, std::string>{"interconnect", "infiniband"}));
  for (const char* bad : {"interconnect", "Interconnect=x", "x=a b", "=x", "x="}) {
    auto r = ParseLabelFlag(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message().find("--label"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("expected"), std::string::npos) << r.error().message();
  }
}

TEST(NodeLabelFlagTest, WhatANodesConfinementLacksReachesAllotdAndABadListIsRefusedNamingTheField) {
  NodeSpec spec{"gpu-real", "z", "r", "", 64000, 512 * 1024, "", 0};
  spec.labels = {{"isolation", "partial"}};
  AgentIdentity agent{"gpu-real", "allot-agent test", "580.159.04", std::vector<std::string>{"cpu limit", "pids limit"}};
  Json body = RegistrationJson(spec, agent, {});
  auto reg = ParseRegistration(body);
  ASSERT_TRUE(reg.has_value()) << reg.error().ToString();
  EXPECT_EQ(reg->session.isolation_gaps, (std::vector<std::string>{"cpu limit", "pids limit"}));
  EXPECT_EQ(reg->spec.labels, (NodeLabels{{"isolation", "partial"}}));
  body.erase("isolation");  // an older agent: not known, not "none lacking"
  EXPECT_FALSE(ParseRegistration(body)->session.isolation_gaps.has_value());
  for (Json bad : {Json("full"), Json{{"gaps", "cpu limit"}}, Json{{"gaps", {1}}}, Json{{"gaps", {""}}}}) {
    body["isolation"] = bad;
    auto r = ParseRegistration(body);
    ASSERT_FALSE(r.has_value()) << bad.dump();
    EXPECT_NE(r.error().message().find("isolation"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("expected"), std::string::npos) << r.error().message();
  }
}

TEST(NodeLabelFlagTest, AnOlderAgentsDriverVersionBecomesTheDriverLabel) {
  NodeSpec spec{"old-agent", "z", "r", "", 64000, 512 * 1024, "", 0};
  Json body = RegistrationJson(spec, AgentIdentity{"old-agent", "allot-agent 0.9", "535.104.05"}, {});
  body.erase("labels");
  auto reg = ParseRegistration(body);
  ASSERT_TRUE(reg.has_value()) << reg.error().ToString();
  EXPECT_EQ(reg->spec.labels, (NodeLabels{{"driver", "535.104.05"}}));
  body["labels"] = {{"driver", 550}};
  EXPECT_FALSE(ParseRegistration(body).has_value()) << "a label's value is a string";
}

}  // namespace
}  // namespace allot
