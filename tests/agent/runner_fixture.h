// A Runner over a scratch work root, with helpers to describe a task and wait for its end. Each
// test gets its own cgroup group ("allot-test-<pid>") so parallel test processes never share one.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/run/native_sandbox.h"
#include "agent/run/runner.h"
#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"

namespace allot::testing {

inline bool BwrapAvailable() { return ::access("/usr/bin/bwrap", X_OK) == 0; }
// allot's own sandbox makes its namespaces as root.
inline bool NativeSandboxAvailable() { return ::geteuid() == 0; }
// Why a test of `mode` cannot run here, or "" when it can (a skip says so).
inline std::string SandboxMissing(SandboxMode mode) {
  if (mode == SandboxMode::kBwrap && !BwrapAvailable()) return "no /usr/bin/bwrap";
  if (mode == SandboxMode::kNative && !NativeSandboxAvailable())
    return "NOT RUN: allot's own sandbox needs root, and these tests do not run as root";
  if (mode == SandboxMode::kNative && !NativeSandboxHostLacks().empty())
    return "NOT RUN: allot's own sandbox: this host lacks " + NativeSandboxHostLacks();
  return "";
}

class RunnerTest : public ::testing::Test {
 protected:
  RunnerTest() : dir_("runner") {}

  std::string root() const { return (dir_ / "work").string(); }

  RunnerOptions Options(SandboxMode mode) const {
    RunnerOptions o;
    o.work_root = root();
    o.sandbox = mode;
    o.init_path = ALLOT_INIT_BINARY;
    o.cgroup_group = "allot-test-" + std::to_string(::getpid());
    return o;
  }

  // A runner; the test skips when it asks for a sandbox the machine lacks.
  std::unique_ptr<Runner> Make(SandboxMode mode) {
    if (!SandboxMissing(mode).empty()) return nullptr;
    auto r = Runner::Create(Options(mode));
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? std::move(*r) : nullptr;
  }

  TaskLaunch Launch(const std::string& key, std::vector<std::string> argv,
                    const std::string& tenant = "research/nlp") const {
    return LaunchIn(root(), key, std::move(argv), tenant);
  }
  // The same for a runner over another work root.
  TaskLaunch LaunchIn(const std::string& work_root, const std::string& key, std::vector<std::string> argv,
                      const std::string& tenant = "research/nlp") const {
    TaskLaunch l;
    l.key = key;
    l.argv = std::move(argv);
    l.tenant = tenant;
    l.work_dir = work_root + "/" + tenant + "/work";
    l.checkpoint_dir = work_root + "/" + tenant + "/checkpoints/" + key;
    l.log_path = (dir_ / "logs" / (key + ".log")).string();
    l.preempt_file = l.work_dir + "/.allot-preempt-" + key;
    l.env = {{"ALLOT_CHECKPOINT_DIR", l.checkpoint_dir}, {"ALLOT_PREEMPT_FILE", l.preempt_file}};
    return l;
  }

  static TaskLaunch Sh(TaskLaunch l, const std::string& script) {
    l.argv = {"/bin/sh", "-c", script};
    return l;
  }

  // Polls every 20 ms until `key` ends; fails the test after timeout_ms.
  static std::optional<TaskExit> WaitFor(Runner& runner, const std::string& key, int64_t timeout_ms = 8000) {
    for (int64_t waited = 0; waited < timeout_ms; waited += 20) {
      for (TaskExit& e : runner.Poll())
        if (e.key == key) return e;
      SleepMillis(20);
    }
    ADD_FAILURE() << "task " << key << " did not end within " << timeout_ms << " ms";
    return std::nullopt;
  }

  // Waits until `path` exists (a task's "ready" marker).
  static bool WaitForFile(const std::string& path, int64_t timeout_ms = 5000) {
    for (int64_t waited = 0; waited < timeout_ms; waited += 10) {
      if (Exists(path)) return true;
      SleepMillis(10);
    }
    return false;
  }

  static std::string Read(const std::string& path) {
    auto t = ReadText(path);
    return t ? *t : "";
  }

  ScratchDir dir_;
};

inline std::string ModeName(const ::testing::TestParamInfo<SandboxMode>& info) {
  return info.param == SandboxMode::kBwrap ? "Bwrap" : info.param == SandboxMode::kNative ? "Native" : "NoSandbox";
}

}  // namespace allot::testing
