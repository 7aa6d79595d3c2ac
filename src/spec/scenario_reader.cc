// The scenario YAML reader. Strict: unknown fields, wrong types and bad quantities are errors
// that name the file, line, field path and what was expected. Nothing runs on error.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/names.h"
#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"
#include "placement/score/scorer.h"
#include "spec/field_limits.h"
#include "spec/scenario.h"
#include "spec/array_reader.h"
#include "spec/scenario_budgets.h"
#include "spec/field_reader.h"
#include "spec/job_stream.h"
#include "spec/yaml_split.h"
#include "spec/require_reader.h"

namespace allot {
namespace {

// The (tenant, job name) pairs of a scenario's jobs so far: job names are unique within a
// tenant. An open-addressed table of (hash, job index) into the jobs themselves, so that a month
// of jobs costs 16 bytes a slot rather than a node and two keys each.
class JobNames {
 public:
  explicit JobNames(const std::deque<ScenarioJob>& jobs) : jobs_(jobs) {}

  // Adds jobs[i]; false (nothing added) when an earlier job has its tenant and name.
  bool Add(size_t i) {
    if ((used_ + 1) * 2 > slots_.size()) Grow();
    return Place(Hash(jobs_[i]), static_cast<uint32_t>(i), true);
  }

  static uint64_t Hash(const ScenarioJob& j) {
    uint64_t h = std::hash<std::string_view>()(j.tenant) * 0x9E3779B97F4A7C15ULL ^ std::hash<std::string_view>()(j.spec.name);
    return h ^ (h >> 31);
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t index = kEmpty;
  };

  bool Place(uint64_t h, uint32_t i, bool check) {
    const size_t mask = slots_.size() - 1;
    for (size_t s = h & mask;; s = (s + 1) & mask) {
      Slot& slot = slots_[s];
      if (slot.index == kEmpty) {
        slot = {h, i};
        ++used_;
        return true;
      }
      if (check && slot.hash == h && jobs_[slot.index].tenant == jobs_[i].tenant && jobs_[slot.index].spec.name == jobs_[i].spec.name) {
        return false;
      }
    }
  }
  void Grow() {
    std::vector<Slot> old(std::max<size_t>(slots_.size() * 2, 1024));
    old.swap(slots_);
    used_ = 0;
    for (const Slot& s : old) {
      if (s.index != kEmpty) Place(s.hash, s.index, false);
    }
  }

  const std::deque<ScenarioJob>& jobs_;
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

Result<std::vector<NodeSpec>> ReadFleetGroup(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TRY_STATUS(rd.Fields(n, path, {"prefix", "name", "count", "zone", "rack", "cpu", "memory", "gpus", "nvlink_domain", "labels"}));
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
  if (n["labels"]) TRY_ASSIGN(base.labels, ReadLabels(rd, n["labels"], path + ".labels"));
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

Result<std::vector<ScenarioIncident>> ReadIncidents(const YamlReader& rd, const YAML::Node& n) {
  if (!n.IsSequence()) return Err(rd.Error(n, "incidents", "expected a list such as [{at: 30s, node_lost: a1}, {at: 10s, fail: web-r0}]"));
  std::vector<ScenarioIncident> out;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string p = "incidents[" + std::to_string(i) + "]";
    const YAML::Node x = n[i];
    TRY_STATUS(rd.Fields(x, p, {"at", "node_lost", "fail", "tenant", "reason"}));
    ScenarioIncident in;
    in.line = x.Mark().line + 1;
    if (!x["at"]) return Err(rd.Error(x, p + ".at", "required"));
    TRY_ASSIGN(in.at_ms, rd.Bounded(x["at"], p + ".at", ParseDurationMs, 0, kMaxDurationMs, "a time from 0s"));
    if (!!x["node_lost"] == !!x["fail"]) return Err(rd.Error(x, p, "expected exactly one of node_lost (a node's name) or fail (a job's name)"));
    if (x["node_lost"]) TRY_ASSIGN(in.node_lost, rd.Scalar(x["node_lost"], p + ".node_lost"));
    if (x["fail"]) TRY_ASSIGN(in.fail, rd.Scalar(x["fail"], p + ".fail"));
    if (x["tenant"]) TRY_ASSIGN(in.tenant, rd.Scalar(x["tenant"], p + ".tenant"));
    if (x["reason"]) {
      TRY_ASSIGN(in.reason, rd.Scalar(x["reason"], p + ".reason"));
      if (in.reason.empty()) return Err(rd.Error(x["reason"], p + ".reason", "empty; expected why the task failed, e.g. exit code 1"));
    }
    if (x["tenant"] && !x["fail"]) return Err(rd.Error(x["tenant"], p + ".tenant", "applies to fail only"));
    if (x["reason"] && !x["fail"]) return Err(rd.Error(x["reason"], p + ".reason", "applies to fail only"));
    out.push_back(std::move(in));
  }
  std::stable_sort(out.begin(), out.end(), [](const ScenarioIncident& a, const ScenarioIncident& b) { return a.at_ms < b.at_ms; });
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

namespace {

// What one item of the jobs list read into: the scenario's jobs, names checked.
Status ReadJobItem(const YamlReader& rd, const YAML::Node& item, size_t i, int line_offset, JobNames& names, Scenario& sc) {
  std::string p = "jobs[" + std::to_string(i) + "]";
  if (IsServiceObject(item)) {
    Result<ScenarioService> read = ReadService(rd, item, p, /*simulated=*/true);
    if (!read) return read.error();
    ScenarioService& svc = *read;
    for (const ScenarioService& other : sc.services) {
      if (other.replica.tenant == svc.replica.tenant && other.spec.name == svc.spec.name) {
        return rd.Error(item["name"], p + ".name", "service '" + svc.spec.name + "' is used twice in tenant " +
                                                       svc.replica.tenant + "; expected names unique within a tenant");
      }
    }
    sc.services.push_back(std::move(svc));
    return Status::Ok();
  }
  // A flat item by the direct reader (spec/job_stream.h): the same job and messages, without
  // ReadJob's dozens of map lookups, each of which yaml-cpp makes converting every key.
  Result<std::vector<ScenarioJob>> jobs = std::vector<ScenarioJob>{};
  int shift = 0;  // ReadJob counts lines from the piece
  if (auto flat = ReadFlatYamlJob(item, rd.file(), p, line_offset)) {
    if (!*flat) return flat->error();
    jobs->push_back(std::move(**flat));
  } else {
    jobs = ReadJob(rd, item, p, /*simulated=*/true);
    shift = line_offset;
  }
  if (!jobs) return jobs.error();
  for (ScenarioJob& job : *jobs) {
    job.line += shift;
    // No MIG profile asked and nothing sized into one: no list (ResolveJob reads none alike).
    if (job.spec.sizing.empty() && std::all_of(job.mig.begin(), job.mig.end(), [](const std::string& m) { return m.empty(); })) {
      std::vector<std::string>().swap(job.mig);
    }
    sc.jobs.push_back(std::move(job));
    if (!names.Add(sc.jobs.size() - 1)) {
      const ScenarioJob& twice = sc.jobs.back();
      return rd.Error(item["name"], p + ".name", "'" + twice.spec.name + "' is used twice in tenant " + twice.tenant +
                                                     "; expected job names unique within a tenant");
    }
  }
  return Status::Ok();
}

constexpr size_t kItemsPerPiece = 1024;

// The jobs list cut out of the text (yaml_split.h), read a piece of kItemsPerPiece items at a
// time: the parse tree of one piece at most is held. false in `same`: a piece did not parse to
// its items, and the caller reads the whole document instead.
Status ReadJobPieces(YamlReader& rd, const std::string& text, const SplitSequence& split, Scenario& sc, bool& same) {
  JobNames names(sc.jobs);
  const std::string& file = rd.file();
  for (size_t i = 0; i < split.items.size(); i += kItemsPerPiece) {
    const size_t n = std::min(kItemsPerPiece, split.items.size() - i);
    const SplitSequence::Item& first = split.items[i];
    const int offset = first.first_line;
    rd.set_line_offset(offset);
    try {
      YAML::Node seq = YAML::Load(text.substr(first.begin, split.items[i + n - 1].end - first.begin));
      if (!seq.IsSequence() || seq.size() != n) {
        same = false;
        return Status::Ok();
      }
      for (size_t k = 0; k < n; ++k) {
        if (Status s = ReadJobItem(rd, seq[k], i + k, offset, names, sc); !s.ok()) return s;
      }
    } catch (const YAML::Exception& e) {
      return InvalidArgument(file + ":" + std::to_string(e.mark.line + 1 + offset) + ": " + e.msg);
    }
  }
  rd.set_line_offset(0);
  return Status::Ok();
}

Result<Scenario> ParseScenarioText(const std::string& text, const std::string& file, bool split_jobs) {
  YamlReader rd(file);
  YAML::Node root;
  // The jobs list apart from the rest, when its shape allows, so that it is never one tree.
  std::optional<SplitSequence> split = split_jobs ? SplitTopLevelSequence(text, "jobs") : std::nullopt;
  try {
    root = YAML::Load(split ? split->rest : text);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg));
  }
  Scenario sc;
  sc.file = file;
  if (split && root.IsNull()) root = YAML::Node(YAML::NodeType::Map);  // nothing but jobs
  if (!root.IsMap()) return Err(rd.Error(root, "(top level)", "expected a mapping with fleet, tenants and jobs"));
  try {
    TRY_STATUS(rd.Fields(root, "", {"fleet", "tenants", "jobs", "jobs_file", "budgets", "reservations", "generate",
                                    "scheduler", "description", "incidents", "templates"}));
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
    // Templates before the jobs that name them.
    if (const YAML::Node t = root["templates"]) {
      if (!t.IsSequence()) return Err(rd.Error(t, "templates", "expected a list of templates, each {name, tenant, job: {...}}"));
      for (size_t i = 0; i < t.size(); ++i) {
        std::string p = "templates[" + std::to_string(i) + "]";
        TemplateDef def;
        TRY_ASSIGN(def, ReadTemplate(rd, t[i], p));
        for (const TemplateDef& other : sc.templates) {
          if (other.tenant == def.tenant && other.name == def.name) {
            return Err(rd.Error(t[i]["name"], p + ".name", "'" + def.name + "' is used twice in tenant " + def.tenant +
                                                               "; expected template names unique within a tenant"));
          }
        }
        sc.templates.push_back(std::move(def));
      }
    }
    TemplateCatalog templates;
    TRY_ASSIGN(templates, TemplateCatalog::Of(sc.templates));
    rd.set_templates(&templates);
    if (split) {
      bool same = true;
      if (Status s = ReadJobPieces(rd, text, *split, sc, same); !s.ok()) return Err(s);
      if (!same) return ParseScenarioText(text, file, /*split_jobs=*/false);
    } else if (const YAML::Node j = root["jobs"]) {
      if (!j.IsSequence()) return Err(rd.Error(j, "jobs", "expected a list of jobs"));
      JobNames names(sc.jobs);
      for (size_t i = 0; i < j.size(); ++i) TRY_STATUS(ReadJobItem(rd, j[i], i, 0, names, sc));
    }
    if (!sc.jobs.empty()) {
      // Pipelines: dependencies before their dependents (the simulator submits in this order
      // within an instant), every dependency in the file, no cycle.
      std::vector<ScenarioJob> ordered(std::make_move_iterator(sc.jobs.begin()), std::make_move_iterator(sc.jobs.end()));
      TRY_STATUS(OrderByDependencies(ordered, /*all_in_batch=*/true, file));
      sc.jobs.assign(std::make_move_iterator(ordered.begin()), std::make_move_iterator(ordered.end()));
    }
    if (const YAML::Node f = root["jobs_file"]) {
      TRY_ASSIGN(sc.jobs_file, rd.Scalar(f, "jobs_file"));
      if (!JobFileFormatOf(sc.jobs_file)) {
        return Err(rd.Error(f, "jobs_file", "'" + sc.jobs_file + "' is neither JSON Lines nor CSV; expected a name ending in .jsonl, "
                                            ".ndjson or .csv"));
      }
      // Relative to the scenario's folder, as a person reading the scenario would look for it.
      std::filesystem::path jp(sc.jobs_file);
      if (jp.is_relative()) sc.jobs_file = (std::filesystem::path(file).parent_path() / jp).string();
    }
    if (const YAML::Node b = root["budgets"]) TRY_ASSIGN(sc.budgets, ReadBudgets(rd, b));
    if (const YAML::Node in = root["incidents"]) TRY_ASSIGN(sc.incidents, ReadIncidents(rd, in));
    if (const YAML::Node r = root["reservations"]) {
      if (!r.IsSequence()) return Err(rd.Error(r, "reservations", "expected a list of reservations"));
      std::set<std::pair<std::string, std::string>> names;  // (tenant, name): unique within a tenant
      for (size_t i = 0; i < r.size(); ++i) {
        std::string p = "reservations[" + std::to_string(i) + "]";
        ScenarioReservation x;
        TRY_ASSIGN(x.request, ReadReservation(rd, r[i], p, ReservationClock::kVirtual));
        if (!names.insert({x.request.tenant, x.request.name}).second) {
          return Err(rd.Error(r[i]["name"], p + ".name", "'" + x.request.name + "' is used twice in tenant " +
                                                             x.request.tenant + "; expected names unique within a tenant"));
        }
        sc.reservations.push_back(std::move(x));
      }
    }
    if (const YAML::Node g = root["generate"]) TRY_ASSIGN(sc.generate, ReadGenerate(rd, g, "generate"));
    if (const YAML::Node s = root["scheduler"]) TRY_ASSIGN(sc.scheduler, ReadScheduler(rd, s, "scheduler"));
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
  return sc;
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& text, const std::string& file) {
  return ParseScenarioText(text, file, /*split_jobs=*/true);
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

Status ReadScenarioJobsFile(Scenario& sc) {
  if (sc.jobs_file.empty() || sc.jobs_file_read) return Status::Ok();
  const std::string file = sc.jobs_file;
  // A record may name one of the scenario's templates, as its `jobs:` may.
  Result<TemplateCatalog> templates = TemplateCatalog::Of(sc.templates);
  if (!templates) return templates.error();
  JobStreamOptions options;
  options.templates = &*templates;
  Status s = ReadJobFile(
      file,
      [&](ScenarioJob&& job) -> Status {
        job.in_jobs_file = true;
        sc.jobs.push_back(std::move(job));
        return Status::Ok();
      },
      options);
  if (!s.ok()) return s;
  // Names unique within a tenant, checked once the file is read: sorting (hash, index) pairs
  // is several times faster than probing a table per job, a month of jobs being out of cache.
  std::vector<std::pair<uint64_t, uint32_t>> keys(sc.jobs.size());
  for (size_t i = 0; i < sc.jobs.size(); ++i) keys[i] = {JobNames::Hash(sc.jobs[i]), static_cast<uint32_t>(i)};
  std::sort(keys.begin(), keys.end());
  size_t twice = SIZE_MAX;  // the earliest job whose name an earlier job of its tenant has
  for (size_t a = 0; a < keys.size(); ++a) {
    for (size_t b = a + 1; b < keys.size() && keys[b].first == keys[a].first; ++b) {
      const ScenarioJob& x = sc.jobs[keys[a].second];
      const ScenarioJob& y = sc.jobs[keys[b].second];
      if (x.tenant == y.tenant && x.spec.name == y.spec.name) twice = std::min<size_t>(twice, keys[b].second);
    }
  }
  if (twice != SIZE_MAX) {
    const ScenarioJob& j = sc.jobs[twice];
    return InvalidArgument(file + ":" + std::to_string(j.line) + ": name: '" + j.spec.name + "' is used twice in tenant " +
                           j.tenant + "; expected job names unique within a tenant");
  }
  sc.jobs_file_read = true;
  return Status::Ok();
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Err(NotFound(path + ": cannot open the scenario file"));
  // Read straight into one string: a stringstream and its str() held the text twice.
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<size_t>(in.gcount()));
  } else {
    std::stringstream ss;  // not seekable (a pipe): as it comes
    ss << in.rdbuf();
    text = ss.str();
  }
  return ParseScenario(text, path);
}

}  // namespace allot
