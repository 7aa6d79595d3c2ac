#include "policy/admission.h"

#include <algorithm>
#include <cstdint>

namespace allot {
AdmissionResult Admit(const UsageOverlay& usage, TenantId tenant, const Demand& demand) {
  const QuotaTree& tree = usage.tree();
  ResourceId rs[3] = {kDemandResources[0], kDemandResources[1], demand.gpu_resource};
  int nrs = demand.gpu > 0 ? 3 : 2;
  AdmissionResult out;

  // 1. Max at every ancestor.
  for (TenantId a = tenant; a.valid(); a = tree.tenant(a).parent) {
    const Tenant& t = tree.tenant(a);
    for (int i = 0; i < nrs; ++i) {
      ResourceId r = rs[i];
      int64_t req = demand.Get(r);
      if (req == 0 || t.max[r] == kUnlimited) continue;
      int64_t u = usage.Usage(a, r);
      if (u + req > t.max[r]) {
        out.fits = false;
        out.blocking = a;
        out.resource = r;
        out.usage = u;
        out.limit = t.max[r];
        out.request = req;
        return out;
      }
    }
  }

  // 2. Guaranteed or burstable.
  bool covered_gpu = false, covered_any = false, within = true;
  for (TenantId a = tenant; a.valid(); a = tree.tenant(a).parent) {
    const Tenant& t = tree.tenant(a);
    for (int i = 0; i < nrs; ++i) {
      ResourceId r = rs[i];
      int64_t req = demand.Get(r);
      if (req == 0 || !t.has_guarantee(r)) continue;
      covered_any = true;
      if (demand.gpu > 0 && r == demand.gpu_resource) covered_gpu = true;
      if (usage.GuaranteedUsage(a, r) + req > t.guarantee[r]) within = false;
    }
  }
  bool covered = demand.gpu > 0 ? covered_gpu : covered_any;
  out.admission = covered && within ? AdmissionClass::kGuaranteed : AdmissionClass::kBurstable;
  return out;
}

std::string QuotaReason(const AdmissionResult& r, const QuotaTree& tree, const ResourceNames& names) {
  return "tenant " + tree.tenant(r.blocking).path + " at max for " + names.Name(r.resource) + ": " +
         FormatAmount(r.resource, r.usage) + " of " + FormatAmount(r.resource, r.limit) + " in use, job asks " +
         FormatAmount(r.resource, r.request);
}

}  // namespace allot
