#include "metering/meter.h"

#include "metering/state_usage.h"

namespace allot {

const char* UsageClassName(UsageClass c) {
  switch (c) {
    case UsageClass::kGuaranteed: return "guaranteed";
    case UsageClass::kBurstable: return "burstable";
    case UsageClass::kBestEffort: return "best-effort";
    case UsageClass::kReserved: return "reserved";
  }
  return "guaranteed";
}

void AppendSplit(const UsageInterval& iv, const NextBoundary& next, std::vector<UsageInterval>& out) {
  if (iv.end_ms <= iv.start_ms) return;
  UsageInterval part = iv;
  while (next) {
    int64_t b = next(iv.tenant, part.start_ms);
    if (b >= iv.end_ms) break;
    part.end_ms = b;
    out.push_back(part);
    part.start_ms = b;
  }
  part.end_ms = iv.end_ms;
  out.push_back(part);
}

void Meter::Observe(const Event& e, const ClusterState& after) {
  if (const auto* p = std::get_if<JobPlaced>(&e.body)) {
    const Job& j = after.job(p->job);
    UsageInterval base;
    base.job = j.id;
    base.tenant = j.spec.tenant;
    base.gpu_resource = j.spec.gpu_resource;
    base.usage_class = ClassOf(j, p->admission);
    base.topology = j.spec.topology;
    base.start_ms = e.time_ms;
    std::vector<UsageInterval>& nodes = open_[j.id];
    nodes.clear();
    // Tasks are placed group by group, in order: task k belongs to the group that covers k.
    size_t k = 0;
    for (const TaskGroup& g : j.spec.groups) {
      for (int i = 0; i < g.count && k < p->placement.size(); ++i, ++k) {
        const TaskPlacement& t = p->placement[k];
        UsageInterval* iv = nullptr;
        for (UsageInterval& n : nodes) {
          if (n.node == t.node) iv = &n;
        }
        if (iv == nullptr) {
          nodes.push_back(base);
          iv = &nodes.back();
          iv->node = t.node;
        }
        iv->gpu += g.gpu;
        iv->cpu += t.cpu;
        iv->memory += t.memory;
      }
    }
    return;
  }
  if (const auto* s = std::get_if<JobStopped>(&e.body)) return Close(s->job, e.time_ms);
  if (const auto* f = std::get_if<JobFinished>(&e.body)) return Close(f->job, e.time_ms);
  if (const auto* c = std::get_if<JobCancelled>(&e.body)) return Close(c->job, e.time_ms);
  if (const auto* f = std::get_if<JobFailed>(&e.body)) return Close(f->job, e.time_ms);
  // A node that failed or re-registered requeued the jobs it held: their runs end now.
  if (std::holds_alternative<NodeFailed>(e.body) || std::holds_alternative<NodeRegistered>(e.body)) {
    std::vector<JobId> ended;
    for (const auto& [job, nodes] : open_) {
      if (!after.job(job).holds_resources()) ended.push_back(job);
    }
    for (JobId job : ended) Close(job, e.time_ms);
  }
}

void Meter::Close(JobId job, int64_t end_ms) {
  auto it = open_.find(job);
  if (it == open_.end()) return;  // cancelled while pending: it held nothing
  for (UsageInterval& iv : it->second) {
    iv.end_ms = end_ms;
    AppendSplit(iv, next_, closed_);
  }
  open_.erase(it);
}

std::vector<UsageInterval> Meter::TakeClosed() {
  std::vector<UsageInterval> out;
  out.swap(closed_);
  return out;
}

std::vector<UsageInterval> Meter::OpenAt(int64_t now_ms) const {
  std::vector<UsageInterval> out;
  for (const auto& [job, nodes] : open_) {
    for (UsageInterval iv : nodes) {
      iv.end_ms = now_ms;
      AppendSplit(iv, next_, out);
    }
  }
  return out;
}

std::vector<UsageInterval> Meter::AllAt(int64_t now_ms) const {
  std::vector<UsageInterval> out = closed_;
  std::vector<UsageInterval> open = OpenAt(now_ms);
  out.insert(out.end(), open.begin(), open.end());
  return out;
}

}  // namespace allot
