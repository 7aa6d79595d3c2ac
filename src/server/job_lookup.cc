#include "server/job_lookup.h"

#include <algorithm>
#include <vector>

#include "core/names.h"

namespace allot {

Result<JobId> LookupJob(const ClusterState& st, const Principal& who, std::string_view name,
                        const std::optional<std::string>& tenant) {
  const QuotaTree& tree = st.tenants();
  if (tenant) {
    // One answer for a tenant that is not there, one hidden from the caller, and one without
    // the job.
    Status missing = NotFound("job '" + EscapeText(name) + "' does not exist in tenant '" + EscapeText(*tenant) + "'");
    TenantId t = tree.Find(*tenant);
    if (!t.valid() || !Allowed(tree, who, Action::kRead, t)) return Err(missing);
    JobId id = st.FindJob(t, name);
    return id.valid() ? Result<JobId>(id) : Err(missing);
  }
  std::vector<JobId> visible;
  for (JobId id : st.JobsNamed(name)) {
    if (Allowed(tree, who, Action::kRead, st.job(id).spec.tenant)) visible.push_back(id);
  }
  if (visible.empty()) return Err(NotFound("job '" + EscapeText(name) + "' does not exist"));
  if (visible.size() == 1) return visible[0];
  std::vector<std::string> paths;
  for (JobId id : visible) paths.push_back(tree.tenant(st.job(id).spec.tenant).path);
  std::sort(paths.begin(), paths.end());
  std::string list;
  for (const std::string& p : paths) list += (list.empty() ? "" : ", ") + p;
  return Err(Conflict("job '" + EscapeText(name) + "' exists in " + std::to_string(paths.size()) + " tenants (" + list +
                      "); expected ?tenant=PATH to say which"));
}

std::optional<std::string> TenantParam(const httplib::Request& req) {
  if (!req.has_param("tenant")) return std::nullopt;
  return req.get_param_value("tenant");
}

Result<TenantId> ListScope(const ClusterState& st, const Principal& who, const std::optional<std::string>& tenant) {
  if (!tenant) return TenantId();
  TenantId scope = st.tenants().Find(*tenant);
  if (!scope.valid() || !Allowed(st.tenants(), who, Action::kRead, scope)) {
    return Err(NotFound("tenant '" + EscapeText(*tenant) + "' does not exist"));
  }
  return scope;
}

bool InListScope(const ClusterState& st, const Principal& who, TenantId scope, TenantId t) {
  return Allowed(st.tenants(), who, Action::kRead, t) && (!scope.valid() || InSubtree(st.tenants(), t, scope));
}

Result<JobId> LookupJob(const ClusterState& st, const Principal& who, const httplib::Request& req) {
  return LookupJob(st, who, std::string(req.matches[1]), TenantParam(req));
}

}  // namespace allot
