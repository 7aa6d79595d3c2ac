#include "daemon/autoscale_monitor.h"

#include <iostream>

namespace allot {

void AutoscaleMonitor::Observe(const std::string& node, const std::vector<TaskLoad>& loads, int64_t now) {
  if (loads.empty()) return;
  std::vector<TaskLoad> taken;
  ctl_.Read([&](const ClusterState& st) {
    NodeId here = st.fleet().Find(node);
    if (!here.valid()) return 0;
    for (const TaskLoad& l : loads) {
      if (l.job_id < 0 || static_cast<uint64_t>(l.job_id) >= st.jobs().size()) continue;
      const Job& j = st.job(JobId(static_cast<uint32_t>(l.job_id)));
      if (!j.holds_resources() || l.task < 0 || static_cast<size_t>(l.task) >= j.placement.size()) continue;
      if (j.placement[l.task].node != here || !st.ServiceOf(j.id).valid()) continue;  // not its node's to report
      taken.push_back(l);
    }
    return 0;
  });
  std::lock_guard lock(mu_);
  for (const TaskLoad& l : taken) latest_[{static_cast<uint32_t>(l.job_id), l.task}] = {l.run, l.load_milli, now};
}

void AutoscaleMonitor::Tick(int64_t now) {
  struct Decided {
    ServiceId id;
    int32_t desired;
    std::string why;
  };
  std::vector<Decided> changes;
  {
    std::lock_guard lock(mu_);
    ctl_.Read([&](const ClusterState& st) {
      for (const Service& s : st.services()) {
        if (s.deleted || !s.spec.autoscaled()) continue;
        int64_t total = 0;
        int32_t running = 0, reporting = 0;
        for (const ServiceReplica& r : s.replicas) {
          const Job& j = st.job(r.job);
          if (j.state != JobState::kRunning) continue;
          ++running;
          const int run = static_cast<int>(j.ended_runs.size());
          bool reported = false;
          for (int task = 0; task < static_cast<int>(j.placement.size()); ++task) {
            auto it = latest_.find({j.id.value(), task});
            if (it == latest_.end() || it->second.run != run || now - it->second.at_ms > kStaleMs) continue;
            total += it->second.load_milli;
            reported = true;
          }
          reporting += reported;
        }
        Autoscaler& a = scalers_[s.id.value()];
        if (reporting > 0) a.Observe(now, total, s.spec.autoscale.stable_window_ms);
        ScaleDecision d = a.Decide(s.spec, s.desired, running, now);
        if (d.desired != s.desired) changes.push_back({s.id, d.desired, d.why});
      }
      // Reports of jobs no longer running are dropped.
      std::erase_if(latest_, [&](const auto& kv) {
        return kv.first.first >= st.jobs().size() || !st.job(JobId(kv.first.first)).holds_resources();
      });
      return 0;
    });
  }
  for (const Decided& c : changes) {
    auto r = ctl_.Execute(ServiceScaled{c.id, c.desired, c.why});
    if (!r) std::cerr << "allotd: autoscaler: " << r.error().message() << "\n";
  }
}

}  // namespace allot
