#include "scheduler/service_reconciler.h"

#include <algorithm>
#include <set>

namespace allot {

const char* ReplicaStateName(const Job& j) {
  switch (j.state) {
    case JobState::kRunning: return "running";
    case JobState::kPreempting: return "exiting";
    case JobState::kPending: return "starting";
    case JobState::kRejected: return "unschedulable";
    case JobState::kFailed:
    case JobState::kFinished: return "crash-loop";
    case JobState::kCancelled: return "removed";
  }
  return "?";
}

int64_t RestartAtMs(const Job& j, const ServiceReplica& r) {
  if (j.state != JobState::kFailed && j.state != JobState::kFinished) return -1;
  bool healthy = j.finished_ms - j.last_started_ms >= kBackoffResetMs;
  return j.finished_ms + RestartBackoffMs(healthy ? 0 : r.crashes);
}

namespace {

void SetEnv(JobEnvironment& env, const std::string& name, const std::string& value) {
  auto it = std::lower_bound(env.env.begin(), env.env.end(), name,
                             [](const auto& kv, const std::string& n) { return kv.first < n; });
  if (it != env.env.end() && it->first == name) {
    it->second = value;
  } else {
    env.env.insert(it, {name, value});
  }
}

// The first name of the form NAME-r<slot>[.<g>] no job of the tenant has (a service deleted and
// created again finds its old replicas' names taken).
std::string FreeName(const ClusterState& state, const Service& v, int32_t slot) {
  std::string base = v.spec.name + "-r" + std::to_string(slot);
  if (!state.FindJob(v.spec.tenant, base).valid()) return base;
  for (int g = 1;; ++g) {
    std::string n = base + "." + std::to_string(g);
    if (!state.FindJob(v.spec.tenant, n).valid()) return n;
  }
}

class Reconciler {
 public:
  Reconciler(const ClusterState& state, int64_t now) : state_(state), now_(now) {}
  ServiceActions Run() {
    for (const Service& v : state_.services()) {
      if (!v.deleted) One(v);
    }
    return std::move(out_);
  }

 private:
  struct Live {
    const ServiceReplica* r;
    const Job* j;
    bool old;      // of an older revision
    bool running;  // serving: its job runs
  };

  void One(const Service& v) {
    std::vector<Live> live;
    // 1-2. Restarts, replacements of ended old replicas, and replicas cancelled by someone.
    for (const ServiceReplica& r : v.replicas) {
      const Job& j = state_.job(r.job);
      bool old = r.revision != v.revision;
      if (j.state == JobState::kCancelled) {
        Remove(v, j, "cancelled; replaced");
        continue;
      }
      if (j.state == JobState::kFailed || j.state == JobState::kFinished) {
        if (old) {
          Remove(v, j, "ended on revision " + std::to_string(r.revision) + "; replaced by revision " + std::to_string(v.revision));
          continue;
        }
        int64_t at = RestartAtMs(j, r);
        if (at <= now_) {
          out_.events.push_back(ServiceReplicaRestarted{v.id, j.id, "restart " + std::to_string(r.restarts + 1) + " after: " +
                                                                          (j.state == JobState::kFinished ? "exited with code 0" : j.reason)});
        } else {
          Wake(at);
        }
      }
      live.push_back({&r, &j, old, j.state == JobState::kRunning});
    }
    // 3. Too many: the unready first, older revisions first, then the highest slot.
    const int32_t desired = v.desired;
    bool updating = std::any_of(live.begin(), live.end(), [](const Live& l) { return l.old; });
    int32_t cap = desired + (updating ? v.spec.max_surge : 0);
    std::stable_sort(live.begin(), live.end(), [](const Live& a, const Live& b) {
      if (a.running != b.running) return !a.running;  // 1. not running first
      if (a.old != b.old) return a.old;               // 2. older revisions first
      return a.r->slot > b.r->slot;                   // 3. highest slot first (slots are unique)
    });
    size_t first = 0;
    while (static_cast<int32_t>(live.size() - first) > cap) {
      Remove(v, *live[first].j, "scaled down to " + std::to_string(desired));
      ++first;
    }
    live.erase(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(first));
    // 4. Rolling update: old replicas go while enough stay running.
    int32_t running = static_cast<int32_t>(std::count_if(live.begin(), live.end(), [](const Live& l) { return l.running; }));
    int32_t fresh = static_cast<int32_t>(std::count_if(live.begin(), live.end(), [](const Live& l) { return !l.old; }));
    int32_t floor = desired - v.spec.max_unavailable;
    std::vector<Live> kept;
    for (const Live& l : live) {
      if (l.old && (!l.running || running - 1 >= floor)) {
        Remove(v, *l.j, "replaced by revision " + std::to_string(v.revision));
        if (l.running) --running;
        continue;
      }
      kept.push_back(l);
    }
    // 5. Too few (or a surge during an update): new replicas of the current revision.
    int32_t total = static_cast<int32_t>(kept.size());
    int32_t room = (updating ? desired + v.spec.max_surge : desired) - total;
    int32_t want_new = desired - fresh;
    int32_t add = std::min(room, want_new);
    int32_t slot = v.next_slot;
    for (int32_t i = 0; i < add; ++i) {
      int32_t port = v.spec.port > 0 ? v.spec.port : NextPort();
      if (port == 0) break;  // every port of the range taken: added when one frees
      JobSpec spec = v.current();
      spec.name = FreeName(state_, v, slot);
      spec.tenant = v.spec.tenant;
      spec.submit_ms = now_;
      spec.kind = JobKind::kInference;
      spec.duration_ms = 0;
      spec.time_limit_ms = 0;
      if (!spec.command.empty()) {
        SetEnv(spec.environment, "ALLOT_PORT", std::to_string(port));
        SetEnv(spec.environment, "ALLOT_REPLICA", std::to_string(slot));
        SetEnv(spec.environment, "ALLOT_SERVICE", v.spec.name);
      }
      out_.events.push_back(ServiceReplicaAdded{v.id, slot, v.revision, port, std::move(spec)});
      ++slot;
    }
  }

  void Remove(const Service& v, const Job& j, const std::string& why) {
    out_.events.push_back(ServiceReplicaRemoved{v.id, j.id, "service '" + v.spec.name + "': " + why});
  }

  void Wake(int64_t at) { out_.wake_ms = out_.wake_ms < 0 ? at : std::min(out_.wake_ms, at); }

  // The lowest port of the range no replica holds (nor one added in this round); 0 when none.
  int32_t NextPort() {
    if (!ports_known_) {  // only a round that adds a replica pays for the scan
      for (const Service& v : state_.services()) {
        for (const ServiceReplica& r : v.replicas) ports_.insert(r.port);
      }
      ports_known_ = true;
    }
    for (int32_t p = kServicePortFirst; p < kServicePortFirst + kServicePortCount; ++p) {
      if (ports_.insert(p).second) return p;
    }
    return 0;
  }

  const ClusterState& state_;
  int64_t now_;
  ServiceActions out_;
  std::set<int32_t> ports_;
  bool ports_known_ = false;
};

}  // namespace

ServiceActions ReconcileServices(const ClusterState& state, int64_t now) { return Reconciler(state, now).Run(); }

}  // namespace allot
