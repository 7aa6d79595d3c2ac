#include "spec/job_template.h"

#include <algorithm>

#include "core/names.h"
#include "spec/job_spec.h"
#include "state/cluster_state.h"
#include "state/job_template.h"

namespace allot {
namespace {

// The job fields a template may hold: every field of a job but those each submit states.
constexpr const char* kTemplateFields[] = {"kind",    "duration", "time_limit", "tasks",    "topology", "priority",
                                           "min_runtime", "checkpoint", "grace", "command", "image",    "mounts",
                                           "env",     "shm_size", "reservation", "require", "retries", "vram"};
// A task group's keys that together say what it holds of a GPU: one choice, replaced whole.
constexpr const char* kAllocationKeys[] = {"gpus", "mig", "mps", "timeslice", "model"};

bool IsAllocationKey(const std::string& key) {
  return std::any_of(std::begin(kAllocationKeys), std::end(kAllocationKeys), [&](const char* k) { return key == k; });
}

// A copy of `n` made of new nodes: no marks (a template's lines are not the job's), and no
// node shared with the template, which other jobs use too.
YAML::Node Fresh(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return YAML::Node(n.Scalar());
    case YAML::NodeType::Sequence: {
      YAML::Node out(YAML::NodeType::Sequence);
      for (const YAML::Node& x : n) out.push_back(Fresh(x));
      return out;
    }
    case YAML::NodeType::Map: {
      YAML::Node out(YAML::NodeType::Map);
      for (const auto& kv : n) out[kv.first.Scalar()] = Fresh(kv.second);
      return out;
    }
    default:
      return YAML::Node(YAML::NodeType::Null);
  }
}

// `over`'s keys over `under`'s: each of `over` replaces `under`'s of that name; `env` (both
// mappings) merges name by name; `tasks` (both one group) key by key, its allocation as one.
YAML::Node Merge(const YAML::Node& under, const YAML::Node& over, bool top) {
  YAML::Node out(YAML::NodeType::Map);
  bool over_allocates = false;
  if (!top) {
    for (const auto& kv : over) over_allocates |= IsAllocationKey(kv.first.Scalar());
  }
  for (const auto& kv : under) {
    const std::string key = kv.first.Scalar();
    if (top && key == "template") continue;
    if (over[key]) continue;  // set below, merged or replaced
    if (!top && over_allocates && IsAllocationKey(key)) continue;
    out[key] = Fresh(kv.second);
  }
  for (const auto& kv : over) {
    const std::string key = kv.first.Scalar();
    if (top && key == "template") continue;
    const YAML::Node below = under[key];
    bool merge = top && below && below.IsMap() && kv.second.IsMap() && (key == "env" || key == "tasks");
    // Not assigned from a temporary Node: assigning a YAML::Node rewrites the node it refers to.
    if (merge && key == "env") {
      YAML::Node env(YAML::NodeType::Map);
      for (const auto& e : below) {
        if (!kv.second[e.first.Scalar()]) env[e.first.Scalar()] = Fresh(e.second);
      }
      for (const auto& e : kv.second) env[e.first.Scalar()] = e.second;
      out[kv.first] = env;
    } else if (merge) {
      out[kv.first] = Merge(below, kv.second, /*top=*/false);
    } else {
      out[kv.first] = kv.second;
    }
  }
  return out;
}

bool MayHold(const std::string& key) {
  return std::any_of(std::begin(kTemplateFields), std::end(kTemplateFields), [&](const char* k) { return key == k; });
}

}  // namespace

std::string FlowText(const YAML::Node& n) {
  YAML::Emitter out;
  out << YAML::Flow << n;
  return out.c_str();
}

Result<TemplateDef> ReadTemplate(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TRY_STATUS(rd.Fields(n, path, {"name", "tenant", "description", "job"}));
  TemplateDef t;
  t.line = n.Mark().is_null() ? 0 : n.Mark().line + 1;
  for (const char* f : {"name", "tenant", "job"}) {
    if (!n[f]) return Err(rd.Error(n, YamlReader::Join(path, f), "required"));
  }
  TRY_ASSIGN(t.name, rd.Scalar(n["name"], YamlReader::Join(path, "name")));
  TRY_STATUS(rd.At(n["name"], CheckName(YamlReader::Join(path, "name"), t.name)));
  TRY_ASSIGN(t.tenant, rd.Scalar(n["tenant"], YamlReader::Join(path, "tenant")));
  TRY_STATUS(rd.At(n["tenant"], CheckTenantPath(YamlReader::Join(path, "tenant"), t.tenant)));
  if (n["description"]) {
    TRY_ASSIGN(t.description, rd.Scalar(n["description"], YamlReader::Join(path, "description")));
    if (t.description.size() > kMaxTemplateDescriptionBytes) {
      return Err(rd.Error(n["description"], YamlReader::Join(path, "description"),
                          std::to_string(t.description.size()) + " bytes; expected at most " + std::to_string(kMaxTemplateDescriptionBytes)));
    }
  }
  const std::string jp = YamlReader::Join(path, "job");
  const YAML::Node job = n["job"];
  if (!job.IsMap() || job.size() == 0) {
    return Err(rd.Error(job, jp, "expected a mapping of job fields, e.g. {image: pytorch:2.3, tasks: {gpus: 1}, time_limit: 2h}"));
  }
  std::string allowed;
  for (const char* f : kTemplateFields) allowed += (allowed.empty() ? "" : ", ") + std::string(f);
  for (const auto& kv : job) {
    const std::string key = kv.first.Scalar();
    if (!MayHold(key)) {
      return Err(rd.Error(kv.first, jp + "." + key, "is not a field a template may hold (each submit states it); expected one of: " + allowed));
    }
  }
  // Read as a job of its own tenant would be: the fields each submit adds are stood in for, a
  // command among them when it has none (a submit may add it; image and env need one).
  YAML::Node probe = Fresh(job);
  for (const auto& kv : job) probe[kv.first.Scalar()] = kv.second;  // the template's own marks, for its errors
  probe["name"] = "template-check";
  probe["tenant"] = t.tenant;
  if (!job["tasks"]) probe["tasks"] = YAML::Load("{gpus: 0}");
  if (!job["command"]) probe["command"] = YAML::Load("[template-check]");
  auto read = ReadJob(rd, probe, jp, /*simulated=*/false);
  if (!read) return Err(read.error());
  t.fields = FlowText(Fresh(job));
  if (t.fields.size() > kMaxTemplateFieldsBytes) {
    return Err(rd.Error(job, jp, std::to_string(t.fields.size()) + " bytes of fields; expected at most " +
                                     std::to_string(kMaxTemplateFieldsBytes)));
  }
  return t;
}

Status TemplateCatalog::Add(const std::string& tenant, const std::string& name, const std::string& fields) {
  YAML::Node tree;
  try {
    tree = YAML::Load(fields);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("template '" + name + "' of tenant " + tenant + ": fields do not parse: " + e.msg);
  }
  if (!tree.IsMap()) return InvalidArgument("template '" + name + "' of tenant " + tenant + ": fields are not a mapping");
  entries_[{tenant, name}] = Entry{tenant, name, Fresh(tree)};
  return Status::Ok();
}

Result<TemplateCatalog> TemplateCatalog::Of(const ClusterState& state) {
  TemplateCatalog out;
  for (const auto& [key, t] : state.templates()) {
    TRY_STATUS(out.Add(state.tenants().tenant(t.tenant).path, t.name, t.fields));
  }
  return out;
}

Result<TemplateCatalog> TemplateCatalog::Of(const std::vector<TemplateDef>& defs) {
  TemplateCatalog out;
  for (const TemplateDef& def : defs) TRY_STATUS(out.Add(def.tenant, def.name, def.fields));
  return out;
}

const TemplateCatalog::Entry* TemplateCatalog::Find(std::string_view tenant, std::string_view name) const {
  std::string path(tenant);
  while (!path.empty()) {
    auto it = entries_.find({path, std::string(name)});
    if (it != entries_.end()) return &it->second;
    size_t slash = path.rfind('/');
    path.resize(slash == std::string::npos ? 0 : slash);
  }
  return nullptr;
}

std::string TemplateCatalog::VisibleTo(std::string_view tenant) const {
  std::string out;
  std::string path(tenant);
  while (!path.empty()) {
    for (auto it = entries_.lower_bound({path, std::string()}); it != entries_.end() && it->first.first == path; ++it) {
      if (Find(tenant, it->second.name) != &it->second) continue;  // shadowed by a nearer one
      out += (out.empty() ? "" : ", ") + it->second.name + " (" + path + ")";
    }
    size_t slash = path.rfind('/');
    path.resize(slash == std::string::npos ? 0 : slash);
  }
  return out.empty() ? "none" : out;
}

Result<TemplateApplied> ApplyTemplate(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TemplateApplied out;
  const YAML::Node t = n.IsMap() ? n["template"] : YAML::Node();
  if (!t) {
    out.node = n;
    return out;
  }
  const std::string field = path + ".template";
  TRY_ASSIGN(out.name, rd.Scalar(t, field));
  TRY_STATUS(rd.At(t, CheckName(field, out.name)));
  if (!n["tenant"]) return Err(rd.Error(n, path + ".tenant", "required (the template is looked up from it)"));
  std::string tenant;
  TRY_ASSIGN(tenant, rd.Scalar(n["tenant"], path + ".tenant"));
  TRY_STATUS(rd.At(n["tenant"], CheckTenantPath(path + ".tenant", tenant)));
  static const TemplateCatalog kNone;
  const TemplateCatalog& catalog = rd.templates() ? *rd.templates() : kNone;
  const TemplateCatalog::Entry* found = catalog.Find(tenant, out.name);
  if (!found) {
    return Err(rd.Error(t, field, "no template '" + EscapeText(out.name) + "' visible to tenant " + tenant +
                                      " (its own or an ancestor's); expected one of: " + catalog.VisibleTo(tenant)));
  }
  out.tenant = found->tenant;
  out.node = Merge(found->fields, n, /*top=*/true);
  return out;
}

}  // namespace allot
