// Sharing levels: how a node's GPUs are handed out. A node belongs to one pool kind:
//
//   exclusive  whole GPUs only (the default)
//   mig        each GPU carries a MIG layout; a task holds one instance
//   mps        each GPU runs an MPS server; a task is one client with an active-thread
//              percentage and a pinned memory limit; at most 48 clients; percentages may be
//              oversubscribed by the pool's factor, memory never
//   timeslice  each GPU is offered as N replicas; a task holds one (best effort, no isolation)
//
// The share state of each GPU lives here, with the rules that change it; the fleet and the
// placement view both use these functions so a plan and its application agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "fleet/mig.h"

namespace allot {

enum class Sharing : uint8_t { kExclusive, kMig, kMps, kTimeslice };
const char* SharingName(Sharing s);
// "exclusive", "mig", "mps", "timeslice" → the kind; nullopt otherwise.
std::optional<Sharing> ParseSharing(std::string_view name);

inline constexpr int kMpsMaxClients = 48;  // CUDA MPS: clients per GPU (Volta and later)

// What one task holds of one GPU. kWhole: the GPU itself (exclusive pools).
enum class ShareKind : uint8_t { kWhole, kMig, kMps, kTimeslice };
const char* ShareKindName(ShareKind k);
// The kind ShareKindName names; nullopt for any other text.
std::optional<ShareKind> ParseShareKind(std::string_view name);

struct TaskShare {
  ShareKind kind = ShareKind::kWhole;
  MigInstance mig{};         // kMig: the instance held
  bool mig_created = false;  // kMig: the plan creates this instance on free slices
  uint16_t percent = 0;      // kMps: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  // kMps: pinned device memory limit, MiB (no GPU has 2^31 MiB: 32 bits keep a task's
  // placement, walked by the thousand in a preemption search, at 48 bytes).
  int32_t memory = 0;
  // kMps: the tenant whose MPS server the client joins. Each tenant's clients on a GPU share
  // one server (the agent runs a control daemon per GPU and tenant uid); different tenants'
  // servers are time-sliced against each other (docs/real-gpu.md). Not journalled: the job's
  // tenant, stamped where a placement enters the state (ClusterState::StampShares).
  TenantId tenant;
  bool operator==(const TaskShare&) const = default;
};

struct MigSlot {
  MigInstance instance;
  bool held = false;
  bool operator==(const MigSlot&) const = default;
};

// The share state of one GPU in a shared pool.
struct GpuShareState {
  std::vector<MigSlot> mig;  // kMig: the current layout, held or free
  int64_t ready_ms = 0;      // kMig: instances usable from this time (re-layout delay)
  int64_t layout_ms = -1;    // kMig: when a re-layout last changed this GPU (-1: never)
  int clients = 0;           // kMps clients / kTimeslice replicas held
  int percent = 0;           // kMps: active-thread percent held, summed
  int64_t memory = 0;        // kMps: pinned memory held, MiB
  // kMps: clients held per tenant (each tenant's in a server of its own), by tenant id. Derived
  // from the holds, like clients.
  std::vector<std::pair<TenantId, int>> mps_tenants;
  // kMig on an agent-managed node: the agent makes the planned instances, and they are usable
  // once it reports holding them (MigLayoutHeld), not from ready_ms.
  bool agent = false;
  MigLayout node_layout;     // kMig, agent: the instances the node last reported holding, sorted

  bool idle() const {
    if (clients > 0) return false;
    for (const MigSlot& s : mig) if (s.held) return false;
    return true;
  }
  MigLayout Layout() const {
    MigLayout l;
    for (const MigSlot& s : mig) l.push_back(s.instance);
    return l;
  }
  bool operator==(const GpuShareState&) const = default;
};

// The pool settings a shared node carries.
struct SharePool {
  Sharing sharing = Sharing::kExclusive;
  const MigGeometry* mig = nullptr;  // kMig
  int replicas = 1;                  // kTimeslice
  int64_t oversubscription_milli = 1000;  // kMps: percent capacity = 100 × this / 1000
  int64_t gpu_memory = 0;            // MiB of one GPU
};

// Whether an agent-managed MIG GPU holds its planned layout: every instance the node reported is
// planned and every free planned instance is reported. A held instance the node lacks is being
// made for the task that holds it (the plan checked it fits beside the others), so it does not
// stop the GPU from taking more shares.
bool MigLayoutHeld(const GpuShareState& gpu);
// Whether a MIG GPU's instances are usable now: on an agent-managed node once MigLayoutHeld,
// elsewhere (simulated nodes) from ready_ms.
bool MigReady(const GpuShareState& gpu, int64_t now_ms);
inline constexpr const char* kMigLayoutNotHeld = "MIG layout is not yet held by the node";

// Whether an MPS client of `tenant` on `gpu` would share it with another tenant's server, and
// so be time-sliced against it rather than run beside its own tenant's clients.
bool MpsMixes(const GpuShareState& gpu, TenantId tenant);

// Whether `share` can be held on `gpu` now. On false, `why` says what is short.
bool CanHold(const SharePool& pool, const GpuShareState& gpu, const TaskShare& share, int64_t now_ms,
             std::string* why = nullptr);
// REQUIRES: CanHold.
void Hold(GpuShareState& gpu, const TaskShare& share);
// REQUIRES: `share` is held on `gpu`. A MIG instance stays in the layout, free.
void Drop(GpuShareState& gpu, const TaskShare& share);

// Replaces the free instances of a MIG GPU by `layout`. Ok when `layout` is valid for the
// geometry and keeps every held instance; else names what is wrong.
Status CheckRelayout(const SharePool& pool, const GpuShareState& gpu, const MigLayout& layout);

}  // namespace allot
