// A MIG node holds the layout allotd planned for each GPU (assignments' "mig"), not one instance
// per task: instances are made ahead of the tasks that use them and stay when those tasks end,
// so allotd's model of idle instances is what the node really has. The agent reports what it
// holds in each heartbeat, and allotd places MIG shares on a GPU only once the report matches
// its plan (fleet/sharing.h, MigLayoutHeld).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agent/gpu_backend.h"
#include "wire/agent_messages.h"

namespace allot {

using MigSlotName = MigGpuLayout::Instance;  // (profile, start)

// What to change on one GPU: destroy, then create, each by start.
struct MigLayoutChanges {
  std::vector<MigSlotName> destroy;
  std::vector<MigSlotName> create;
  bool operator==(const MigLayoutChanges&) const = default;
};

// `held`: the GPU's instances; `desired`: the plan's; `in_use`: instances a running task uses,
// never destroyed (allotd keeps a held instance in its plan, so this only matters while a
// re-layout races a task's end). Pure.
MigLayoutChanges DiffMigLayout(const std::vector<MigSlotName>& held, const std::vector<MigSlotName>& desired,
                               const std::vector<MigSlotName>& in_use);

// Keeps every GPU at its desired layout through the GpuBackend.
// REQUIRES: one caller at a time (the agent's main loop).
class MigLayoutKeeper {
 public:
  // `gpu_uuids`: the node's usable GPUs, by the index assignments use.
  MigLayoutKeeper(GpuBackend& backend, std::vector<std::string> gpu_uuids, std::function<void(const std::string&)> log,
                  int64_t recheck_ms = 10000);

  // allotd's newest plan. Until the first one the keeper changes nothing.
  void SetDesired(std::vector<MigGpuLayout> desired);
  // Destroys what the plan dropped (unless in use) and creates what it added. Reads NVML only
  // when the plan changed, a step failed, Invalidate was called, or recheck_ms passed.
  void Sync(int64_t now_ms, const std::set<std::pair<int, MigSlotName>>& in_use);
  // The instances changed behind the keeper's back (a reset): read them again at the next Sync.
  void Invalidate() { stale_ = true; }

  // The instance (profile, start) on GPU `gpu`, or nullptr while the node lacks it.
  const MigGpuInstanceInfo* Find(int gpu, const std::string& profile, int start) const;
  // Why GPU `gpu` is not at its plan ("" when it is or nothing failed).
  std::string Problem(int gpu) const;
  // What each GPU holds, by GPU, instances by start (the heartbeat's "mig").
  std::vector<MigGpuLayout> Held() const;

 private:
  Status Read();

  GpuBackend& backend_;
  std::vector<std::string> uuids_;
  std::function<void(const std::string&)> log_;
  int64_t recheck_ms_;
  std::optional<std::vector<MigGpuLayout>> desired_;
  bool changed_ = true;  // the plan changed since the last Sync
  bool stale_ = true;    // held_ may not be what NVML has
  int64_t next_check_ = 0;
  std::map<int, std::vector<MigGpuInstanceInfo>> held_;  // by GPU index
  std::map<int, std::string> problems_;                  // by GPU index
};

}  // namespace allot
