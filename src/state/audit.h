// The audit log: every mutating API request — who, with what role, on which tenant, what, on
// what, how it ended — as a journal event, each record chained to the one before by a hash, so
// an edit, a deletion or a reordering anywhere breaks the chain (`allot audit verify`).
//
// The core keeps the chain's continuity (each record names the previous hash); computing the
// hash (BLAKE2b, libsodium) is the driver's. Canonical() is the one byte string that is hashed.
#pragma once

#include <string>

#include "tenancy/access.h"

namespace allot {

struct AuditRecord {
  int64_t time_ms = 0;
  std::string actor;       // principal name
  Role role = Role::kViewer;
  std::string tenant;      // the tenant path acted on ("" for fleet-wide actions)
  std::string action;      // "job.submit", "job.cancel", "token.issue", "node.cordon", …
  std::string target;      // the job, principal or node named
  std::string outcome;     // "ok", or "<code>: <message>"
  std::string request_id;
  std::string prev_hash;   // the previous record's hash; "" for the first
  std::string hash;        // hex BLAKE2b-256 of Canonical(*this)
  bool operator==(const AuditRecord&) const = default;
};

// The bytes the hash covers: every field but `hash`, unambiguously separated.
std::string Canonical(const AuditRecord& r);

}  // namespace allot
