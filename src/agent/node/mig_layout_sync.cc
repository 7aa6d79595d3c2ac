#include "agent/node/mig_layout_sync.h"

#include <algorithm>
#include <tuple>

namespace allot {
namespace {

bool ByStart(const MigSlotName& a, const MigSlotName& b) { return std::tie(a.start, a.profile) < std::tie(b.start, b.profile); }

bool Contains(const std::vector<MigSlotName>& v, const MigSlotName& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string Name(const MigSlotName& i) { return i.profile + "@" + std::to_string(i.start); }

}  // namespace

MigLayoutChanges DiffMigLayout(const std::vector<MigSlotName>& held, const std::vector<MigSlotName>& desired,
                               const std::vector<MigSlotName>& in_use) {
  MigLayoutChanges out;
  for (const MigSlotName& h : held) {
    if (!Contains(desired, h) && !Contains(in_use, h)) out.destroy.push_back(h);
  }
  for (const MigSlotName& d : desired) {
    if (!Contains(held, d) && !Contains(out.create, d)) out.create.push_back(d);
  }
  std::sort(out.destroy.begin(), out.destroy.end(), ByStart);
  std::sort(out.create.begin(), out.create.end(), ByStart);
  return out;
}

MigLayoutKeeper::MigLayoutKeeper(GpuBackend& backend, std::vector<std::string> gpu_uuids,
                                 std::function<void(const std::string&)> log, int64_t recheck_ms)
    : backend_(backend), uuids_(std::move(gpu_uuids)), log_(std::move(log)), recheck_ms_(recheck_ms) {}

void MigLayoutKeeper::SetDesired(std::vector<MigGpuLayout> desired) {
  if (desired_ && *desired_ == desired) return;
  desired_ = std::move(desired);
  changed_ = true;
}

Status MigLayoutKeeper::Read() {
  auto inv = backend_.Discover();
  if (!inv) return inv.error();
  held_.clear();
  for (size_t g = 0; g < uuids_.size(); ++g) {
    for (const GpuInfo& info : inv->gpus) {
      if (info.uuid == uuids_[g]) held_[static_cast<int>(g)] = info.mig;
    }
  }
  stale_ = false;
  return Status::Ok();
}

void MigLayoutKeeper::Sync(int64_t now_ms, const std::set<std::pair<int, MigSlotName>>& in_use) {
  if (!desired_) return;
  if (!changed_ && !stale_ && now_ms < next_check_) return;
  if (Status s = Read(); !s.ok()) {
    log_("MIG layout: reading the instances: " + s.message());
    next_check_ = now_ms + 1000;
    return;
  }
  changed_ = false;
  next_check_ = now_ms + recheck_ms_;
  bool acted = false;
  problems_.clear();
  for (const MigGpuLayout& want : *desired_) {
    if (want.gpu < 0 || want.gpu >= static_cast<int>(uuids_.size())) continue;
    const std::string& uuid = uuids_[want.gpu];
    std::vector<MigSlotName> held, used;
    for (const MigGpuInstanceInfo& i : held_[want.gpu]) held.push_back({i.profile, i.start});
    for (const auto& [gpu, slot] : in_use) {
      if (gpu == want.gpu) used.push_back(slot);
    }
    MigLayoutChanges changes = DiffMigLayout(held, want.instances, used);
    std::string& problem = problems_[want.gpu];
    auto note = [&](const std::string& what, const Status& s) {
      std::string line = "GPU " + std::to_string(want.gpu) + ": " + what + ": " + s.message();
      log_("MIG layout: " + line);
      if (problem.empty()) problem = line;
    };
    for (const MigSlotName& d : changes.destroy) {
      acted = true;
      if (Status s = backend_.DestroyMigInstance(uuid, d.profile, d.start); !s.ok()) note("destroying " + Name(d), s);
    }
    for (const MigSlotName& c : changes.create) {
      acted = true;
      if (auto made = backend_.CreateMigInstance(uuid, c.profile, c.start); !made) note("creating " + Name(c), made.error());
    }
    if (!changes.destroy.empty() || !changes.create.empty()) {
      log_("MIG layout: GPU " + std::to_string(want.gpu) + ": destroyed " + std::to_string(changes.destroy.size()) +
           ", created " + std::to_string(changes.create.size()) + (problem.empty() ? "" : " (" + problem + ")"));
    }
    if (problem.empty()) problems_.erase(want.gpu);
  }
  if (!acted) return;
  // Read back what NVML now has (ids and UUIDs of the new instances); a failed step is tried
  // again at the next Sync.
  if (Status s = Read(); !s.ok()) stale_ = true;
  if (!problems_.empty()) next_check_ = now_ms + 1000;
}

const MigGpuInstanceInfo* MigLayoutKeeper::Find(int gpu, const std::string& profile, int start) const {
  auto it = held_.find(gpu);
  if (it == held_.end()) return nullptr;
  for (const MigGpuInstanceInfo& i : it->second) {
    if (i.profile == profile && i.start == start && !i.compute.empty() && !i.compute[0].uuid.empty()) return &i;
  }
  return nullptr;
}

std::string MigLayoutKeeper::Problem(int gpu) const {
  auto it = problems_.find(gpu);
  return it == problems_.end() ? "" : it->second;
}

std::vector<MigGpuLayout> MigLayoutKeeper::Held() const {
  std::vector<MigGpuLayout> out;
  for (const auto& [gpu, instances] : held_) {
    MigGpuLayout l{gpu, {}};
    for (const MigGpuInstanceInfo& i : instances) l.instances.push_back({i.profile, i.start});
    std::sort(l.instances.begin(), l.instances.end(), ByStart);
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace allot
