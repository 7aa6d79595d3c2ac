#include "fleet/sharing.h"

#include <algorithm>

#include "core/quantity.h"

namespace allot {

const char* SharingName(Sharing s) {
  switch (s) {
    case Sharing::kExclusive: return "exclusive";
    case Sharing::kMig: return "mig";
    case Sharing::kMps: return "mps";
    case Sharing::kTimeslice: return "timeslice";
  }
  return "exclusive";
}

std::optional<Sharing> ParseSharing(std::string_view name) {
  for (Sharing s : {Sharing::kExclusive, Sharing::kMig, Sharing::kMps, Sharing::kTimeslice}) {
    if (name == SharingName(s)) return s;
  }
  return std::nullopt;
}

const char* ShareKindName(ShareKind k) {
  switch (k) {
    case ShareKind::kWhole: return "whole";
    case ShareKind::kMig: return "mig";
    case ShareKind::kMps: return "mps";
    case ShareKind::kTimeslice: return "timeslice";
  }
  return "whole";
}

std::optional<ShareKind> ParseShareKind(std::string_view name) {
  for (ShareKind k : {ShareKind::kWhole, ShareKind::kMig, ShareKind::kMps, ShareKind::kTimeslice}) {
    if (name == ShareKindName(k)) return k;
  }
  return std::nullopt;
}

namespace {

bool Fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return false;
}

}  // namespace

bool MigLayoutHeld(const GpuShareState& gpu) {
  for (const MigInstance& i : gpu.node_layout) {
    bool planned = false;
    for (const MigSlot& s : gpu.mig) planned |= s.instance == i;
    if (!planned) return false;
  }
  for (const MigSlot& s : gpu.mig) {
    if (!s.held && !std::binary_search(gpu.node_layout.begin(), gpu.node_layout.end(), s.instance)) return false;
  }
  return true;
}

bool MigReady(const GpuShareState& gpu, int64_t now_ms) {
  return gpu.agent ? MigLayoutHeld(gpu) : gpu.ready_ms <= now_ms;
}

bool CanHold(const SharePool& pool, const GpuShareState& gpu, const TaskShare& share, int64_t now_ms,
             std::string* why) {
  switch (share.kind) {
    case ShareKind::kWhole:
      return Fail(why, "a whole GPU is not handed out from a shared pool");
    case ShareKind::kMig: {
      if (pool.sharing != Sharing::kMig || !pool.mig) return Fail(why, "not a MIG pool");
      if (gpu.agent && !MigLayoutHeld(gpu)) return Fail(why, std::string("its ") + kMigLayoutNotHeld);
      if (!gpu.agent && gpu.ready_ms > now_ms) return Fail(why, "the GPU is being re-laid out");
      if (share.mig.profile >= pool.mig->profiles.size()) return Fail(why, "unknown MIG profile");
      if (!share.mig_created) {
        for (const MigSlot& s : gpu.mig) {
          if (s.instance == share.mig) return s.held ? Fail(why, "the MIG instance is held") : true;
        }
        return Fail(why, "no such MIG instance");
      }
      if (!CanCreateMig(*pool.mig, gpu.Layout(), share.mig.profile, share.mig.start)) {
        return Fail(why, "the MIG instance cannot be created beside the GPU's layout");
      }
      return true;
    }
    case ShareKind::kMps: {
      if (pool.sharing != Sharing::kMps) return Fail(why, "not an MPS pool");
      if (gpu.clients + 1 > kMpsMaxClients) return Fail(why, "the GPU has 48 MPS clients");
      if (static_cast<int64_t>(gpu.percent + share.percent) * 1000 > 100 * pool.oversubscription_milli) {
        return Fail(why, "active-thread percentages would exceed " + FormatMilli(pool.oversubscription_milli * 100) + "%");
      }
      if (gpu.memory + share.memory > pool.gpu_memory) return Fail(why, "GPU memory would be oversubscribed");
      return true;
    }
    case ShareKind::kTimeslice:
      if (pool.sharing != Sharing::kTimeslice) return Fail(why, "not a time-sliced pool");
      if (gpu.clients + 1 > pool.replicas) return Fail(why, "every replica is held");
      return true;
  }
  return false;
}

namespace {

// Where `tenant`'s entry is, or goes, in the GPU's mps_tenants (kept by tenant id).
std::vector<std::pair<TenantId, int>>::iterator MpsTenantAt(GpuShareState& gpu, TenantId tenant) {
  return std::lower_bound(gpu.mps_tenants.begin(), gpu.mps_tenants.end(), std::pair{tenant, 0});
}

}  // namespace

bool MpsMixes(const GpuShareState& gpu, TenantId tenant) {
  for (const auto& [t, clients] : gpu.mps_tenants)
    if (t != tenant) return true;
  return false;
}

void Hold(GpuShareState& gpu, const TaskShare& share) {
  switch (share.kind) {
    case ShareKind::kWhole:
      break;
    case ShareKind::kMig: {
      for (MigSlot& s : gpu.mig) {
        if (s.instance == share.mig) {
          s.held = true;
          return;
        }
      }
      gpu.mig.push_back({share.mig, true});
      break;
    }
    case ShareKind::kMps: {
      gpu.clients += 1;
      gpu.percent += share.percent;
      gpu.memory += share.memory;
      auto it = MpsTenantAt(gpu, share.tenant);
      if (it == gpu.mps_tenants.end() || it->first != share.tenant) {
        gpu.mps_tenants.insert(it, {share.tenant, 1});
      } else {
        ++it->second;
      }
      break;
    }
    case ShareKind::kTimeslice:
      gpu.clients += 1;
      break;
  }
}

void Drop(GpuShareState& gpu, const TaskShare& share) {
  switch (share.kind) {
    case ShareKind::kWhole:
      break;
    case ShareKind::kMig:
      for (MigSlot& s : gpu.mig) {
        if (s.instance == share.mig) s.held = false;
      }
      break;
    case ShareKind::kMps: {
      gpu.clients -= 1;
      gpu.percent -= share.percent;
      gpu.memory -= share.memory;
      auto it = MpsTenantAt(gpu, share.tenant);
      if (it != gpu.mps_tenants.end() && it->first == share.tenant && --it->second == 0) gpu.mps_tenants.erase(it);
      break;
    }
    case ShareKind::kTimeslice:
      gpu.clients -= 1;
      break;
  }
}

Status CheckRelayout(const SharePool& pool, const GpuShareState& gpu, const MigLayout& layout) {
  if (pool.sharing != Sharing::kMig || !pool.mig) return FailedPrecondition("not a MIG pool");
  for (const MigSlot& s : gpu.mig) {
    if (s.held && std::find(layout.begin(), layout.end(), s.instance) == layout.end()) {
      return FailedPrecondition("the new layout drops the held instance " +
                                std::string(pool.mig->profiles[s.instance.profile].name) + "@" +
                                std::to_string(s.instance.start));
    }
  }
  return ValidateMigLayout(*pool.mig, layout);
}

}  // namespace allot
