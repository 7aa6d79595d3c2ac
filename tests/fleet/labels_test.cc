#include "fleet/labels.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

Requirements Req(const std::string& text) {
  auto r = ParseRequirementList("require", text);
  EXPECT_TRUE(r.has_value()) << text << ": " << r.error().ToString();
  return r ? *r : Requirements{};
}

TEST(LabelsTest, DottedVersionsCompareComponentByComponentWithMissingOnesAsZero) {
  struct Case {
    const char *a, *b;
    int want;
  } cases[] = {
      {"550.54.15", "550", 1},  // 550.54.15 > 550.0.0
      {"550", "550.0", 0},
      {"9.0", "8.9", 1},
      {"10.0", "9.10", 1},  // numeric, not text: 10 > 9
      {"535.104.05", "550", -1},
  };
  for (const Case& c : cases) {
    auto a = ParseVersion(c.a), b = ParseVersion(c.b);
    ASSERT_TRUE(a && b) << c.a << " " << c.b;
    EXPECT_EQ(CompareVersions(*a, *b), c.want) << c.a << " vs " << c.b;
  }
  EXPECT_FALSE(ParseVersion("nvlink"));
  EXPECT_FALSE(ParseVersion("9."));
  EXPECT_FALSE(ParseVersion(".9"));
  EXPECT_FALSE(ParseVersion(""));
}

TEST(LabelsTest, EachOperatorMatchesAsDocumented) {
  NodeLabels node = {{"cuda", "9.0"}, {"driver", "550.54.15"}, {"interconnect", "nvlink"}};
  struct Case {
    const char* require;
    bool want;
  } cases[] = {
      {"driver>=550", true},      {"driver>550", true},         {"driver>550.54.15", false},
      {"driver<=550.54.15", true}, {"driver<560", true},         {"driver<550", false},
      {"cuda>=9.0", true},        {"cuda>=9.1", false},         {"interconnect=nvlink", true},
      {"interconnect==nvlink", true}, {"interconnect!=nvlink", false}, {"interconnect!=pcie", true},
      {"driver>=550,cuda>=9.0,interconnect=nvlink", true},     {"driver>=550,cuda>=10", false},
      {"rack_power=a", false},     // a node without the label never satisfies…
      {"rack_power!=a", false},    // …not even a "not equal"
  };
  for (const Case& c : cases) EXPECT_EQ(Satisfies(node, Req(c.require)), c.want) << c.require;
  // An ordered condition on a label that is no version never holds.
  EXPECT_FALSE(Satisfies(NodeLabels{{"driver", "open-kernel"}}, Req("driver>=550")));
  EXPECT_TRUE(Satisfies(NodeLabels{}, Requirements{}));
}

TEST(LabelsTest, RequirementsAreSortedAndDeduplicatedSoEqualSetsCompareEqual) {
  EXPECT_EQ(Req("interconnect=nvlink,driver>=550"), Req("driver>=550, interconnect=nvlink,driver>=550"));
  EXPECT_EQ(FormatRequirements(Req("interconnect=nvlink,driver >= 550")), "driver>=550,interconnect=nvlink");
}

TEST(LabelsTest, EveryBadRequirementNamesTheFieldTheValueAndWhatWasExpected) {
  struct Case {
    const char* label;
    const char* condition;
    std::vector<std::string> says;
  } cases[] = {
      {"driver", ">=open", {"require.driver", "'>=open'", "not a version", "expected a dotted numeric version"}},
      {"cuda", "<nine", {"require.cuda", "'<nine'", "expected a dotted numeric version"}},
      {"driver", ">=", {"require.driver", "'>='", "expected an optional operator"}},
      {"driver", "", {"require.driver", "''", "expected an optional operator"}},
      {"interconnect", "nv link", {"require.interconnect", "'nv link'", "expected"}},
      {"Driver", ">=550", {"require (a label name)", "'Driver'", "expected 1 to 63 of a-z"}},
      {"_x", "a", {"require (a label name)", "'_x'", "starting with a letter or digit"}},
  };
  for (const Case& c : cases) {
    auto r = ParseRequirement("require", c.label, c.condition);
    ASSERT_FALSE(r.has_value()) << c.label << " " << c.condition;
    for (const std::string& s : c.says) EXPECT_NE(r.error().message().find(s), std::string::npos) << r.error().message();
  }
  for (const char* text : {"driver", "driver>=550,,cuda>=9", "driver>=x"}) {
    auto r = ParseRequirementList("require", text);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_NE(r.error().message().find("require"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("expected"), std::string::npos) << r.error().message();
  }
  std::string many;
  for (int i = 0; i <= static_cast<int>(kMaxRequirements); ++i) many += (many.empty() ? "" : ",") + ("l" + std::to_string(i)) + "=x";
  auto r = ParseRequirementList("require", many);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("expected at most 16"), std::string::npos) << r.error().message();
  EXPECT_TRUE(ParseRequirementList("require", "").has_value());
}

TEST(LabelsTest, BadLabelsNameTheLabelAndWhatWasExpected) {
  Status s = CheckLabels("labels", {{"driver", "550"}, {"driver", "560"}});
  EXPECT_NE(s.message().find("labels.driver: the label is given twice"), std::string::npos) << s.message();
  s = CheckLabels("labels", {{"interconnect", "nv link"}});
  EXPECT_NE(s.message().find("labels.interconnect: 'nv link'"), std::string::npos) << s.message();
  s = CheckLabels("labels", {{"Zone", "a"}});
  EXPECT_NE(s.message().find("'Zone'"), std::string::npos) << s.message();
  NodeLabels many;
  for (int i = 0; i <= static_cast<int>(kMaxLabels); ++i) many.emplace_back("l" + std::to_string(i), "x");
  EXPECT_FALSE(CheckLabels("labels", many).ok());
  EXPECT_TRUE(CheckLabels("labels", {{"cuda", "9.0"}, {"driver", "550.54.15"}}).ok());
}

}  // namespace
}  // namespace allot
