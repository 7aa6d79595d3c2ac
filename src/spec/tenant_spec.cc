#include "spec/tenant_spec.h"

#include <set>

#include "core/names.h"
#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"
#include "metering/business_hours.h"
#include "spec/field_limits.h"

namespace allot {
namespace {

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


Status ResolveQuota(const std::vector<QuotaEntry>& entries, const std::string& field, const ResourceNames& names,
                    TenantSpec& spec, bool guarantee, Resources* into = nullptr) {
  for (const QuotaEntry& e : entries) {
    ResourceId r = names.Find(e.resource);
    if (r == ResourceNames::kInvalid) {
      std::string model = e.resource.substr(4);
      if (!FindGpuModel(model)) return InvalidArgument(field + "." + e.resource + ": unknown GPU model '" + model + "'");
      return InvalidArgument(field + "." + e.resource + ": no node in the fleet has GPU model '" + model + "'");
    }
    if (into) {
      (*into)[r] = e.amount;
    } else if (guarantee) {
      spec.SetGuarantee(r, e.amount);
    } else {
      spec.max[r] = e.amount;
    }
  }
  return Status::Ok();
}

}  // namespace

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
  TRY_STATUS(rd.Fields(n, path, {"path", "guarantee", "max", "max_reserved", "weight", "trust", "pools", "business_hours"}));
  ScenarioTenant t;
  t.line = n.Mark().line + 1;
  if (!n["path"]) return Err(rd.Error(n, path + ".path", "required"));
  TRY_ASSIGN(t.path, rd.Scalar(n["path"], path + ".path"));
  TRY_STATUS(rd.At(n["path"], CheckTenantPath(path + ".path", t.path)));
  if (n["guarantee"]) TRY_ASSIGN(t.guarantee, ReadQuota(rd, n["guarantee"], path + ".guarantee"));
  if (n["max"]) TRY_ASSIGN(t.max, ReadQuota(rd, n["max"], path + ".max"));
  if (n["max_reserved"]) TRY_ASSIGN(t.max_reserved, ReadQuota(rd, n["max_reserved"], path + ".max_reserved"));
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
  if (n["business_hours"]) {
    std::string text;
    TRY_ASSIGN(text, rd.Scalar(n["business_hours"], path + ".business_hours"));
    auto hours = ParseBusinessHours(text, path + ".business_hours");
    if (!hours) return Err(rd.At(n["business_hours"], hours.error()));
    t.business_hours = FormatBusinessHours(*hours);
  }
  return t;
}

Result<ScenarioTenant> ReadTenantObject(const YAML::Node& root, const std::string& source) {
  return ReadObject<ScenarioTenant>(root, source, "tenant", "path, guarantee, max, max_reserved, weight, trust, pools, business_hours",
                                    [](const YamlReader& rd, const YAML::Node& n) { return ReadTenant(rd, n, "tenant"); });
}

Result<ScenarioTenant> ParseTenant(const std::string& text, const std::string& source) {
  auto root = LoadObject(text, source);
  if (!root) return Err(root.error());
  return ReadTenantObject(*root, source);
}

Result<TenantSpec> ResolveTenant(const ScenarioTenant& t, const ResourceNames& names, const std::string& where) {
  TenantSpec spec;
  spec.path = t.path;
  spec.weight = t.weight;
  spec.trust = t.trust;
  spec.pools = t.pools;
  spec.business_hours = t.business_hours;
  if (Status s = ResolveQuota(t.guarantee, where + "guarantee", names, spec, true); !s.ok()) return Err(s);
  if (Status s = ResolveQuota(t.max, where + "max", names, spec, false); !s.ok()) return Err(s);
  if (Status s = ResolveQuota(t.max_reserved, where + "max_reserved", names, spec, false, &spec.max_reserved); !s.ok()) {
    return Err(s);
  }
  return spec;
}

}  // namespace allot
