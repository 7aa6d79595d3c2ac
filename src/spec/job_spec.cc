#include "spec/job_spec.h"

#include <algorithm>

#include <set>

#include "core/names.h"
#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"
#include "spec/array_reader.h"
#include "spec/field_limits.h"
#include "spec/job_template.h"
#include "spec/job_environment_reader.h"
#include "spec/model_choice.h"
#include "spec/model_estimate.h"
#include "spec/model_reader.h"
#include "spec/require_reader.h"

namespace allot {
namespace {

Result<TaskGroup> ReadTaskGroup(const YamlReader& rd, const YAML::Node& n, const std::string& path, std::string& model,
                                std::string& mig, std::optional<ModelWorkload>& workload) {
  TRY_STATUS(rd.Fields(n, path, {"count", "gpus", "cpu", "memory", "gpu_model", "mig", "mps", "timeslice", "model"}));
  TaskGroup g;
  int kinds = !!n["gpus"] + !!n["mig"] + !!n["mps"] + !!n["timeslice"];
  if (kinds > 1) {
    return Err(rd.Error(n, path, "expected at most one of gpus, mig, mps and timeslice (each task holds whole GPUs or one share)"));
  }
  if (const YAML::Node m = n["model"]) {
    TRY_ASSIGN(workload, ReadModel(rd, m, path + ".model"));
    // Sizing chooses the allocation; one written beside it is a second answer, taken only when
    // the user says so (override: true), and override alone has nothing to keep.
    if (kinds > 0 && !workload->override) {
      return Err(rd.Error(m, path + ".model", "given with gpus, mig, mps or timeslice; expected either model (allot sizes the task) "
                                              "or an allocation, or both with override: true under model"));
    }
    if (kinds == 0 && workload->override) {
      return Err(rd.Error(m["override"], path + ".model.override", "true without gpus, mig, mps or timeslice; expected the allocation "
                                                                   "it keeps beside it, or no override"));
    }
  }
  if (n["mig"]) {
    TRY_ASSIGN(mig, rd.Scalar(n["mig"], path + ".mig"));
    g.share = ShareKind::kMig;
  }
  if (const YAML::Node m = n["mps"]) {
    std::string mp = path + ".mps";
    TRY_STATUS(rd.Fields(m, mp, {"percent", "memory"}));
    if (!m["percent"]) return Err(rd.Error(m, mp + ".percent", "required"));
    int64_t pct;
    TRY_ASSIGN(pct, rd.Integer(m["percent"], mp + ".percent", 1, 100));
    g.percent = static_cast<uint16_t>(pct);
    if (m["memory"]) {
      TRY_ASSIGN(g.gpu_memory, rd.Bounded(m["memory"], mp + ".memory", ParseMemoryMiB, 1, kMaxMpsMemoryMiB, "GPU memory from 1Mi to 1Ti"));
    }
    g.share = ShareKind::kMps;
  }
  if (n["timeslice"]) {
    std::string b;
    TRY_ASSIGN(b, rd.Scalar(n["timeslice"], path + ".timeslice"));
    if (b != "true") return Err(rd.Error(n["timeslice"], path + ".timeslice", "expected true (or leave it out)"));
    g.share = ShareKind::kTimeslice;
  }
  if (n["count"]) {
    int64_t c;
    TRY_ASSIGN(c, rd.Integer(n["count"], path + ".count", 1, 100000));
    g.count = static_cast<int>(c);
  }
  if (n["gpus"]) {
    TRY_ASSIGN(g.gpu, rd.Quantity(n["gpus"], path + ".gpus", ParseGpus));
    if (g.gpu > kGpuUnit && g.gpu % kGpuUnit != 0) {
      return Err(rd.Error(n["gpus"], path + ".gpus", "'" + n["gpus"].Scalar() +
                                                         "' is neither whole GPUs nor a share of one; expected an integer or a fraction below 1"));
    }
    // 0.0001 rounds to 2 GPU units, which the parser took and the scheduler then refused: a
    // share is at least 0.001 GPU, here as there.
    if (n["gpus"].Scalar() != "0" && g.gpu < kMinGpuShare) {
      return Err(rd.Error(n["gpus"], path + ".gpus", "'" + n["gpus"].Scalar() + "' is less than the smallest GPU share; "
                                                         "expected 0 or from 0.001 to " + std::to_string(kMaxGpusPerNode)));
    }
    if (g.gpu > kMaxGpusPerNode * kGpuUnit) {
      return Err(rd.Error(n["gpus"], path + ".gpus", "'" + n["gpus"].Scalar() + "' is more than one node can hold; expected at most " +
                                                         std::to_string(kMaxGpusPerNode) + " (use count for more tasks)"));
    }
  }
  if (n["cpu"]) TRY_ASSIGN(g.cpu, rd.Bounded(n["cpu"], path + ".cpu", ParseMilli, 0, kMaxTaskCpuMilli, "CPUs from 0 to 10000, e.g. 4 or 0.5"));
  if (n["memory"]) {
    TRY_ASSIGN(g.memory, rd.Bounded(n["memory"], path + ".memory", ParseMemoryMiB, 0, kMaxTaskMemoryMiB, "memory from 0Mi to 64Ti, e.g. 16Gi"));
  }
  if (n["gpu_model"]) {
    std::string m;
    TRY_ASSIGN(m, rd.Scalar(n["gpu_model"], path + ".gpu_model"));
    if (!FindGpuModel(m)) return Err(rd.Error(n["gpu_model"], path + ".gpu_model", "unknown GPU model '" + m + "'"));
    if (!model.empty() && model != m) {
      return Err(rd.Error(n["gpu_model"], path + ".gpu_model", "'" + m + "' differs from '" + model +
                                                                   "'; expected one GPU model per job"));
    }
    model = m;
  }
  return g;
}

// One task group appended to `j`, with its sizing (the estimate; the allocation is chosen by
// ResolveJob against the fleet) when it describes a model.
Status ReadGroupInto(const YamlReader& rd, const YAML::Node& n, const std::string& path, ScenarioJob& j) {
  j.mig.emplace_back();
  std::optional<ModelWorkload> workload;
  auto g = ReadTaskGroup(rd, n, path, j.gpu_model, j.mig.back(), workload);
  if (!g) return g.error();
  if (workload) {
    GroupSizing sizing;
    sizing.group = static_cast<int32_t>(j.spec.groups.size());
    sizing.model = std::move(*workload);
    sizing.estimate = EstimateMemory(sizing.model);
    j.spec.sizing.push_back(std::move(sizing));
  }
  j.spec.groups.push_back(*g);
  return Status::Ok();
}

// `vram: 12Gi` (or 12GiB): the GPU memory each task may use. An MPS share's memory limit is
// the stated vram (written beside it, it must be the same); on a time-slice share the node agent
// stops a task using more (agent/node/task_signals.h).
Status ReadVram(const YamlReader& rd, const YAML::Node& n, const std::string& path, JobSpec& s) {
  const std::string field = path + ".vram";
  auto text = rd.Scalar(n, field);
  if (!text) return text.error();
  std::string t = *text;
  if (t.size() > 3 && t.compare(t.size() - 2, 2, "iB") == 0) t.pop_back();  // 12GiB as 12Gi
  const std::string range = "GPU memory per task from 1Mi to 1Ti, e.g. 12Gi or 12GiB";
  auto v = ParseMemoryMiB(t);
  if (!v) return rd.Error(n, field, "'" + *text + "' is not a memory quantity; expected " + range);
  if (*v < 1 || *v > kMaxMpsMemoryMiB) return rd.Error(n, field, "'" + *text + "' is out of range; expected " + range);
  s.vram_mib = *v;
  for (size_t i = 0; i < s.groups.size(); ++i) {
    TaskGroup& g = s.groups[i];
    if (g.share != ShareKind::kMps) continue;
    if (g.gpu_memory == 0) {
      g.gpu_memory = *v;
    } else if (g.gpu_memory != *v) {
      std::string where = path + ".tasks" + (s.groups.size() > 1 ? "[" + std::to_string(i) + "]" : "") + ".mps.memory";
      return rd.Error(n, field, "'" + *text + "' differs from " + where + " (" + FormatMemoryMiB(g.gpu_memory) +
                                    "); expected the same, or only one of them (vram is the MPS memory limit)");
    }
  }
  return Status::Ok();
}

Result<int32_t> ReadPriority(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  std::string s;
  TRY_ASSIGN(s, rd.Scalar(n, path));
  if (s == "low") return kPriorityLow;
  if (s == "normal") return kPriorityNormal;
  if (s == "high") return kPriorityHigh;
  auto v = rd.Integer(n, path, -kMaxPriority, kMaxPriority);
  if (!v) return Err(rd.Error(n, path, "'" + s + "' is not valid; expected low, normal, high or an integer from -1000000 to 1000000"));
  return static_cast<int32_t>(*v);
}

}  // namespace

// `simulated`: a scenario's job, which the simulator runs for its duration, so it needs one;
// a job submitted to allotd may instead name a command, run by a node agent until it exits.
std::optional<Topology> ParseTopology(std::string_view t) {
  if (t == "none") return Topology::kNone;
  if (t == "nvlink") return Topology::kNvlink;
  if (t == "rack") return Topology::kRack;
  if (t == "zone") return Topology::kZone;
  return std::nullopt;
}

Result<std::vector<ScenarioJob>> ReadJob(const YamlReader& rd, const YAML::Node& n, const std::string& path, bool simulated) {
  return ReadJob(rd, n, path, simulated, /*service=*/false);
}

Result<std::vector<ScenarioJob>> ReadJob(const YamlReader& rd, const YAML::Node& written, const std::string& path, bool simulated,
                                         bool service) {
  // A named template's fields under the job's own (spec/job_template.h), read as one job.
  TemplateApplied applied;
  TRY_ASSIGN(applied, ApplyTemplate(rd, written, path));
  const YAML::Node& n = applied.node;
  if (service) {
    // A service's replica template: the job's fields (the service's own are read by
    // spec/service_reader.cc) and no end: a replica runs until the service removes it.
    TRY_STATUS(rd.Fields(n, path, {"name", "tenant", "kind", "submit", "tasks", "topology", "priority", "min_runtime",
                                   "grace", "command", "image", "mounts", "env", "shm_size", "require", "replicas",
                                   "min_replicas", "max_replicas", "spread", "port", "max_unavailable", "max_surge",
                                   "autoscale", "load", "template", "vram"}));
  } else {
    TRY_STATUS(rd.Fields(n, path, {"name", "tenant", "kind", "submit", "duration", "time_limit", "tasks", "topology", "priority", "min_runtime",
                                   "checkpoint", "grace", "repeat", "command", "image", "mounts", "env", "shm_size",
                                   "reservation", "require", "array", "retries", "after", "fail", "template", "vram"}));
  }
  ScenarioJob j;
  j.line = written.Mark().line + 1;
  JobSpec& s = j.spec;
  s.template_name = std::move(applied.name);
  s.template_tenant = std::move(applied.tenant);
  if (!n["name"]) return Err(rd.Error(n, path + ".name", "required"));
  if (!n["tenant"]) return Err(rd.Error(n, path + ".tenant", "required"));
  if (!n["tasks"]) return Err(rd.Error(n, path + ".tasks", "required"));
  if (const YAML::Node c = n["command"]) {
    if (!c.IsSequence() || c.size() == 0) {
      return Err(rd.Error(c, path + ".command", "expected the program and its arguments as a list, e.g. [python, train.py]"));
    }
    for (size_t i = 0; i < c.size(); ++i) {
      std::string arg;
      TRY_ASSIGN(arg, rd.Scalar(c[i], path + ".command[" + std::to_string(i) + "]"));
      if (i == 0 && arg.empty()) return Err(rd.Error(c[i], path + ".command[0]", "expected the program to run, not an empty string"));
      s.command.push_back(std::move(arg));
    }
  }
  if (!n["duration"] && !service && (simulated || s.command.empty())) {
    return Err(rd.Error(n, path + ".duration", simulated ? "required (the simulator runs each job for its duration)"
                                                         : "required unless the job names a command"));
  }
  TRY_ASSIGN(s.name, rd.Scalar(n["name"], path + ".name"));
  TRY_STATUS(rd.At(n["name"], CheckName(path + ".name", s.name)));
  TRY_ASSIGN(j.tenant, rd.Scalar(n["tenant"], path + ".tenant"));
  TRY_STATUS(rd.At(n["tenant"], CheckTenantPath(path + ".tenant", j.tenant)));
  // Durations are bounded so that start + duration never wraps: "9223372036854775s" was taken,
  // and the job "finished" 16 ms after it started.
  const std::string kDurations = "a duration from 1ms to 3650d, e.g. 90s or 2h";
  if (n["submit"]) TRY_ASSIGN(s.submit_ms, rd.Bounded(n["submit"], path + ".submit", ParseDurationMs, 0, kMaxDurationMs, "a time from 0s to 3650d"));
  if (n["duration"]) TRY_ASSIGN(s.duration_ms, rd.Bounded(n["duration"], path + ".duration", ParseDurationMs, 1, kMaxDurationMs, kDurations));
  if (n["time_limit"]) {
    TRY_ASSIGN(s.time_limit_ms, rd.Bounded(n["time_limit"], path + ".time_limit", ParseDurationMs, 1, kMaxDurationMs, kDurations));
    if (s.time_limit_ms < s.duration_ms) {
      return Err(rd.Error(n["time_limit"], path + ".time_limit", "'" + n["time_limit"].Scalar() +
                                                                     "' is shorter than the duration; expected at least the duration "
                                                                     "(the simulator runs each job for its duration)"));
    }
  }
  const YAML::Node tasks = n["tasks"];
  if (tasks.IsSequence()) {
    if (tasks.size() == 0) return Err(rd.Error(tasks, path + ".tasks", "expected at least one task group"));
    for (size_t i = 0; i < tasks.size(); ++i) TRY_STATUS(ReadGroupInto(rd, tasks[i], path + ".tasks[" + std::to_string(i) + "]", j));
  } else {
    TRY_STATUS(ReadGroupInto(rd, tasks, path + ".tasks", j));
  }
  if (n["vram"]) TRY_STATUS(ReadVram(rd, n["vram"], path, s));
  if (n["topology"]) {
    std::string t;
    TRY_ASSIGN(t, rd.Scalar(n["topology"], path + ".topology"));
    auto topology = ParseTopology(t);
    if (!topology) return Err(rd.Error(n["topology"], path + ".topology", "'" + t + "' is not valid; expected none, nvlink, rack or zone"));
    s.topology = *topology;
  }
  if (n["priority"]) TRY_ASSIGN(s.priority, ReadPriority(rd, n["priority"], path + ".priority"));
  if (n["reservation"]) {
    TRY_ASSIGN(s.reservation, rd.Scalar(n["reservation"], path + ".reservation"));
    TRY_STATUS(rd.At(n["reservation"], CheckName(path + ".reservation", s.reservation)));
  }
  if (n["require"]) TRY_ASSIGN(s.require, ReadRequire(rd, n["require"], path + ".require"));
  if (n["kind"]) {
    std::string k;
    TRY_ASSIGN(k, rd.Scalar(n["kind"], path + ".kind"));
    if (service && k == "service") k = "inference";  // a service's replicas are inference jobs
    auto kind = ParseJobKind(k);
    if (!kind) return Err(rd.Error(n["kind"], path + ".kind", "'" + k + "' is not valid; expected batch, training, inference or interactive"));
    s.kind = *kind;
  }
  if (n["min_runtime"]) {
    TRY_ASSIGN(s.min_runtime_ms, rd.Bounded(n["min_runtime"], path + ".min_runtime", ParseDurationMs, 0, kMaxDurationMs, "a duration from 0s to 3650d"));
  }
  const std::string kGrace = "a duration from 0s to 1d, e.g. 30s";
  if (n["grace"]) TRY_ASSIGN(s.grace_ms, rd.Bounded(n["grace"], path + ".grace", ParseDurationMs, 0, kMaxGraceMs, kGrace));
  if (const YAML::Node c = n["checkpoint"]) {
    std::string cp = path + ".checkpoint";
    TRY_STATUS(rd.Fields(c, cp, {"interval", "grace"}));
    if (!c["interval"]) return Err(rd.Error(c, cp + ".interval", "required"));
    TRY_ASSIGN(s.checkpoint_interval_ms, rd.Bounded(c["interval"], cp + ".interval", ParseDurationMs, 1, kMaxDurationMs, kDurations));
    if (c["grace"]) TRY_ASSIGN(s.grace_ms, rd.Bounded(c["grace"], cp + ".grace", ParseDurationMs, 0, kMaxGraceMs, kGrace));
  }
  TRY_STATUS(ReadJobEnvironment(rd, n, path, j.tenant, s));
  if (n["retries"]) {
    int64_t r;
    TRY_ASSIGN(r, rd.Integer(n["retries"], path + ".retries", 0, kMaxRetries));
    s.retries = static_cast<int32_t>(r);
  }
  if (n["after"]) TRY_ASSIGN(s.after, ReadAfter(rd, n["after"], path + ".after"));
  if (n["fail"] && !simulated) {
    return Err(rd.Error(n["fail"], path + ".fail", "applies to scenario files only (the simulator's failure injection)"));
  }
  if (n["array"]) {
    if (n["repeat"]) return Err(rd.Error(n["repeat"], path + ".repeat", "given with array; expected one of them"));
    ArraySpec a;
    TRY_ASSIGN(a, ReadArray(rd, n["array"], path + ".array"));
    TRY_STATUS(rd.At(n["name"], CheckName(path + ".name (with -" + std::to_string(a.count - 1) + " added by array)",
                                          s.name + "-" + std::to_string(a.count - 1))));
    std::vector<ScenarioJob> elements = ExpandArray(j, a);
    if (n["fail"]) TRY_STATUS(ReadFail(rd, n["fail"], path + ".fail", elements));
    return elements;
  }
  int64_t repeat = 1;
  if (n["repeat"]) TRY_ASSIGN(repeat, rd.Integer(n["repeat"], path + ".repeat", 1, 1000000));
  std::vector<ScenarioJob> out;
  if (!n["repeat"]) {
    out.push_back(std::move(j));
    if (n["fail"]) TRY_STATUS(ReadFail(rd, n["fail"], path + ".fail", out));
    return out;
  }
  for (int64_t i = 0; i < repeat; ++i) {
    ScenarioJob c = j;
    c.spec.name = j.spec.name + "-" + std::to_string(i);
    if (i == repeat - 1) TRY_STATUS(rd.At(n["name"], CheckName(path + ".name (with -" + std::to_string(i) + " added by repeat)", c.spec.name)));
    out.push_back(std::move(c));
  }
  if (n["fail"]) TRY_STATUS(ReadFail(rd, n["fail"], path + ".fail", out));
  return out;
}

Result<ScenarioJob> ReadJobObject(const YAML::Node& root, const std::string& source) {
  return ReadObject<ScenarioJob>(root, source, "job", "name, tenant, tasks, and a duration or a command",
                                 [](const YamlReader& rd, const YAML::Node& n) -> Result<ScenarioJob> {
                                   if (n["repeat"]) {
                                     return Err(rd.Error(n["repeat"], "job.repeat", "applies to scenario files only; submit each job"));
                                   }
                                   if (n["array"]) {
                                     return Err(rd.Error(n["array"], "job.array", "an array is submitted as a batch (ReadJobBatch)"));
                                   }
                                   std::vector<ScenarioJob> jobs;
                                   TRY_ASSIGN(jobs, ReadJob(rd, n, "job", /*simulated=*/false));
                                   return std::move(jobs.front());
                                 });
}

Result<std::vector<ScenarioJob>> ReadJobBatch(const YAML::Node& root, const std::string& source, const TemplateCatalog* templates) {
  YamlReader rd(source);
  rd.set_templates(templates);
  std::vector<ScenarioJob> out;
  try {
    auto one = [&](const YAML::Node& n, const std::string& path) -> Status {
      if (!n.IsMap()) return rd.Error(n, path, "expected an object with name, tenant, tasks, and a duration or a command");
      if (n["repeat"]) return rd.Error(n["repeat"], path + ".repeat", "applies to scenario files only; submit an array (array: {count: N})");
      auto jobs = ReadJob(rd, n, path, /*simulated=*/false);
      if (!jobs) return jobs.error();
      for (ScenarioJob& j : *jobs) out.push_back(std::move(j));
      return Status::Ok();
    };
    if (root.IsSequence()) {
      if (root.size() == 0) return Err(rd.Error(root, "jobs", "expected at least one job"));
      for (size_t i = 0; i < root.size(); ++i) TRY_STATUS(one(root[i], "jobs[" + std::to_string(i) + "]"));
    } else {
      TRY_STATUS(one(root, "job"));
    }
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
  std::set<std::pair<std::string, std::string>> names;
  for (const ScenarioJob& j : out) {
    if (!names.insert({j.tenant, j.spec.name}).second) {
      return Err(InvalidArgument("jobs: '" + j.spec.name + "' is named twice in tenant " + j.tenant + "; expected job names unique within a tenant"));
    }
  }
  TRY_STATUS(OrderByDependencies(out, /*all_in_batch=*/false, ""));
  return out;
}

Result<ScenarioJob> ParseJob(const std::string& text, const std::string& source) {
  auto root = LoadObject(text, source);
  if (!root) return Err(root.error());
  return ReadJobObject(*root, source);
}

Status ResolveJob(ScenarioJob& j, const ClusterState& state, const std::string& where) {
  TenantId t = state.tenants().Find(j.tenant);
  if (!t.valid() || t == state.tenants().root()) {
    return InvalidArgument(where + "tenant: " + "unknown tenant '" + j.tenant + "'; expected a path listed under tenants");
  }
  j.spec.tenant = t;
  // Groups sized from a model take their allocation now, against this fleet.
  if (Status s = ChooseSizedAllocations(j, state, where); !s.ok()) return s;
  bool wants_gpu = false;
  for (const TaskGroup& g : j.spec.groups) wants_gpu |= g.gpu > 0 || g.shared();
  if (!j.gpu_model.empty()) {
    ResourceId r = state.resource_names().Find("gpu/" + j.gpu_model);
    if (r == ResourceNames::kInvalid) {
      return InvalidArgument(where + "tasks.gpu_model: " + "no node in the fleet has GPU model '" + j.gpu_model + "'");
    }
    j.spec.gpu_resource = r;
  } else if (wants_gpu) {
    // The fleet's GPU models, for a job that does not name one.
    std::vector<ResourceId> models;
    for (const Fleet::NodeShape& s : state.fleet().shapes()) {
      if (s.gpu_resource != kCpu && std::find(models.begin(), models.end(), s.gpu_resource) == models.end()) {
        models.push_back(s.gpu_resource);
      }
    }
    if (models.size() != 1) {
      return InvalidArgument(where + "tasks.gpu_model: " + "required: the fleet has " + std::to_string(models.size()) +
                                                             " GPU models; expected one of them");
    }
    j.spec.gpu_resource = models.front();
  }
  // MIG profiles by name, against the job's GPU model.
  for (size_t i = 0; i < j.spec.groups.size(); ++i) {
    if (j.spec.groups[i].share != ShareKind::kMig) continue;
    std::string model = state.resource_names().Name(j.spec.gpu_resource).substr(4);
    const MigGeometry* geo = FindMigGeometry(model);
    std::string field = where + "tasks" + (j.spec.groups.size() > 1 ? "[" + std::to_string(i) + "]" : "") + ".mig";
    const std::string& name = i < j.mig.size() ? j.mig[i] : "";
    if (!geo) return InvalidArgument(field + ": " + "'" + name + "' asks MIG on " + model + ", which has no MIG");
    int p = geo->Find(name);
    if (p < 0) {
      std::string known;
      for (const MigProfile& q : geo->profiles) known += (known.empty() ? "" : ", ") + std::string(q.name);
      return InvalidArgument(field + ": " + "'" + name + "' is not a MIG profile of " + model + "; expected one of " + known);
    }
    j.spec.groups[i].mig_profile = static_cast<uint8_t>(p);
  }
  // A stated vram no task's GPU (or MIG instance) can hold could never run.
  if (j.spec.vram_mib > 0 && j.spec.gpu_resource != kCpu) {
    std::string model = state.resource_names().Name(j.spec.gpu_resource).substr(4);
    const GpuModelInfo* info = FindGpuModel(model);
    for (size_t i = 0; info && i < j.spec.groups.size(); ++i) {
      const TaskGroup& g = j.spec.groups[i];
      int64_t holds = info->memory_mib;
      std::string what = "a " + model;
      if (g.share == ShareKind::kMig) {
        const MigGeometry* geo = FindMigGeometry(model);
        holds = geo->profiles[g.mig_profile].memory_mib;
        what = "a " + std::string(geo->profiles[g.mig_profile].name) + " instance";
      }
      if ((g.gpu > 0 || g.shared()) && j.spec.vram_mib > holds) {
        return InvalidArgument(where + "vram: " + FormatMemoryMiB(j.spec.vram_mib) + " is more than " + what + " holds (" +
                               FormatMemoryMiB(holds) + "); expected at most that");
      }
    }
  }
  return Status::Ok();
}

}  // namespace allot
