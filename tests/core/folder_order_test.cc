// The folders of src/ in one dependency order (docs/architecture.md, "Where code lives"): a
// folder may include its own headers and those of folders before it, never one after it. A new
// folder must be given its place here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Keep in step with docs/architecture.md.
const std::vector<std::string> kOrder = {"core",      "metrics", "fleet",   "wire",    "agent",  "tenancy", "booking", "state",
                                         "policy",    "placement", "scheduler", "metering", "alerting", "spec", "billing", "sim",
                                         "store",     "daemon",  "server",  "allotd", "cli"};

TEST(FolderOrder, NoFolderIncludesAFolderAfterItAndEveryFolderHasItsPlace) {
  const fs::path src = fs::path(ALLOT_SOURCE_DIR) / "src";
  std::set<std::string> folders;
  for (const auto& e : fs::directory_iterator(src)) {
    if (e.is_directory()) folders.insert(e.path().filename().string());
  }
  for (const std::string& f : folders) {
    EXPECT_NE(std::find(kOrder.begin(), kOrder.end(), f), kOrder.end()) << "src/" << f << " has no place in kOrder";
  }
  const std::regex include(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  int checked = 0;
  for (size_t rank = 0; rank < kOrder.size(); ++rank) {
    if (!fs::exists(src / kOrder[rank])) continue;
    for (const auto& e : fs::recursive_directory_iterator(src / kOrder[rank])) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path());
      std::string line;
      int n = 0;
      while (std::getline(in, line)) {
        ++n;
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        ++checked;
        auto at = std::find(kOrder.begin(), kOrder.end(), m[1].str());
        if (at == kOrder.end()) continue;  // a system header with a slash, such as <date/tz.h> in quotes
        EXPECT_LE(static_cast<size_t>(at - kOrder.begin()), rank)
            << fs::relative(e.path(), src).string() << ":" << n << ": src/" << kOrder[rank] << " includes src/" << *at
            << ", which comes after it";
      }
    }
  }
  EXPECT_GT(checked, 500);
}

}  // namespace
