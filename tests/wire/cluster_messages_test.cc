// The assignments' dedicated clusters on the wire: a multi-node Slurm's members, controller and
// munge key round-trip; an assignment without them (an older allotd) still reads; a bad one is
// refused naming the field, and never quoting the key.
#include "wire/cluster_messages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ClusterAssignment Pair() {
  ClusterAssignment a;
  a.reservation = "pair";
  a.reservation_id = 3;
  a.window = 0;
  a.tenant = "research";
  a.orchestrator = "slurm";
  a.nodes = {"gpu-a", "gpu-b"};
  a.start_ms = 1'000;
  a.end_ms = 2'000;
  a.ssh_port = 30144;
  a.slurmctld_port = 30145;
  a.slurmd_port = 30146;
  a.members = {{"gpu-a", "10.0.0.1", 30146, 8, 64, 524288}, {"gpu-b", "10.0.0.2", 30149, 8, 64, 524288}};
  a.controller_host = "10.0.0.1";
  a.controller_port = 30145;
  a.munge_key = std::string("\x00\x01\xfe\xff", 4) + std::string(60, 'k');
  a.uid = kClusterUidBase + 3;
  return a;
}

Json Wire(const ClusterAssignment& a) { return Json{{"clusters", ClusterAssignmentsJson({a})}}; }

TEST(ClusterMessages, AMultiNodeSlurmsMembersControllerAndKeyRoundTrip) {
  Json j = Wire(Pair());
  EXPECT_EQ(j["clusters"][0]["members"][1], (Json{{"node", "gpu-b"}, {"address", "10.0.0.2"}, {"slurmd_port", 30149},
                                                  {"gpus", 8}, {"cpus", 64}, {"memory_mib", 524288}}));
  EXPECT_EQ(j["clusters"][0]["controller"], (Json{{"host", "10.0.0.1"}, {"port", 30145}}));
  EXPECT_EQ(j["clusters"][0]["munge_key"].get<std::string>().substr(0, 8), "0001feff");
  EXPECT_EQ(j["clusters"][0]["uid"], 300003);
  auto back = ParseClusterAssignments(j);
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(back->front(), Pair());
}

TEST(ClusterMessages, AnAssignmentWithoutMembersReadsAsBefore) {
  ClusterAssignment a = Pair();
  a.members.clear();
  a.controller_host.clear();
  a.controller_port = 0;
  a.munge_key.clear();
  a.uid = 0;
  Json j = Wire(a);
  EXPECT_FALSE(j["clusters"][0].contains("members"));
  EXPECT_FALSE(j["clusters"][0].contains("munge_key"));
  auto back = ParseClusterAssignments(j);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->front(), a);
}

TEST(ClusterMessages, ABadMemberControllerOrKeyIsRefusedNamingTheField) {
  struct Case {
    const char* what;
    void (*change)(Json&);
    std::string message;
  };
  const Case cases[] = {
      {"members out of order", [](Json& c) { std::swap(c["members"][0], c["members"][1]); },
       "assignments.clusters[0].members[0].node: 'gpu-b' is not nodes[0] 'gpu-a'; expected the booked nodes in order"},
      {"a member short", [](Json& c) { c["members"].erase(1); },
       "assignments.clusters[0].members: 1 entries; expected one per node (2)"},
      {"a member without an address", [](Json& c) { c["members"][1].erase("address"); },
       "assignments.clusters[0].members[1].address: missing"},
      {"a uid below the clusters' range", [](Json& c) { c["uid"] = 200000; },
       "assignments.clusters[0].uid: 200000 is out of range 300000 to 2147483647"},
      {"a member's port out of range", [](Json& c) { c["members"][1]["slurmd_port"] = 70000; },
       "assignments.clusters[0].members[1].slurmd_port: 70000 is out of range 1 to 65535"},
      {"no controller", [](Json& c) { c.erase("controller"); },
       "assignments.clusters[0].controller: missing; expected members, controller and munge_key together"},
      {"no key", [](Json& c) { c.erase("munge_key"); },
       "assignments.clusters[0].munge_key: missing; expected members, controller and munge_key together"},
      {"a controller without a port", [](Json& c) { c["controller"].erase("port"); },
       "assignments.clusters[0].controller.port: missing"},
      {"a short key", [](Json& c) { c["munge_key"] = std::string(62, 'a'); },
       "assignments.clusters[0].munge_key: 62 hex digits; expected an even number from 64 to 2048"},
      {"a key not hex", [](Json& c) { c["munge_key"] = "zz" + std::string(62, 'a'); },
       "assignments.clusters[0].munge_key: not lowercase hex; expected 0-9 and a-f only"},
  };
  for (const Case& c : cases) {
    Json j = Wire(Pair());
    c.change(j["clusters"][0]);
    auto parsed = ParseClusterAssignments(j);
    ASSERT_FALSE(parsed) << c.what;
    EXPECT_EQ(parsed.error().message(), c.message) << c.what;
    EXPECT_THAT(parsed.error().message(), Not(HasSubstr("aaaaaaaa"))) << "never the key: " << c.what;
  }
}

}  // namespace
}  // namespace allot
