// A fresh directory for one test — under gtest's temp dir, named by the process and the test so
// parallel ctest runs never share one — removed when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace allot::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix)
      : path_(std::filesystem::path(::testing::TempDir()) /
              (prefix + "-" + std::to_string(::getpid()) + "-" + TestName())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  // A parameterized test's name ends in "/<n>"; as a path that would nest, and the parent would
  // outlive the test.
  static std::string TestName() {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name)
      if (c == '/') c = '_';
    return name;
  }

  std::filesystem::path path_;
};

}  // namespace allot::testing
