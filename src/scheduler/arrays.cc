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

namespace {

// Its elements running, or next in line when triage holds it, fill the limit.
std::string AtLimit(const ArrayElement& a) {
  return "array " + a.array + ": at its parallel limit (" + std::to_string(a.parallel) + " of its " + std::to_string(a.count) +
         " elements at once)";
}

}  // namespace

// The array's entry for this pass: its running elements counted once.
Pass::ArrayInPass& Pass::ArrayOf(const Job& job) {
  const ArrayElement& a = job.spec.array;
  ClusterState::ArrayKey key{job.spec.tenant.value(), a.array};
  auto it = arrays_.find(key);
  if (it == arrays_.end()) {
    int32_t running = 0;
    for (JobId id : state_.ArrayElements(job.spec.tenant, a.array)) running += state_.job(id).holds_resources();
    it = arrays_.emplace(std::move(key), ArrayInPass{running, a.parallel - running}).first;
  }
  return it->second;
}

bool Pass::HeldByArrayTriage(const Job& job) {
  ArrayInPass& in = ArrayOf(job);
  if (in.candidates > 0) {
    --in.candidates;
    return false;
  }
  Pending(job.id, AtLimit(job.spec.array));
  return true;
}

std::string Pass::ArrayHold(const Job& job) {
  ArrayInPass& in = ArrayOf(job);
  return in.running < job.spec.array.parallel ? "" : AtLimit(job.spec.array);
}

void Pass::ArrayPlaced(const Job& job) { ArrayOf(job).running += 1; }

}  // namespace allot
