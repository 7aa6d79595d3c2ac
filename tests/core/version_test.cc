// Every binary reports the build's version (CMakeLists.txt project(VERSION)), and the agent
// registers with it (AgentE2eTest.ACommandJobRuns… checks the node page).
#include "core/version.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>

namespace allot {
namespace {

std::string Output(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  return out;
}

TEST(Version, EveryBinaryPrintsTheBuildsVersion) {
  EXPECT_TRUE(std::regex_match(std::string(kAllotVersion), std::regex(R"(\d+\.\d+\.\d+)"))) << kAllotVersion;
  EXPECT_EQ(Output(std::string(ALLOT_BINARY) + " --version"), std::string("allot ") + kAllotVersion + "\n");
  EXPECT_EQ(Output(std::string(ALLOTD_BINARY) + " --version"), std::string("allotd ") + kAllotVersion + "\n");
  EXPECT_EQ(Output(std::string(ALLOT_AGENT_BINARY) + " --version"), std::string("allot-agent ") + kAllotVersion + "\n");
}

// The agent runs on every node and shares only the wire contract with allotd (src/wire/): it
// links none of allotd's store, simulator or billing libraries (it pulled all of them in through
// the server library before).
TEST(AgentBinary, LinksNoneOfAllotdsStoreSimulatorOrBillingLibraries) {
  std::string libs = Output("ldd " + std::string(ALLOT_AGENT_BINARY));
  ASSERT_NE(libs.find("libc.so"), std::string::npos) << "ldd did not list the agent's libraries: " << libs;
  for (const char* lib : {"libsqlite3", "libpq", "libyaml-cpp", "libsodium"}) {
    EXPECT_EQ(libs.find(lib), std::string::npos) << "allot-agent links " << lib << ":\n" << libs;
  }
}

}  // namespace
}  // namespace allot
