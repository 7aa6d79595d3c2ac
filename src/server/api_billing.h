// The billing routes of the REST API (issue 6; BillingRoutes in server/api_routes.h):
//
//   GET  /v1/invoices?period=YYYY-MM&org=ORG[&format=csv]   an org's invoice (the caller's
//        subtree of it): from the signed ledger once the period is closed, else a draft priced
//        from the usage so far ("status": "closed" | "open")
//   GET  /v1/ledger                     the ledger in its text form (platform-admins, and
//                                       auditors over the whole tree): `allot ledger verify`
//   POST /v1/ledger/adjustments         {"tenant", "amount", "note"}: a platform-admin's
//                                       correction, on the first open month's invoice
//   GET  /v1/budgets                    budgets in scope: caps, period, spent, warnings given
//   POST /v1/budgets                    {"tenant", "spend", "gpu_hours"} sets a tenant node's caps
//                                       per period ("none" or null: no cap); the caller manages
//                                       its parent (platform-admins set orgs')
//
// Without a rate card (allotd --rates) invoices and the ledger answer 409.
#pragma once

#include <httplib.h>

#include <optional>
#include <vector>

#include "daemon/controller.h"
#include "server/http_server.h"

namespace allot {

// Each tenant's cost (its subtree) over [from, to), priced by the rate card with each org's
// mode (floors prorated to the window); nullopt without a rate card or when the card has no
// price for a GPU model in use. For /v1/usage.
std::optional<std::vector<int64_t>> WindowCost(const Controller& ctl, const ClusterState& state, int64_t from_ms,
                                               int64_t to_ms, int64_t now_ms);

}  // namespace allot
