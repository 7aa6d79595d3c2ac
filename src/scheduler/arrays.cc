// Arrays and pipelines in the pass (docs/arrays.md): a job waits for its dependencies, and an
// array's elements start at most `parallel` at a time, lowest index first (the queue's order).
#include "scheduler/pass.h"

namespace allot {

bool Pass::HeldByDependencies(const Job& job) {
  // Jobs of one pipeline stage name the same dependencies: checked once per pass.
  std::string key = std::to_string(job.spec.tenant.value());
  for (const Dependency& d : job.spec.after) key += '\n' + d.job + '\t' + AfterStateName(d.state);
  auto it = after_checks_.find(key);
  if (it == after_checks_.end()) it = after_checks_.emplace(std::move(key), CheckAfter(state_, job)).first;
  const AfterCheck& check = it->second;
  switch (check.status) {
    case AfterStatus::kMet: return false;
    case AfterStatus::kWaiting: Pending(job.id, check.why); return true;
    case AfterStatus::kNever: plan_.failures.push_back({job.id, check.why}); return true;
  }
  return false;
}

std::string Pass::ArrayHold(const Job& job) {
  const ArrayElement& a = job.spec.array;
  ClusterState::ArrayKey key{job.spec.tenant.value(), a.array};
  auto it = array_running_.find(key);
  if (it == array_running_.end()) {
    int32_t running = 0;
    for (JobId id : state_.ArrayElements(job.spec.tenant, a.array)) running += state_.job(id).holds_resources();
    it = array_running_.emplace(std::move(key), running).first;
  }
  if (it->second < a.parallel) return "";
  return "array " + a.array + ": " + std::to_string(it->second) + " of its " + std::to_string(a.count) +
         " elements running, at its parallel limit of " + std::to_string(a.parallel);
}

void Pass::ArrayPlaced(const Job& job) {
  // ArrayHold ran for this job earlier in the pass, so its array is counted.
  auto it = array_running_.find({job.spec.tenant.value(), job.spec.array.array});
  if (it != array_running_.end()) ++it->second;
}

}  // namespace allot
