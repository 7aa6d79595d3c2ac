// A job image and host driver files for tests of image tasks: the busybox root (and OCI layout)
// of scripts/busybox-image, and fake driver library files in a directory outside /tmp (a task's
// private /tmp would cover them; real ones live in /usr/lib/<arch>), removed with this object.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace allot::testing {

// Makes DIR/rootfs (and DIR/layout, DIR/image.tar when umoci is there); false on failure.
inline bool MakeBusyboxImage(const std::string& dir) {
  const std::string cmd = std::string(ALLOT_SOURCE_DIR) + "/scripts/busybox-image " + dir + " >/dev/null";
  return std::system(cmd.c_str()) == 0;
}

class FakeDriverFiles {
 public:
  // Each name (e.g. "libcuda.so.1") becomes a file holding "fake <name>".
  explicit FakeDriverFiles(const std::vector<std::string>& names)
      : dir_("/var/tmp/allot-driver-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
    std::filesystem::create_directories(dir_);
    for (const std::string& n : names) std::ofstream(dir_ + "/" + n) << "fake " << n << "\n";
  }
  ~FakeDriverFiles() { std::filesystem::remove_all(dir_); }
  FakeDriverFiles(const FakeDriverFiles&) = delete;
  FakeDriverFiles& operator=(const FakeDriverFiles&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace allot::testing
