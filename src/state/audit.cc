#include "state/audit.h"

namespace allot {

std::string Canonical(const AuditRecord& r) {
  // Length-prefixed fields: no separator can be forged inside a field.
  std::string out = "allot-audit-v1";
  auto field = [&](const std::string& s) {
    out += '\n' + std::to_string(s.size()) + ':';
    out += s;
  };
  field(r.prev_hash);
  field(std::to_string(r.time_ms));
  field(r.actor);
  field(RoleName(r.role));
  field(r.tenant);
  field(r.action);
  field(r.target);
  field(r.outcome);
  field(r.request_id);
  return out;
}

}  // namespace allot
