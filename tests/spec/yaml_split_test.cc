// The jobs list cut from a scenario (spec/yaml_split.h) to be parsed a piece at a time: only the
// plain block shape is cut, every other line keeps its number, and what is read from the
// pieces (jobs, lines, errors) is what the whole document gives.
#include <gtest/gtest.h>

#include "spec/scenario.h"
#include "spec/yaml_split.h"

namespace allot {
namespace {

const char* kHead =
    "fleet:\n"
    "  - {prefix: h-, count: 2, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}\n"
    "tenants: [{path: t}]\n";

TEST(YamlSplit, CutsABlockListIntoItemsAndBlanksItLineForLine) {
  std::string text = std::string(kHead) +
                     "jobs:   # the jobs\n"
                     "  - name: a\n"
                     "    tenant: t\n"
                     "  # between\n"
                     "\n"
                     "  - {name: b, tenant: t}\n"
                     "scheduler: {pass_interval: 30s}\n";
  auto split = SplitTopLevelSequence(text, "jobs");
  ASSERT_TRUE(split.has_value());
  ASSERT_EQ(split->items.size(), 2u);
  EXPECT_EQ(split->items[0].first_line, 4);
  EXPECT_EQ(text.substr(split->items[0].begin, split->items[0].end - split->items[0].begin),
            "  - name: a\n    tenant: t\n  # between\n\n");
  EXPECT_EQ(split->items[1].first_line, 8);
  EXPECT_EQ(text.substr(split->items[1].begin, split->items[1].end - split->items[1].begin), "  - {name: b, tenant: t}\n");
  EXPECT_EQ(split->rest, std::string(kHead) + "\n\n\n\n\n\nscheduler: {pass_interval: 30s}\n");
}

TEST(YamlSplit, CutsItemsAtColumnZero) {
  auto split = SplitTopLevelSequence("jobs:\n- {name: a}\n- {name: b}\n", "jobs");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->items.size(), 2u);
  EXPECT_EQ(split->rest, "\n\n\n");
}

TEST(YamlSplit, LeavesEveryOtherShapeToTheWholeDocument) {
  const char* shapes[] = {
      "fleet: []\n",                                               // no jobs
      "jobs: [{name: a}, {name: b}]\n",                            // a flow list
      "jobs:\n  - &a {name: a}\n  - *a\n",                         // an anchor and an alias
      "jobs:\n  - !job {name: a}\n",                               // a tag
      "jobs:\n  - {name: a}\n---\njobs:\n  - {name: b}\n",          // two documents
      "jobs:\n    - {name: a}\n  - {name: b}\n",                    // an item left of the first
      "jobs:\n\t- {name: a}\n",                                    // a tab
      "jobs:\n",                                                   // no items
      "{jobs: [{name: a}]}\n",                                     // a flow mapping
  };
  for (const char* s : shapes) EXPECT_FALSE(SplitTopLevelSequence(s, "jobs").has_value()) << s;
}

TEST(YamlSplit, PiecesReadAsTheWholeDocumentWithTheirLines) {
  std::string block = std::string(kHead) + "jobs:\n";
  std::string flow = std::string(kHead) + "jobs: [\n";
  for (int i = 0; i < 2100; ++i) {  // three pieces of 1,024
    std::string job = "{name: j" + std::to_string(i) + ", tenant: t, duration: " + std::to_string(i + 1) + "s, tasks: {gpus: " +
                      std::to_string(1 + i % 8) + "}}";
    block += "  - " + job + "\n";
    flow += "    " + job + ",\n";
  }
  flow += "  ]\n";
  auto cut = ParseScenario(block, "s.yaml");
  auto whole = ParseScenario(flow, "s.yaml");
  ASSERT_TRUE(cut.has_value()) << cut.error().message();
  ASSERT_TRUE(whole.has_value()) << whole.error().message();
  ASSERT_EQ(cut->jobs.size(), 2100u);
  ASSERT_EQ(whole->jobs.size(), 2100u);
  for (size_t i = 0; i < cut->jobs.size(); ++i) {
    ASSERT_EQ(cut->jobs[i].spec, whole->jobs[i].spec) << i;
    ASSERT_EQ(cut->jobs[i].line, whole->jobs[i].line) << i;
  }
  EXPECT_EQ(cut->jobs[2099].line, 5 + 2099);
  // A name used again in a later piece, and a bad field on the third line of a block item.
  std::string twice = block + "  - {name: j5, tenant: t, duration: 1s, tasks: {gpus: 1}}\n";
  auto dup = ParseScenario(twice, "s.yaml");
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().message(), "s.yaml:2105: jobs[2100].name: 'j5' is used twice in tenant t; expected job names unique within a tenant");
  std::string bad = block + "  - name: late\n    tenant: t\n    duration: soon\n    tasks: {gpus: 1}\n";
  auto refused = ParseScenario(bad, "s.yaml");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message().substr(0, 37), "s.yaml:2107: jobs[2100].duration: 'so");
}

}  // namespace
}  // namespace allot
