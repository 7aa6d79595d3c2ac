// ClusterState::VerifyInvariants: the state's derived parts recomputed from its primary state
// and compared (free capacity, MIG and MPS holdings, domain counts, pending groups, tenant usage,
// running GPUs by priority). Run after every pass by `allot sim --verify` and by the tests.
#include <algorithm>
#include <bit>
#include <map>

#include "fleet/mig.h"
#include "state/cluster_state.h"
#include "state/domain_gpus.h"

namespace allot {

Status ClusterState::VerifyInvariants() const {
  // 1. Every node's free = capacity - what active jobs hold, and nothing negative.
  std::vector<NodeFree> held(fleet_.size());
  std::vector<std::vector<GpuShareState>> shares(fleet_.size());
  for (const Node& n : fleet_.nodes()) {
    if (!n.shared()) continue;
    shares[n.id.value()].resize(n.gpu_count);
    for (int g = 0; g < n.gpu_count; ++g) {
      // The layout is state of its own; what is held of it is recomputed below.
      for (const MigSlot& s : fleet_.shares(n.id)[g].mig) shares[n.id.value()][g].mig.push_back({s.instance, false});
      if (n.pool.mig) {
        if (Status s = ValidateMigLayout(*n.pool.mig, fleet_.shares(n.id)[g].Layout()); !s.ok()) {
          return Internal("node " + n.name + " GPU " + std::to_string(g) + ": " + s.message());
        }
      }
    }
  }
  std::vector<Resources> usage(tenants_.size()), gusage(tenants_.size());
  for (JobId id : active_) {
    const Job& j = job(id);
    for (const TaskPlacement& p : j.placement) {
      NodeFree& h = held[p.node.value()];
      if (p.share.kind != ShareKind::kWhole) {
        GpuShareState& g = shares[p.node.value()][p.gpu_index()];
        if (p.share.kind == ShareKind::kMig) {
          bool found = false;
          for (MigSlot& s : g.mig) {
            if (s.instance != p.share.mig) continue;
            if (s.held) return Internal("MIG instance held twice on node " + fleet_.node(p.node).name);
            s.held = found = true;
          }
          if (!found) return Internal("a held MIG instance is missing from node " + fleet_.node(p.node).name);
        } else {
          Hold(g, p.share);
        }
        h.gpu_mask |= p.gpu_mask;  // not idle
      } else {
        if (h.gpu_mask & p.gpu_mask) return Internal("GPU held twice on node " + fleet_.node(p.node).name);
        h.gpu_mask |= p.gpu_mask;
      }
      h.cpu += p.cpu;
      h.memory += p.memory;
    }
    for (TenantId a = j.spec.tenant; a.valid(); a = tenants_.tenant(a).parent) {
      AddDemand(usage[a.value()], j.demand);
      if (j.admission == AdmissionClass::kGuaranteed) AddDemand(gusage[a.value()], j.demand);
    }
  }
  for (const Node& n : fleet_.nodes()) {
    const NodeFree& h = held[n.id.value()];
    if (n.free.gpu_mask != (n.all_gpus_mask() & ~h.gpu_mask) || n.free.cpu != n.cpu - h.cpu ||
        n.free.memory != n.memory - h.memory || n.free.cpu < 0 || n.free.memory < 0) {
      return Internal("node " + n.name + " free resources disagree with allocations");
    }
    if (n.shared()) {
      for (int g = 0; g < n.gpu_count; ++g) {
        const GpuShareState& have = fleet_.shares(n.id)[g];
        const GpuShareState& want = shares[n.id.value()][g];
        if (have.mig != want.mig || have.clients != want.clients || have.percent != want.percent ||
            have.memory != want.memory || have.mps_tenants != want.mps_tenants) {
          return Internal("node " + n.name + " GPU " + std::to_string(g) + " share state disagrees with allocations");
        }
        if (have.clients > kMpsMaxClients || (n.pool.sharing == Sharing::kTimeslice && have.clients > n.pool.replicas) ||
            have.memory > n.pool.gpu_memory ||
            int64_t{have.percent} * 1000 > 100 * n.pool.oversubscription_milli) {
          return Internal("node " + n.name + " GPU " + std::to_string(g) + " is oversubscribed");
        }
      }
    }
  }
  if (std::string bad = fleet_.CheckDomainCounts(); !bad.empty()) return Internal(bad);
  if (preempting_by_preemptor_.size() != preempting_.size()) return Internal("preemptor index out of step");
  if (active_by_end_.size() != active_.size()) return Internal("end-time index out of step");
  for (const auto& [end, id] : active_by_end_) {
    if (!active_.count(id) || job(id).expected_end_ms != end) return Internal("end-time index disagrees for job " + job(id).spec.name);
  }
  if (reservation_ && job(reservation_->job).state != JobState::kPending) {
    return Internal("reservation held for job " + job(reservation_->job).spec.name + ", which is not pending");
  }
  for (const auto& [preemptor, victim] : preempting_by_preemptor_) {
    if (!preempting_.count(victim) || job(victim).preemptor != preemptor) {
      return Internal("preemptor index disagrees for job " + job(victim).spec.name);
    }
  }
  size_t grouped = 0;
  for (const auto& [key, members] : pending_groups_) {
    if (members.empty() || !std::is_sorted(members.begin(), members.end())) return Internal("pending group empty or out of order");
    for (const QueuedJob& q : members) {
      const Job& j = job(JobId(q.id));
      if (j.state != JobState::kPending || j.queued_ms != q.queued_ms || !(PendingKeyOf(j) == key)) {
        return Internal("pending group disagrees for job " + j.spec.name);
      }
    }
    grouped += members.size();
  }
  if (grouped != pending_.size()) return Internal("pending groups out of step");
  for (const Job& j : jobs_) {
    if ((j.state == JobState::kPending) != pending_.contains(j.id)) return Internal("pending set disagrees for job " + j.spec.name);
  }
  // 2. Tenant usage == sum of the allocations in its subtree.
  for (const Tenant& t : tenants_.tenants()) {
    if (!(t.usage == usage[t.id.value()]) || !(t.guaranteed_usage == gusage[t.id.value()])) {
      return Internal("tenant '" + t.path + "' usage disagrees with allocations");
    }
  }
  // 3. Each tenant's running GPUs by priority and model = a count over its running jobs: the
  //    same levels, in order (Pass::CandidateGpus stops at the first at or above a priority);
  //    a level at zero counts as absent (the live state keeps one whose jobs all left).
  auto same = [](const std::vector<ClusterState::RunningGpus>& a, const std::vector<ClusterState::RunningGpus>& b) {
    auto nonzero = [](const std::vector<ClusterState::RunningGpus>& levels) {
      std::vector<const RunningGpus*> out;
      for (const RunningGpus& l : levels) {
        for (const auto& by : l.by_domain) {
          if (std::any_of(by.begin(), by.end(), [](int64_t g) { return g != 0; })) {
            out.push_back(&l);
            break;
          }
        }
      }
      return out;
    };
    std::vector<const RunningGpus*> x = nonzero(a), y = nonzero(b);
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i]->priority != y[i]->priority || x[i]->res != y[i]->res) return false;
      for (int k = 0; k < 2; ++k) {
        const auto& p = x[i]->by_domain[k];
        const auto& q = y[i]->by_domain[k];
        for (size_t d = 0; d < std::max(p.size(), q.size()); ++d) {
          if ((d < p.size() ? p[d] : 0) != (d < q.size() ? q[d] : 0)) return false;
        }
      }
    }
    return true;
  };
  for (const Tenant& t : tenants_.tenants()) {
    const std::vector<RunningGpus>& levels = running_gpus(t.id);
    for (size_t i = 1; i < levels.size(); ++i) {
      if (!(std::pair{levels[i - 1].priority, levels[i - 1].res} < std::pair{levels[i].priority, levels[i].res})) {
        return Internal("tenant '" + t.path + "' running GPUs by priority out of order");
      }
    }
    std::vector<RunningGpus> want;
    for (const RunningEntry& e : running_in(t.id)) {
      const Job& j = jobs_[e.id.value()];
      if (j.admission != AdmissionClass::kReserved) domain_gpus::AddToLevels(want, fleet_, j, +1);
    }
    if (!same(levels, want)) return Internal("tenant '" + t.path + "' running GPUs by priority disagree with its jobs");
  }
  return Status::Ok();
}

}  // namespace allot
