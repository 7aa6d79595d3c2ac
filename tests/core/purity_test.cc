// The core is pure (STYLE.md rule 1): nothing under the core folders reads a clock, randomness,
// files, sockets or the environment. This test greps the sources so a violation fails the build.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace {

TEST(CorePurity, CoreFoldersReadNoClockRandomnessFilesOrEnvironment) {
  namespace fs = std::filesystem;
  const std::regex banned(
      R"(std::chrono::(system_clock|steady_clock|high_resolution_clock)|[^_a-z]time\(nullptr\)|std::random_device|[^a-z_]rand\(\)|#include <(fstream|iostream|httplib\.h|sqlite3\.h|libpq-fe\.h|yaml-cpp/yaml\.h|nlohmann/json\.hpp)>|getenv\()");
  int files = 0;
  for (const char* dir : {"core", "fleet", "tenancy", "booking", "state", "policy", "placement", "scheduler", "metering", "alerting"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(ALLOT_SOURCE_DIR) / "src" / dir)) {
      if (!e.is_regular_file()) continue;
      ++files;
      std::ifstream in(e.path());
      std::string line;
      int n = 0;
      while (std::getline(in, line)) {
        ++n;
        EXPECT_FALSE(std::regex_search(line, banned)) << e.path().string() << ":" << n << ": " << line;
      }
    }
  }
  EXPECT_GT(files, 20);
}

}  // namespace
