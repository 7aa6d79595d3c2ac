// Credits for GPU time lost to a node fault: the node-health code reports what a tenant lost
// (its leaf, the GPU model, GPU time, the node and why) and gets back a ledger line of kind
// credit that gives it back at the rate card's price for that model — no premium, whatever the
// lost work's class: the credit refunds the hardware's failure, not the tenant's choices.
#pragma once

#include <string>

#include "metering/billing.h"
#include "metering/ledger.h"

namespace allot {

struct FaultLoss {
  TenantId tenant;                  // the leaf whose job lost the time
  ResourceId gpu_resource = kCpu;   // the GPU model (gpu/H100-80GB)
  __int128 gpu_unit_ms = 0;         // GPU units (kGpuUnit per GPU) × ms lost
  std::string node;
  std::string reason;               // "XID 79 on GPU 3", …
};

// A credit line for `loss` in the period of its org holding `at_ms`: quantity the GPU time,
// unit price the model's, amount the negated price (rounded half up once, as every line).
// Fails naming the field: an unknown or removed tenant, a resource that is not a GPU model, a
// model the card has no price for, or no time lost.
Result<LedgerLine> FaultCredit(const QuotaTree& tenants, const ResourceNames& names, const BillingSetup& billing,
                               const FaultLoss& loss, int64_t at_ms);

}  // namespace allot
