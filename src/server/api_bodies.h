// Request bodies the API reads without a controller: POST /v1/tokens, /v1/budgets,
// /v1/tenants/move and /v1/ledger/adjustments — strict JSON read with the spec field reader
// (spec/field_reader.h), errors "body: FIELD: what; expected what" — parsed apart from their handlers so that tests and the fuzz harnesses (fuzz/) call exactly
// what allotd does. Each fills `out` as far as it got, so a handler can audit the target of a
// body it refuses.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "tenancy/access.h"

namespace allot {

// {"principal", "role", "scope"}: three strings, nothing else; a known role, a non-empty
// principal.
struct TokenBody {
  std::string principal, role_name, scope;
  std::optional<Role> role;
};
Status ParseTokenBody(const std::string& text, TokenBody& out);

// {"tenant", "spend", "gpu_hours"}: caps of "5000", 5000, "none" or null (absent: none).
struct BudgetBody {
  std::string tenant;
  int64_t spend_micros = 0;
  int64_t gpu_hours_milli = 0;
};
Status ParseBudgetBody(const std::string& text, BudgetBody& out);

// {"path", "to"}: two tenant paths (their rule is checked by the handler, which knows the tree).
struct MoveBody {
  std::string path, to;
};
Status ParseMoveBody(const std::string& text, MoveBody& out);

// {"tenant", "amount", "note"}: a signed amount as a string or a number, an optional note.
struct AdjustmentBody {
  std::string tenant, note;
  int64_t amount_micros = 0;
};
Status ParseAdjustmentBody(const std::string& text, AdjustmentBody& out);

}  // namespace allot
