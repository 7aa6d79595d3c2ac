#include "metering/credit.h"

namespace allot {

Result<LedgerLine> FaultCredit(const QuotaTree& tenants, const ResourceNames& names, const BillingSetup& billing,
                               const FaultLoss& loss, int64_t at_ms) {
  if (!loss.tenant.valid() || loss.tenant.value() >= tenants.size() || loss.tenant == tenants.root() ||
      tenants.tenant(loss.tenant).removed) {
    return Err(InvalidArgument("credit.tenant: id " + std::to_string(loss.tenant.value()) +
                               " is not a live tenant; expected the leaf whose job lost the time"));
  }
  if (loss.gpu_resource < kFirstGpu || loss.gpu_resource >= names.size()) {
    return Err(InvalidArgument("credit.gpu_resource: " + std::to_string(loss.gpu_resource) +
                               " is not a GPU model; expected a gpu/<model> resource"));
  }
  if (loss.gpu_unit_ms <= 0) {
    return Err(InvalidArgument("credit.gpu_unit_ms: " + Int128ToString(loss.gpu_unit_ms) +
                               "; expected the GPU time lost, > 0"));
  }
  const std::string& resource = names.Name(loss.gpu_resource);
  std::string model = resource.substr(resource.find('/') + 1);
  auto price = billing.card.gpu_hour.find(model);
  if (price == billing.card.gpu_hour.end()) {
    return Err(FailedPrecondition("credit: the rate card's gpu_hour has no price for " + model +
                                  "; expected a price for every GPU model the fleet bills"));
  }
  const Tenant& leaf = tenants.tenant(loss.tenant);
  TenantId org = tenants.OrgOf(loss.tenant);
  auto amount = PriceLine(resource, loss.gpu_unit_ms, price->second, kPpm, kPpm);
  if (!amount) return Err(amount.error());
  LedgerLine l;
  l.period = billing.PeriodOf(tenants.tenant(org).path, at_ms).label;
  l.tenant = leaf.path;
  l.tenant_id = loss.tenant;
  l.kind = EntryKind::kCredit;
  l.resource = resource;
  l.quantity = loss.gpu_unit_ms;
  l.unit_price = price->second;
  l.amount = -*amount;
  l.note = "node " + loss.node + ": " + loss.reason;
  return l;
}

}  // namespace allot
