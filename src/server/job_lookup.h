// How a request names a job: /v1/jobs/{name}, with ?tenant=PATH when the name alone is not
// enough. Names are unique within a tenant, not across tenants, and a caller learns nothing of
// the tenants it may not see: without ?tenant= the name is looked up among the jobs the caller
// may read (one: that job; several: 409 listing those tenants; none: 404), and the 404 reads
// the same whether or not a tenant hidden from the caller has a job of that name.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "state/cluster_state.h"
#include "tenancy/access.h"

namespace allot {

// `tenant`: the path the caller gave, or nullopt to search the tenants it may see.
Result<JobId> LookupJob(const ClusterState& st, const Principal& who, std::string_view name,
                        const std::optional<std::string>& tenant);
// The same for a route whose first match is the job's name and whose ?tenant= is optional.
Result<JobId> LookupJob(const ClusterState& st, const Principal& who, const httplib::Request& req);

// The request's ?tenant=, if given.
std::optional<std::string> TenantParam(const httplib::Request& req);
// A list route's `?tenant=` scope: invalid (all the caller may read) without one; a tenant the
// caller may not read is as unknown as one that does not exist.
Result<TenantId> ListScope(const ClusterState& st, const Principal& who, const std::optional<std::string>& tenant);
// Whether a list shows what belongs to `t`: the caller may read it, and it is inside `scope` when set.
bool InListScope(const ClusterState& st, const Principal& who, TenantId scope, TenantId t);

}  // namespace allot
