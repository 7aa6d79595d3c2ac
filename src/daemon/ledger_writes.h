// Ledger entries written outside a period close — fault credits, operators' adjustments — each
// computed from the state as it is and then journaled as LedgerAppended. A month close
// journaled in between takes the seq the entry was computed for, and the append is refused
// (BillingState::AppendLedger); the entry is then computed again from the new state. A close
// comes once a month, so one retry is all it ever needs; a third refusal is returned.
#pragma once

#include <functional>
#include <optional>

#include "daemon/controller.h"

namespace allot {

// `make` builds the entry from the state (under the controller's read lock); its failure is
// returned at once. Returns the event's journal sequence number.
Result<uint64_t> AppendLedgerEntry(Controller& ctl, const std::function<Result<LedgerAppended>(const ClusterState&)>& make,
                                   std::optional<AuditContext> audit = std::nullopt);

}  // namespace allot
