// A named job template of a tenant (docs/templates.md): an org's defaults for a job's fields
// (image, limits, class, env, command, tasks, ...) that a submit names with `template: NAME` and
// overrides field by field. Templates are state: saved and removed by events, kept in snapshots,
// audited. What the fields mean, and how a job's fields are merged over them, is the spec
// reader's (spec/job_template.h); the state keeps the fields as the canonical YAML text that
// reader wrote, and refuses only what could never be a template.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/ids.h"

namespace allot {

struct JobTemplate {
  TenantId tenant;          // the tenant it is defined at; visible to its whole subtree
  std::string name;         // unique within the tenant
  std::string description;  // free text, may be empty
  std::string fields;       // the job fields as a YAML flow mapping (spec/job_template.h)
  std::string saved_by;     // the principal's name ("scenario" for a scenario file's)
  int64_t saved_ms = 0;     // when created or last replaced
  bool operator==(const JobTemplate&) const = default;
};

// The most templates one tenant may define, and the longest fields text.
inline constexpr size_t kMaxTemplatesPerTenant = 200;
inline constexpr size_t kMaxTemplateFieldsBytes = 64 * 1024;
inline constexpr size_t kMaxTemplateDescriptionBytes = 1024;

}  // namespace allot
