// The scenario YAML reader. Strict: unknown fields, wrong types and bad quantities are errors
// that name the file, line, field path and what was expected. Nothing runs on error.
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "core/names.h"
#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"
#include "placement/score/scorer.h"
#include "spec/field_limits.h"
#include "spec/job_environment_reader.h"
#include "sim/scenario.h"
#include "sim/scenario_budgets.h"
#include "spec/field_reader.h"

namespace allot {
namespace {

#define TRY_ASSIGN(lhs, expr)              \
  do {                                     \
    auto _r = (expr);                      \
    if (!_r) return Err(_r.error());       \
    lhs = *_r;                             \
  } while (0)
#define TRY_STATUS(expr)                   \
  do {                                     \
    Status _s = (expr);                    \
    if (!_s.ok()) return Err(_s);          \
  } while (0)

Result<int64_t> QuotaAmount(const YamlReader& rd, const YAML::Node& n, const std::string& path,
                            const std::string& resource) {
  if (resource == "memory") return rd.Bounded(n, path, ParseMemoryMiB, 0, kMaxQuotaMemoryMiB, "memory from 0Mi to 1048576Ti");
  if (resource.rfind("gpu/", 0) == 0) return rd.Bounded(n, path, ParseGpus, 0, kMaxQuotaGpus * kGpuUnit, "GPUs from 0 to 1000000");
  return rd.Bounded(n, path, ParseMilli, 0, kMaxQuotaCpuMilli, "CPUs from 0 to 100000000");
}

Result<std::vector<QuotaEntry>> ReadQuota(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  if (!n.IsMap()) return Err(rd.Error(n, path, "expected a mapping of resource to amount"));
  std::vector<QuotaEntry> out;
  for (const auto& kv : n) {
    std::string res = kv.first.as<std::string>();
    std::string p = YamlReader::Join(path, res);
    if (res != "cpu" && res != "memory" && res.rfind("gpu/", 0) != 0) {
      return Err(rd.Error(kv.first, p, "unknown resource; expected cpu, memory or gpu/<model>"));
    }
    int64_t amount;
    TRY_ASSIGN(amount, QuotaAmount(rd, kv.second, p, res));
    out.push_back({res, amount});
  }
  return out;
}

Result<std::vector<NodeSpec>> ReadFleetGroup(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TRY_STATUS(rd.Fields(n, path, {"prefix", "name", "count", "zone", "rack", "cpu", "memory", "gpus", "nvlink_domain"}));
  NodeSpec base;
  int64_t count = 1;
  std::string prefix, name;
  if (n["prefix"]) TRY_ASSIGN(prefix, rd.Scalar(n["prefix"], path + ".prefix"));
  if (n["name"]) TRY_ASSIGN(name, rd.Scalar(n["name"], path + ".name"));
  if (prefix.empty() == name.empty()) return Err(rd.Error(n, path, "expected exactly one of 'prefix' (with count) or 'name'"));
  if (n["count"]) TRY_ASSIGN(count, rd.Integer(n["count"], path + ".count", 1, 1000000));
  if (!name.empty() && count != 1) return Err(rd.Error(n["count"], path + ".count", "a named node has count 1"));
  if (n["zone"]) TRY_ASSIGN(base.zone, rd.Scalar(n["zone"], path + ".zone"));
  if (n["rack"]) TRY_ASSIGN(base.rack, rd.Scalar(n["rack"], path + ".rack"));
  if (n["nvlink_domain"]) TRY_ASSIGN(base.nvlink_domain, rd.Scalar(n["nvlink_domain"], path + ".nvlink_domain"));
  if (!n["cpu"]) return Err(rd.Error(n, path + ".cpu", "required"));
  if (!n["memory"]) return Err(rd.Error(n, path + ".memory", "required"));
  TRY_ASSIGN(base.cpu, rd.Quantity(n["cpu"], path + ".cpu", ParseMilli));
  TRY_ASSIGN(base.memory, rd.Quantity(n["memory"], path + ".memory", ParseMemoryMiB));
  if (const YAML::Node g = n["gpus"]) {
    std::string gp = path + ".gpus";
    TRY_STATUS(rd.Fields(g, gp, {"model", "count", "sharing", "mig_layout", "replicas", "oversubscription", "groups"}));
    if (!g["model"]) return Err(rd.Error(g, gp + ".model", "required"));
    TRY_ASSIGN(base.gpu_model, rd.Scalar(g["model"], gp + ".model"));
    if (!FindGpuModel(base.gpu_model)) {
      return Err(rd.Error(g["model"], gp + ".model", "unknown GPU model '" + base.gpu_model +
                                                         "'; expected one of the catalog (e.g. H100-80GB, A100-80GB, L40S-48GB)"));
    }
    int64_t c = 0;
    if (!g["count"]) return Err(rd.Error(g, gp + ".count", "required"));
    TRY_ASSIGN(c, rd.Integer(g["count"], gp + ".count", 1, kMaxGpusPerNode));
    base.gpu_count = static_cast<int>(c);
    if (const YAML::Node gr = g["groups"]) {
      if (!gr.IsSequence()) return Err(rd.Error(gr, gp + ".groups", "expected a list of GPU index lists such as [[0, 1, 2, 3], [4, 5, 6, 7]]"));
      uint64_t seen = 0;
      for (size_t i = 0; i < gr.size(); ++i) {
        std::string ip = gp + ".groups[" + std::to_string(i) + "]";
        if (!gr[i].IsSequence()) return Err(rd.Error(gr[i], ip, "expected a list of GPU indices"));
        std::vector<int> group;
        for (size_t k = 0; k < gr[i].size(); ++k) {
          int64_t v;
          TRY_ASSIGN(v, rd.Integer(gr[i][k], ip + "[" + std::to_string(k) + "]", 0, base.gpu_count - 1));
          if ((seen >> v) & 1) return Err(rd.Error(gr[i][k], ip, "GPU " + std::to_string(v) + " is in two groups; expected disjoint groups"));
          seen |= uint64_t{1} << v;
          group.push_back(static_cast<int>(v));
        }
        base.gpu_groups.push_back(std::move(group));
      }
    }
    if (g["sharing"]) {
      std::string s;
      TRY_ASSIGN(s, rd.Scalar(g["sharing"], gp + ".sharing"));
      auto sharing = ParseSharing(s);
      if (!sharing) return Err(rd.Error(g["sharing"], gp + ".sharing", "'" + s + "' is not valid; expected exclusive, mig, mps or timeslice"));
      base.sharing = *sharing;
    }
    auto only_for = [&](const char* key, Sharing s) -> Status {
      if (g[key] && base.sharing != s) {
        return rd.Error(g[key], gp + "." + key, std::string("applies to sharing: ") + SharingName(s) + " only");
      }
      return Status::Ok();
    };
    TRY_STATUS(only_for("mig_layout", Sharing::kMig));
    TRY_STATUS(only_for("replicas", Sharing::kTimeslice));
    TRY_STATUS(only_for("oversubscription", Sharing::kMps));
    if (base.sharing == Sharing::kMig && !FindMigGeometry(base.gpu_model)) {
      return Err(rd.Error(g["sharing"], gp + ".sharing", "mig: " + base.gpu_model +
                                                             " has no MIG; expected a MIG-capable model (A100, H100, H200, B200, A30)"));
    }
    if (const YAML::Node l = g["mig_layout"]) {
      if (!l.IsSequence()) return Err(rd.Error(l, gp + ".mig_layout", "expected a list of MIG profiles such as [1g.10gb, 3g.40gb]"));
      for (size_t i = 0; i < l.size(); ++i) {
        std::string name;
        TRY_ASSIGN(name, rd.Scalar(l[i], gp + ".mig_layout[" + std::to_string(i) + "]"));
        base.mig_layout.push_back(name);
      }
      auto layout = LayoutFromNames(*FindMigGeometry(base.gpu_model), base.mig_layout);
      if (!layout) return Err(rd.Error(l, gp + ".mig_layout", layout.error().message()));
    }
    if (g["replicas"]) {
      int64_t v;
      TRY_ASSIGN(v, rd.Integer(g["replicas"], gp + ".replicas", 1, 48));
      if (kGpuUnit % v != 0) {
        return Err(rd.Error(g["replicas"], gp + ".replicas", std::to_string(v) + " does not divide a GPU exactly; expected "
                                                              "1-8, 10, 12, 14, 15, 20, 21, 24, 25, 28, 30, 35, 40 or 42"));
      }
      base.replicas = static_cast<int>(v);
    }
    if (g["oversubscription"]) {
      TRY_ASSIGN(base.oversubscription_milli, rd.Quantity(g["oversubscription"], gp + ".oversubscription", ParseMilli));
      if (base.oversubscription_milli < kMilli || base.oversubscription_milli > 48 * kMilli) {
        return Err(rd.Error(g["oversubscription"], gp + ".oversubscription", "'" + g["oversubscription"].Scalar() +
                                                                                "' is out of range; expected 1 to 48"));
      }
    }
  }
  std::vector<NodeSpec> out;
  for (int64_t i = 0; i < count; ++i) {
    NodeSpec s = base;
    s.name = name.empty() ? prefix + std::to_string(i) : name;
    if (i == 0 || i == count - 1) {  // the names between are no longer than the last
      TRY_STATUS(rd.At(name.empty() ? n["prefix"] : n["name"], CheckName(path + (name.empty() ? ".prefix" : ".name"), s.name)));
    }
    out.push_back(std::move(s));
  }
  return out;
}

// A list of pool kinds ([exclusive, mig, …]) as a mask, bit 1 << Sharing.
Result<uint8_t> ReadPoolKinds(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  if (!n.IsSequence() || n.size() == 0) return Err(rd.Error(n, path, "expected a list of pool kinds such as [exclusive, mig]"));
  uint8_t mask = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string item = path + "[" + std::to_string(i) + "]", k;
    TRY_ASSIGN(k, rd.Scalar(n[i], item));
    auto s = ParseSharing(k);
    if (!s) return Err(rd.Error(n[i], item, "'" + k + "' is not valid; expected exclusive, mig, mps or timeslice"));
    mask |= static_cast<uint8_t>(1u << static_cast<int>(*s));
  }
  return mask;
}

Result<ScenarioTenant> ReadTenant(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TRY_STATUS(rd.Fields(n, path, {"path", "guarantee", "max", "weight", "trust", "pools"}));
  ScenarioTenant t;
  t.line = n.Mark().line + 1;
  if (!n["path"]) return Err(rd.Error(n, path + ".path", "required"));
  TRY_ASSIGN(t.path, rd.Scalar(n["path"], path + ".path"));
  TRY_STATUS(rd.At(n["path"], CheckTenantPath(path + ".path", t.path)));
  if (n["guarantee"]) TRY_ASSIGN(t.guarantee, ReadQuota(rd, n["guarantee"], path + ".guarantee"));
  if (n["max"]) TRY_ASSIGN(t.max, ReadQuota(rd, n["max"], path + ".max"));
  if (n["weight"]) {
    TRY_ASSIGN(t.weight, rd.Bounded(n["weight"], path + ".weight", ParseMilli, 1, kMaxWeightMilli, "a weight from 0.001 to 1000000"));
  }
  if (n["pools"]) TRY_ASSIGN(t.pools, ReadPoolKinds(rd, n["pools"], path + ".pools"));
  if (n["trust"]) {
    std::string trust;
    TRY_ASSIGN(trust, rd.Scalar(n["trust"], path + ".trust"));
    if (trust == "trusted") {
      t.trust = Trust::kTrusted;
    } else if (trust == "untrusted") {
      t.trust = Trust::kUntrusted;
    } else {
      return Err(rd.Error(n["trust"], path + ".trust", "'" + trust + "' is not valid; expected trusted or untrusted"));
    }
  }
  return t;
}

Result<TaskGroup> ReadTaskGroup(const YamlReader& rd, const YAML::Node& n, const std::string& path, std::string& model,
                                std::string& mig) {
  TRY_STATUS(rd.Fields(n, path, {"count", "gpus", "cpu", "memory", "gpu_model", "mig", "mps", "timeslice"}));
  TaskGroup g;
  int kinds = !!n["gpus"] + !!n["mig"] + !!n["mps"] + !!n["timeslice"];
  if (kinds > 1) {
    return Err(rd.Error(n, path, "expected at most one of gpus, mig, mps and timeslice (each task holds whole GPUs or one share)"));
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

// `simulated`: a scenario's job, which the simulator runs for its duration, so it needs one;
// a job submitted to allotd may instead name a command, run by a node agent until it exits.
Result<std::vector<ScenarioJob>> ReadJob(const YamlReader& rd, const YAML::Node& n, const std::string& path, bool simulated) {
  TRY_STATUS(rd.Fields(n, path, {"name", "tenant", "kind", "submit", "duration", "time_limit", "tasks", "topology", "priority", "min_runtime",
                                 "checkpoint", "grace", "repeat", "command", "image", "mounts", "env", "shm_size"}));
  ScenarioJob j;
  j.line = n.Mark().line + 1;
  JobSpec& s = j.spec;
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
  if (!n["duration"] && (simulated || s.command.empty())) {
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
    for (size_t i = 0; i < tasks.size(); ++i) {
      TaskGroup g;
      j.mig.emplace_back();
      TRY_ASSIGN(g, ReadTaskGroup(rd, tasks[i], path + ".tasks[" + std::to_string(i) + "]", j.gpu_model, j.mig.back()));
      s.groups.push_back(g);
    }
  } else {
    TaskGroup g;
    j.mig.emplace_back();
    TRY_ASSIGN(g, ReadTaskGroup(rd, tasks, path + ".tasks", j.gpu_model, j.mig.back()));
    s.groups.push_back(g);
  }
  if (n["topology"]) {
    std::string t;
    TRY_ASSIGN(t, rd.Scalar(n["topology"], path + ".topology"));
    if (t == "none") s.topology = Topology::kNone;
    else if (t == "nvlink") s.topology = Topology::kNvlink;
    else if (t == "rack") s.topology = Topology::kRack;
    else if (t == "zone") s.topology = Topology::kZone;
    else return Err(rd.Error(n["topology"], path + ".topology", "'" + t + "' is not valid; expected none, nvlink, rack or zone"));
  }
  if (n["priority"]) TRY_ASSIGN(s.priority, ReadPriority(rd, n["priority"], path + ".priority"));
  if (n["kind"]) {
    std::string k;
    TRY_ASSIGN(k, rd.Scalar(n["kind"], path + ".kind"));
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
  int64_t repeat = 1;
  if (n["repeat"]) TRY_ASSIGN(repeat, rd.Integer(n["repeat"], path + ".repeat", 1, 1000000));
  std::vector<ScenarioJob> out;
  if (!n["repeat"]) {
    out.push_back(std::move(j));
    return out;
  }
  for (int64_t i = 0; i < repeat; ++i) {
    ScenarioJob c = j;
    c.spec.name = j.spec.name + "-" + std::to_string(i);
    if (i == repeat - 1) TRY_STATUS(rd.At(n["name"], CheckName(path + ".name (with -" + std::to_string(i) + " added by repeat)", c.spec.name)));
    out.push_back(std::move(c));
  }
  return out;
}

Result<GenerateSpec> ReadGenerate(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TRY_STATUS(rd.Fields(n, path, {"seed", "nodes", "gpu_model", "gpus_per_node", "cpu", "memory", "nodes_per_rack",
                                 "racks_per_zone", "orgs", "teams", "guarantee_fraction", "jobs_per_day", "days", "load"}));
  GenerateSpec g;
  auto integer = [&](const char* key, auto& field, int64_t min, int64_t max) -> Status {
    if (!n[key]) return Status::Ok();
    auto v = rd.Integer(n[key], YamlReader::Join(path, key), min, max);
    if (!v) return v.error();
    field = static_cast<std::remove_reference_t<decltype(field)>>(*v);
    return Status::Ok();
  };
  auto fraction = [&](const char* key, int64_t& field) -> Status {
    if (!n[key]) return Status::Ok();
    auto v = rd.Quantity(n[key], YamlReader::Join(path, key), ParseMilli);
    if (!v) return v.error();
    if (*v > 10 * kMilli) return rd.Error(n[key], YamlReader::Join(path, key), "expected a fraction such as 0.7");
    field = *v;
    return Status::Ok();
  };
  int64_t seed = 1;
  TRY_STATUS(integer("seed", seed, 0, INT64_MAX));
  g.seed = static_cast<uint64_t>(seed);
  TRY_STATUS(integer("nodes", g.nodes, 1, 1000000));
  TRY_STATUS(integer("gpus_per_node", g.gpus_per_node, 1, kMaxGpusPerNode));
  TRY_STATUS(integer("nodes_per_rack", g.nodes_per_rack, 1, 100000));
  TRY_STATUS(integer("racks_per_zone", g.racks_per_zone, 1, 100000));
  TRY_STATUS(integer("orgs", g.orgs, 1, 10000));
  TRY_STATUS(integer("teams", g.teams, 1, 100000));
  TRY_STATUS(integer("jobs_per_day", g.jobs_per_day, 0, 10000000));
  int64_t days = 1;
  TRY_STATUS(integer("days", days, 1, 3650));
  g.days_ms = days * 86400000;
  TRY_STATUS(fraction("guarantee_fraction", g.guarantee_permille));
  TRY_STATUS(fraction("load", g.load_permille));
  if (g.guarantee_permille > kMilli) {
    return Err(rd.Error(n["guarantee_fraction"], path + ".guarantee_fraction", "expected a fraction from 0 to 1"));
  }
  if (g.teams < g.orgs) return Err(rd.Error(n["teams"], path + ".teams", "expected at least as many teams as orgs"));
  if (n["gpu_model"]) {
    TRY_ASSIGN(g.gpu_model, rd.Scalar(n["gpu_model"], path + ".gpu_model"));
    if (!FindGpuModel(g.gpu_model)) return Err(rd.Error(n["gpu_model"], path + ".gpu_model", "unknown GPU model '" + g.gpu_model + "'"));
  }
  if (n["cpu"]) TRY_ASSIGN(g.node_cpu, rd.Quantity(n["cpu"], path + ".cpu", ParseMilli));
  if (n["memory"]) TRY_ASSIGN(g.node_memory, rd.Quantity(n["memory"], path + ".memory", ParseMemoryMiB));
  return g;
}

Result<SchedulerConfig> ReadScheduler(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TRY_STATUS(rd.Fields(n, path, {"pass_interval", "preemption_cooldown", "max_victims", "fair_share_preemption",
                                 "fair_share_threshold", "mig_relayout_delay", "mig_relayout_hold", "backfill_interval",
                                 "share_policy", "kind_pools"}));
  SchedulerConfig c;
  if (const YAML::Node kp = n["kind_pools"]) {
    if (!kp.IsMap()) return Err(rd.Error(kp, path + ".kind_pools", "expected a mapping such as {inference: [mig, mps], training: [exclusive]}"));
    for (const auto& kv : kp) {
      std::string kind = kv.first.as<std::string>();
      std::string kpath = path + ".kind_pools." + kind;
      auto found = ParseJobKind(kind);
      if (!found) return Err(rd.Error(kv.first, kpath, "unknown job kind; expected batch, training, inference or interactive"));
      TRY_ASSIGN(c.kind_pools[static_cast<int>(*found)], ReadPoolKinds(rd, kv.second, kpath));
    }
  }
  if (n["backfill_interval"]) {
    TRY_ASSIGN(c.backfill_interval_ms, rd.Quantity(n["backfill_interval"], path + ".backfill_interval", ParseDurationMs));
  }
  if (n["share_policy"]) {
    TRY_ASSIGN(c.share_policy, rd.Scalar(n["share_policy"], path + ".share_policy"));
    bool known = c.share_policy == "packing";
    std::string names = "packing";
    for (const ScorerEntry& e : Scorers()) {
      known |= e.name == c.share_policy;
      names += ", " + std::string(e.name);
    }
    if (!known) return Err(rd.Error(n["share_policy"], path + ".share_policy", "'" + c.share_policy + "' is not valid; expected one of " + names));
    if (c.share_policy == "packing") c.share_policy.clear();
  }
  if (n["mig_relayout_delay"]) {
    TRY_ASSIGN(c.mig_relayout_delay_ms, rd.Quantity(n["mig_relayout_delay"], path + ".mig_relayout_delay", ParseDurationMs));
  }
  if (n["mig_relayout_hold"]) {
    TRY_ASSIGN(c.mig_relayout_hold_ms, rd.Quantity(n["mig_relayout_hold"], path + ".mig_relayout_hold", ParseDurationMs));
  }
  if (n["pass_interval"]) {
    TRY_ASSIGN(c.pass_interval_ms, rd.Quantity(n["pass_interval"], path + ".pass_interval", ParseDurationMs));
    if (c.pass_interval_ms <= 0) return Err(rd.Error(n["pass_interval"], path + ".pass_interval", "expected a duration greater than 0"));
  }
  if (n["preemption_cooldown"]) {
    TRY_ASSIGN(c.preemption_cooldown_ms, rd.Quantity(n["preemption_cooldown"], path + ".preemption_cooldown", ParseDurationMs));
  }
  if (n["max_victims"]) {
    int64_t v;
    TRY_ASSIGN(v, rd.Integer(n["max_victims"], path + ".max_victims", 1, 100000));
    c.max_victims = static_cast<int>(v);
  }
  if (n["fair_share_preemption"]) {
    std::string b;
    TRY_ASSIGN(b, rd.Scalar(n["fair_share_preemption"], path + ".fair_share_preemption"));
    if (b != "true" && b != "false") {
      return Err(rd.Error(n["fair_share_preemption"], path + ".fair_share_preemption", "expected true or false"));
    }
    c.fair_share_preemption = b == "true";
  }
  if (n["fair_share_threshold"]) {
    TRY_ASSIGN(c.fair_share_threshold_milli, rd.Quantity(n["fair_share_threshold"], path + ".fair_share_threshold", ParseMilli));
  }
  return c;
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& text, const std::string& file) {
  YamlReader rd(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg));
  }
  Scenario sc;
  sc.file = file;
  if (!root.IsMap()) return Err(rd.Error(root, "(top level)", "expected a mapping with fleet, tenants and jobs"));
  try {
    TRY_STATUS(rd.Fields(root, "", {"fleet", "tenants", "jobs", "budgets", "generate", "scheduler", "description"}));
    if (const YAML::Node f = root["fleet"]) {
      if (!f.IsSequence()) return Err(rd.Error(f, "fleet", "expected a list of node groups"));
      for (size_t i = 0; i < f.size(); ++i) {
        std::vector<NodeSpec> nodes;
        TRY_ASSIGN(nodes, ReadFleetGroup(rd, f[i], "fleet[" + std::to_string(i) + "]"));
        for (NodeSpec& s : nodes) sc.nodes.push_back(std::move(s));
      }
    }
    if (const YAML::Node t = root["tenants"]) {
      if (!t.IsSequence()) return Err(rd.Error(t, "tenants", "expected a list of tenants"));
      for (size_t i = 0; i < t.size(); ++i) {
        ScenarioTenant tenant;
        TRY_ASSIGN(tenant, ReadTenant(rd, t[i], "tenants[" + std::to_string(i) + "]"));
        sc.tenants.push_back(std::move(tenant));
      }
    }
    if (const YAML::Node j = root["jobs"]) {
      if (!j.IsSequence()) return Err(rd.Error(j, "jobs", "expected a list of jobs"));
      std::set<std::pair<std::string, std::string>> names;  // (tenant, name): unique within a tenant
      for (size_t i = 0; i < j.size(); ++i) {
        std::string p = "jobs[" + std::to_string(i) + "]";
        std::vector<ScenarioJob> jobs;
        TRY_ASSIGN(jobs, ReadJob(rd, j[i], p, /*simulated=*/true));
        for (ScenarioJob& job : jobs) {
          if (!names.insert({job.tenant, job.spec.name}).second) {
            return Err(rd.Error(j[i]["name"], p + ".name", "'" + job.spec.name + "' is used twice in tenant " + job.tenant +
                                                               "; expected job names unique within a tenant"));
          }
          sc.jobs.push_back(std::move(job));
        }
      }
    }
    if (const YAML::Node b = root["budgets"]) TRY_ASSIGN(sc.budgets, ReadBudgets(rd, b));
    if (const YAML::Node g = root["generate"]) TRY_ASSIGN(sc.generate, ReadGenerate(rd, g, "generate"));
    if (const YAML::Node s = root["scheduler"]) TRY_ASSIGN(sc.scheduler, ReadScheduler(rd, s, "scheduler"));
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
  return sc;
}

namespace {

// One object (an API body, already parsed): `read` turns the mapping into T; errors name
// `source`, the line, and the field under `what`.
template <class T, class Read>
Result<T> ReadObject(const YAML::Node& root, const std::string& source, const std::string& what,
                     const std::string& expected, Read read) {
  YamlReader rd(source);
  try {
    if (!root.IsMap()) return Err(rd.Error(root, what, "expected an object with " + expected));
    return read(rd, root);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
}

Result<YAML::Node> LoadObject(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg));
  }
}

}  // namespace

Result<ScenarioJob> ReadJobObject(const YAML::Node& root, const std::string& source) {
  return ReadObject<ScenarioJob>(root, source, "job", "name, tenant, tasks, and a duration or a command",
                                 [](const YamlReader& rd, const YAML::Node& n) -> Result<ScenarioJob> {
                                   if (n["repeat"]) {
                                     return Err(rd.Error(n["repeat"], "job.repeat", "applies to scenario files only; submit each job"));
                                   }
                                   std::vector<ScenarioJob> jobs;
                                   TRY_ASSIGN(jobs, ReadJob(rd, n, "job", /*simulated=*/false));
                                   return std::move(jobs.front());
                                 });
}

Result<ScenarioTenant> ReadTenantObject(const YAML::Node& root, const std::string& source) {
  return ReadObject<ScenarioTenant>(root, source, "tenant", "path, guarantee, max, weight, trust, pools",
                                    [](const YamlReader& rd, const YAML::Node& n) { return ReadTenant(rd, n, "tenant"); });
}

Result<ScenarioJob> ParseJob(const std::string& text, const std::string& source) {
  auto root = LoadObject(text, source);
  if (!root) return Err(root.error());
  return ReadJobObject(*root, source);
}

Result<ScenarioTenant> ParseTenant(const std::string& text, const std::string& source) {
  auto root = LoadObject(text, source);
  if (!root) return Err(root.error());
  return ReadTenantObject(*root, source);
}

Result<Scenario> ParseTenantsAndScheduler(const std::string& text, const std::string& file, bool read_tenants) {
  YamlReader rd(file);
  Scenario sc;
  sc.file = file;
  try {
    YAML::Node root = YAML::Load(text);
    const YAML::Node t = root["tenants"];
    if (read_tenants && t) {
      if (!t.IsSequence()) return Err(rd.Error(t, "tenants", "expected a list of tenants (or a file name)"));
      for (size_t i = 0; i < t.size(); ++i) {
        ScenarioTenant tenant;
        TRY_ASSIGN(tenant, ReadTenant(rd, t[i], "tenants[" + std::to_string(i) + "]"));
        sc.tenants.push_back(std::move(tenant));
      }
    }
    if (const YAML::Node s = root["scheduler"]) TRY_ASSIGN(sc.scheduler, ReadScheduler(rd, s, "scheduler"));
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
  return sc;
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(NotFound(path + ": cannot open the scenario file"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseScenario(ss.str(), path);
}

}  // namespace allot
