#include "state/dependency.h"

namespace allot {
namespace {

bool Ended(JobState s) {
  return s == JobState::kFinished || s == JobState::kFailed || s == JobState::kCancelled || s == JobState::kRejected;
}

// "failed (exit code 1)" or "cancelled": how a job ended, for a reason a person reads.
std::string EndOf(const Job& j) {
  std::string s = j.state == JobState::kFinished ? "succeeded" : JobStateName(j.state);
  if (j.state != JobState::kFinished && !j.reason.empty()) s += " (" + j.reason + ")";
  return s;
}

const char* Verb(AfterState s) {
  switch (s) {
    case AfterState::kSucceeded: return "succeed";
    case AfterState::kFinished: return "finish";
    case AfterState::kFailed: return "fail";
  }
  return "succeed";
}

}  // namespace

AfterCheck CheckAfter(const ClusterState& state, const Job& job) {
  // The first dependency never met fails the job, even behind one still to come.
  AfterCheck waiting;
  for (const Dependency& d : job.spec.after) {
    // A job of that name, else the array's elements (state checked one of them exists at submit).
    std::vector<JobId> one;
    const std::vector<JobId>* jobs = &one;
    if (JobId id = state.FindJob(job.spec.tenant, d.job); id.valid()) {
      one.push_back(id);
    } else {
      jobs = &state.ArrayElements(job.spec.tenant, d.job);
    }
    std::string what = (jobs == &one ? "job " : "array ") + d.job;
    if (jobs->empty()) return {AfterStatus::kNever, "dependency " + what + " does not exist"};
    auto wait = [&](std::string why) {
      if (waiting.status == AfterStatus::kMet) waiting = {AfterStatus::kWaiting, std::move(why)};
    };
    int ended = 0;
    const Job* unsuccessful = nullptr;  // the first element that ended other than succeeded
    for (JobId id : *jobs) {
      const Job& j = state.job(id);
      if (!Ended(j.state)) continue;
      ++ended;
      if (j.state != JobState::kFinished && !unsuccessful) unsuccessful = &j;
    }
    bool all = ended == static_cast<int>(jobs->size());
    std::string waiting_for = "waiting for " + what + " to " + Verb(d.state);
    if (jobs->size() > 1) waiting_for += " (" + std::to_string(ended) + " of " + std::to_string(jobs->size()) + " elements ended)";
    switch (d.state) {
      case AfterState::kSucceeded:
        if (unsuccessful) {
          std::string who = jobs == &one ? "" : " (element " + unsuccessful->spec.name + ")";
          return {AfterStatus::kNever, "dependency " + what + who + " ended " + EndOf(*unsuccessful) + "; expected succeeded"};
        }
        if (!all) wait(waiting_for);
        break;
      case AfterState::kFinished:
        if (!all) wait(waiting_for);
        break;
      case AfterState::kFailed:
        if (!all) {
          wait(waiting_for);
        } else if (!unsuccessful) {
          return {AfterStatus::kNever, "dependency " + what + " ended succeeded; expected failed (this job runs only if it fails)"};
        }
        break;
    }
  }
  return waiting;
}

const char* ArrayProgress::state() const {
  if (done == count) return "succeeded";
  if (done + failed == count) return "failed";
  return running > 0 ? "running" : "pending";
}

ArrayProgress ProgressOf(const ClusterState& state, const std::vector<JobId>& elements) {
  ArrayProgress p;
  p.count = static_cast<int32_t>(elements.size());
  for (JobId id : elements) {
    const Job& j = state.job(id);
    p.parallel = j.spec.array.parallel;
    p.frames = j.spec.array.frame >= 0;
    p.retries += j.failures;
    if (j.state == JobState::kFinished) {
      ++p.done;
    } else if (Ended(j.state)) {
      ++p.failed;
    } else if (j.holds_resources()) {
      ++p.running;
    } else {
      ++p.pending;
    }
  }
  return p;
}

Status ClusterState::CheckArrayAndAfter(const JobSpec& s) const {
  const std::string& path = tenants_.tenant(s.tenant).path;
  if (!ArrayElements(s.tenant, s.name).empty()) {
    return Conflict("job '" + s.name + "': an array of that name exists in tenant '" + path + "'; expected another name");
  }
  if (!s.array.empty()) {
    const ArrayElement& a = s.array;
    if (FindJob(s.tenant, a.array).valid()) {
      return Conflict("array '" + a.array + "': a job of that name exists in tenant '" + path + "'; expected another name");
    }
    const std::vector<JobId>& before = ArrayElements(s.tenant, a.array);
    if (static_cast<int32_t>(before.size()) != a.index) {
      return Conflict("array '" + a.array + "' element " + std::to_string(a.index) + ": the array has " +
                      std::to_string(before.size()) + " element(s) in tenant '" + path + "'; expected element " +
                      std::to_string(before.size()) + (before.empty() ? " (a new array)" : " (arrays are submitted whole)"));
    }
    if (!before.empty()) {
      const ArrayElement& first = job(before.front()).spec.array;
      if (first.count != a.count || first.parallel != a.parallel) {
        return InvalidArgument("array '" + a.array + "' element " + std::to_string(a.index) +
                               ": count and parallel differ from element 0's");
      }
    }
  }
  for (size_t i = 0; i < s.after.size(); ++i) {
    const Dependency& d = s.after[i];
    std::string field = "job '" + s.name + "' after[" + std::to_string(i) + "].job: ";
    if (d.job == s.name || (!s.array.empty() && d.job == s.array.array)) {
      return InvalidArgument(field + "'" + d.job + "' is the job itself; expected another job (a cycle)");
    }
    if (!FindJob(s.tenant, d.job).valid() && ArrayElements(s.tenant, d.job).empty()) {
      return NotFound(field + "no job or array '" + d.job + "' in tenant '" + path + "'; expected one submitted before it");
    }
  }
  return Status::Ok();
}

}  // namespace allot
