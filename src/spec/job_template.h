// Job templates in the spec reader (docs/templates.md). A template is a tenant's named set of job
// fields; a job that says `template: NAME` gets them under its own fields:
//
//   - visibility: the job's tenant's templates, then its parent's, up to its top-level tenant;
//     the nearest of that name wins. A template of another subtree is not visible.
//   - the job's fields win; each replaces the template's field of that name whole, except
//     `env` (merged name by name, the job's value winning) and a single task group's `tasks`
//     (merged key by key, where the allocation — gpus, mig, mps, timeslice or model — counts as
//     one key: the job's allocation replaces the template's).
//   - a template may not hold name, tenant, template, submit, after, array, repeat or fail:
//     those belong to each submit.
//
// The merge is of the YAML trees, before the one job reader (spec/job_spec.h) reads the result,
// so a templated job is checked exactly as if it were written out in full. The same code serves
// POST /v1/jobs, `allot submit` and scenario files (`templates:` and `allot sim`).
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "spec/field_reader.h"

namespace allot {

class ClusterState;

// A template as written: {name, tenant, description?, job: {FIELDS}}. `fields` is the canonical
// text of the job fields (a YAML flow mapping), what the state keeps (state/job_template.h).
struct TemplateDef {
  std::string name;
  std::string tenant;
  std::string description;
  std::string fields;
  int line = 0;
};

// Reads and checks a template object under `path` ("templates[0]" in a scenario, "" for an API
// body): every job field it holds is one a template may hold and reads as a job's would.
Result<TemplateDef> ReadTemplate(const YamlReader& rd, const YAML::Node& n, const std::string& path);

// The templates a reader may resolve `template:` against, by (tenant path, name).
class TemplateCatalog {
 public:
  struct Entry {
    std::string tenant;
    std::string name;
    YAML::Node fields;  // a fresh tree: no marks, so errors in it name the field, not a line
  };
  // Refuses fields that do not parse (a damaged state): naming the template.
  Status Add(const std::string& tenant, const std::string& name, const std::string& fields);
  // Every template of the state.
  static Result<TemplateCatalog> Of(const ClusterState& state);
  // The templates as a scenario lists them (`templates:`).
  static Result<TemplateCatalog> Of(const std::vector<TemplateDef>& defs);
  // The nearest template `name` visible to tenant path `tenant` (its own, then its ancestors'),
  // or nullptr.
  const Entry* Find(std::string_view tenant, std::string_view name) const;
  // "NAME (TENANT), …" of every template visible to `tenant`, nearest first; "none" when none.
  std::string VisibleTo(std::string_view tenant) const;
  bool empty() const { return entries_.empty(); }

 private:
  std::map<std::pair<std::string, std::string>, Entry> entries_;
};

// What `template:` in `n` resolved to, and the tree to read: n's fields over the template's
// (as above), `template` itself left out. Without `template:`, `node` is n. Errors name the field
// and the value: "PATH.template: no template 'x' visible to tenant a/b; expected one of: …".
struct TemplateApplied {
  YAML::Node node;
  std::string name;    // empty: no template
  std::string tenant;  // the tenant path it was found at
};
Result<TemplateApplied> ApplyTemplate(const YamlReader& rd, const YAML::Node& n, const std::string& path);

// The YAML flow text of a tree (canonical: the same tree, the same text).
std::string FlowText(const YAML::Node& n);

}  // namespace allot
