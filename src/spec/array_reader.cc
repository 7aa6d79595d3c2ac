#include "spec/array_reader.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "core/names.h"
#include "core/quantity.h"
#include "spec/job_spec.h"

namespace allot {
namespace {

constexpr int64_t kMaxFrame = 1'000'000'000;

Result<int64_t> FrameNumber(std::string_view s, const std::string& piece) {
  int64_t v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0 || v > kMaxFrame) {
    return Err(InvalidArgument("'" + piece + "': '" + std::string(s) + "' is not a frame number from 0 to 1000000000"));
  }
  return v;
}

}  // namespace

Result<std::vector<int64_t>> ParseFrames(const std::string& text) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string piece = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    std::string_view range = piece;
    int64_t step = 1;
    if (size_t colon = piece.find(':'); colon != std::string::npos) {
      TRY_ASSIGN(step, FrameNumber(std::string_view(piece).substr(colon + 1), piece));
      if (step < 1) return Err(InvalidArgument("'" + piece + "': a step of 0; expected at least 1"));
      range = std::string_view(piece).substr(0, colon);
    }
    int64_t first = 0, last = 0;
    if (size_t dash = range.find('-'); dash != std::string::npos) {
      TRY_ASSIGN(first, FrameNumber(range.substr(0, dash), piece));
      TRY_ASSIGN(last, FrameNumber(range.substr(dash + 1), piece));
      if (last < first) return Err(InvalidArgument("'" + piece + "': the last frame is before the first; expected FIRST-LAST ascending"));
    } else {
      TRY_ASSIGN(first, FrameNumber(range, piece));
      last = first;
    }
    if (!out.empty() && first <= out.back()) {
      return Err(InvalidArgument("'" + piece + "' starts at or before frame " + std::to_string(out.back()) +
                                 "; expected ranges in ascending order without overlap"));
    }
    if ((last - first) / step + 1 + static_cast<int64_t>(out.size()) > kMaxArrayElements) {
      return Err(InvalidArgument("more than " + std::to_string(kMaxArrayElements) + " frames; expected at most that many elements"));
    }
    for (int64_t f = first; f <= last; f += step) out.push_back(f);
  }
  return out;
}

Result<ArraySpec> ReadArray(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TRY_STATUS(rd.Fields(n, path, {"count", "frames", "parallel"}));
  if (!!n["count"] == !!n["frames"]) {
    return Err(rd.Error(n, path, "expected exactly one of count (elements 0 to count-1) and frames (e.g. \"1-240:2\")"));
  }
  ArraySpec a;
  if (n["count"]) {
    int64_t c;
    TRY_ASSIGN(c, rd.Integer(n["count"], path + ".count", 1, kMaxArrayElements));
    a.count = static_cast<int32_t>(c);
  } else {
    std::string text;
    TRY_ASSIGN(text, rd.Scalar(n["frames"], path + ".frames"));
    auto frames = ParseFrames(text);
    if (!frames) {
      return Err(rd.Error(n["frames"], path + ".frames", frames.error().message() + " (frames are FIRST[-LAST[:STEP]], comma-separated)"));
    }
    a.frames = std::move(*frames);
    a.count = static_cast<int32_t>(a.frames.size());
  }
  a.parallel = a.count;
  if (n["parallel"]) {
    int64_t p;
    TRY_ASSIGN(p, rd.Integer(n["parallel"], path + ".parallel", 1, kMaxArrayElements));
    a.parallel = static_cast<int32_t>(std::min<int64_t>(p, a.count));
  }
  return a;
}

Result<std::vector<Dependency>> ReadAfter(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  if (!n.IsSequence() || n.size() == 0) {
    return Err(rd.Error(n, path, "expected a list of dependencies, e.g. [{job: prepare, state: succeeded}]"));
  }
  if (n.size() > kMaxDependencies) {
    return Err(rd.Error(n, path, std::to_string(n.size()) + " dependencies; expected at most " + std::to_string(kMaxDependencies)));
  }
  std::vector<Dependency> out;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string p = path + "[" + std::to_string(i) + "]";
    Dependency d;
    const YAML::Node e = n[i];
    if (e.IsMap()) {
      TRY_STATUS(rd.Fields(e, p, {"job", "state"}));
      if (!e["job"]) return Err(rd.Error(e, p + ".job", "required"));
      p += ".job";
    }
    // Not assigned after construction: assigning a YAML::Node rewrites the node it refers to.
    const YAML::Node name = e.IsMap() ? e["job"] : e;
    TRY_ASSIGN(d.job, rd.Scalar(name, p));
    TRY_STATUS(rd.At(name, CheckName(p, d.job)));
    if (e.IsMap() && e["state"]) {
      std::string s;
      TRY_ASSIGN(s, rd.Scalar(e["state"], path + "[" + std::to_string(i) + "].state"));
      auto st = ParseAfterState(s);
      if (!st) {
        return Err(rd.Error(e["state"], path + "[" + std::to_string(i) + "].state",
                            "'" + s + "' is not valid; expected succeeded, finished or failed"));
      }
      d.state = *st;
    }
    for (const Dependency& o : out) {
      if (o.job == d.job) return Err(rd.Error(name, p, "'" + d.job + "' is named twice; expected each dependency once"));
    }
    out.push_back(std::move(d));
  }
  return out;
}

Status ReadFail(const YamlReader& rd, const YAML::Node& n, const std::string& path, std::vector<ScenarioJob>& jobs) {
  if (Status s = rd.Fields(n, path, {"runs", "elements", "after"}); !s.ok()) return s;
  int64_t runs = 1;
  if (n["runs"]) {
    auto r = rd.Integer(n["runs"], path + ".runs", 1, kMaxRetries + 1);
    if (!r) return r.error();
    runs = *r;
  }
  int64_t after = 0;
  if (n["after"]) {
    auto a = rd.Bounded(n["after"], path + ".after", ParseDurationMs, 1, kMaxJobTimeMs, "a duration from 1ms, e.g. 30s");
    if (!a) return a.error();
    after = *a;
  }
  std::vector<bool> failing(jobs.size(), !n["elements"]);
  if (const YAML::Node e = n["elements"]) {
    if (jobs.front().spec.array.empty()) return rd.Error(e, path + ".elements", "given for a job that is no array; expected it only with array");
    if (!e.IsSequence()) return rd.Error(e, path + ".elements", "expected a list of element indexes, e.g. [3]");
    for (size_t i = 0; i < e.size(); ++i) {
      auto x = rd.Integer(e[i], path + ".elements[" + std::to_string(i) + "]", 0, static_cast<int64_t>(jobs.size()) - 1);
      if (!x) return x.error();
      failing[*x] = true;
    }
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!failing[i]) continue;
    jobs[i].fail_runs = static_cast<int32_t>(runs);
    jobs[i].fail_after_ms = after;
  }
  return Status::Ok();
}

std::vector<ScenarioJob> ExpandArray(const ScenarioJob& job, const ArraySpec& a) {
  std::vector<ScenarioJob> out;
  out.reserve(a.count);
  for (int32_t i = 0; i < a.count; ++i) {
    ScenarioJob c = job;
    c.spec.name = job.spec.name + "-" + std::to_string(i);
    c.spec.array = {job.spec.name, i, a.frames.empty() ? -1 : a.frames[i], a.count, a.parallel};
    out.push_back(std::move(c));
  }
  return out;
}

Status OrderByDependencies(std::vector<ScenarioJob>& jobs, bool all_in_batch, const std::string& file) {
  // Units: a job, or an array's elements together; keyed by (tenant, job or array name).
  struct Unit {
    std::string name;
    std::vector<size_t> members;  // indexes into jobs, in order
    std::vector<size_t> deps;     // units it waits for
  };
  std::vector<Unit> units;
  std::map<std::pair<std::string, std::string>, size_t> by_name;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const ScenarioJob& j = jobs[i];
    std::string name = j.spec.array.empty() ? j.spec.name : j.spec.array.array;
    auto [it, fresh] = by_name.emplace(std::make_pair(j.tenant, name), units.size());
    if (fresh) {
      units.push_back({name, {}, {}});
    } else if (j.spec.array.empty() || jobs[units[it->second].members.front()].spec.array.empty()) {
      std::string at = file.empty() ? "" : file + ":" + std::to_string(j.line) + ": ";
      return InvalidArgument(at + "jobs[" + name + "].name: '" + name + "' names both a job and an array in tenant " + j.tenant +
                             "; expected names unique within a tenant");
    }
    units[it->second].members.push_back(i);
  }
  auto where = [&](const ScenarioJob& j, size_t d) {
    std::string at = file.empty() ? "" : file + ":" + std::to_string(j.line) + ": ";
    std::string name = j.spec.array.empty() ? j.spec.name : j.spec.array.array;
    return at + "jobs[" + name + "].after[" + std::to_string(d) + "].job: ";
  };
  for (Unit& u : units) {
    const ScenarioJob& j = jobs[u.members.front()];
    for (size_t d = 0; d < j.spec.after.size(); ++d) {
      const std::string& dep = j.spec.after[d].job;
      auto it = by_name.find({j.tenant, dep});
      if (it == by_name.end()) {
        if (all_in_batch) {
          return InvalidArgument(where(j, d) + "no job or array '" + dep + "' of tenant " + j.tenant +
                                 " in the file; expected one of its jobs");
        }
        continue;  // an existing job: the state checks it
      }
      if (it->second == static_cast<size_t>(&u - units.data())) {
        return InvalidArgument(where(j, d) + "'" + dep + "' is the job itself; a job cannot wait for itself (a cycle)");
      }
      const ScenarioJob& before = jobs[units[it->second].members.front()];
      if (all_in_batch && before.spec.submit_ms > j.spec.submit_ms) {
        return InvalidArgument(where(j, d) + "'" + dep + "' is submitted at " + FormatDuration(before.spec.submit_ms) +
                               ", after this job (" + FormatDuration(j.spec.submit_ms) + "); expected a dependency submitted no later");
      }
      u.deps.push_back(it->second);
    }
  }
  // Depth-first, dependencies before dependents; a grey unit met again closes a cycle.
  std::vector<uint8_t> color(units.size(), 0);  // 0 white, 1 grey (on the path), 2 black
  std::vector<size_t> path, order;
  Status cycle = Status::Ok();
  auto visit = [&](auto& self, size_t u) -> bool {
    color[u] = 1;
    path.push_back(u);
    for (size_t d : units[u].deps) {
      if (color[d] == 1) {
        // The path from d waits, job by job, for u, which waits for d.
        std::string names;
        for (auto it = std::find(path.begin(), path.end(), d); it != path.end(); ++it) names += units[*it].name + " → ";
        const ScenarioJob& first = jobs[units[d].members.front()];
        std::string at = file.empty() ? "" : file + ":" + std::to_string(first.line) + ": ";
        cycle = InvalidArgument(at + "jobs[" + units[d].name + "].after: the dependencies form a cycle: " + names + units[d].name +
                                " (each waits for the next); expected a pipeline whose jobs wait only for earlier ones");
        return false;
      }
      if (color[d] == 0 && !self(self, d)) return false;
    }
    color[u] = 2;
    path.pop_back();
    order.push_back(u);
    return true;
  };
  for (size_t u = 0; u < units.size(); ++u) {
    if (color[u] == 0 && !visit(visit, u)) return cycle;
  }
  std::vector<ScenarioJob> sorted;
  sorted.reserve(jobs.size());
  for (size_t u : order) {
    for (size_t i : units[u].members) sorted.push_back(std::move(jobs[i]));
  }
  jobs = std::move(sorted);
  return Status::Ok();
}

}  // namespace allot
