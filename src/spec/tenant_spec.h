// A tenant as a scenario file, allotd's config or an API body writes it (path, guarantee, max,
// weight, trust, pools): read and checked (field, value and what was expected in every error),
// then resolved against the state's resource names.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "spec/field_reader.h"
#include "state/cluster_state.h"
#include "state/job.h"
#include "tenancy/quota_tree.h"

namespace allot {

// A quota as written: resource name ("gpu/H100-80GB", "cpu", "memory") → amount in its unit.
struct QuotaEntry {
  std::string resource;
  int64_t amount = 0;
};

struct ScenarioTenant {
  std::string path;
  std::vector<QuotaEntry> guarantee;
  std::vector<QuotaEntry> max;
  std::vector<QuotaEntry> max_reserved;
  int64_t weight = kMilli;
  Trust trust = Trust::kTrusted;
  uint8_t pools = 0xF;  // pool kinds allowed, bit 1 << Sharing
  std::string business_hours;  // canonical (metering/business_hours.h); "" none
  int line = 0;  // where it was written, for errors found later
};

// One tenant object under `path` ("tenants[3]", "tenant"), read with `rd`'s file for errors.
Result<ScenarioTenant> ReadTenant(const YamlReader& rd, const YAML::Node& n, const std::string& path);
// A list of pool kinds ([exclusive, mig, …]) as a mask, bit 1 << Sharing (a tenant's pools:, the
// scheduler's kind_pools:).
Result<uint8_t> ReadPoolKinds(const YamlReader& rd, const YAML::Node& n, const std::string& path);
// One tenant from YAML text or an API body already parsed (server/body_reader.h).
Result<ScenarioTenant> ParseTenant(const std::string& text, const std::string& source);
Result<ScenarioTenant> ReadTenantObject(const YAML::Node& root, const std::string& source);
// A tenant's quotas by resource name → a TenantSpec. Errors read "<where>guarantee.gpu/X: …".
Result<TenantSpec> ResolveTenant(const ScenarioTenant& tenant, const ResourceNames& names, const std::string& where);

}  // namespace allot
