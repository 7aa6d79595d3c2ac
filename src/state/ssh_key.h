// A tenant's registered SSH public key (issue 16, dedicated clusters): authorised on the nodes of
// the tenant's dedicated reservations for their windows only (agent/cluster/tenant_sshd.h). Keys
// are state: added and removed by events, kept in snapshots, shown in the audit log. allotd
// checks the line (wire/ssh_public_key.h) and computes the fingerprint before the event; the state
// keeps what the event says and refuses only what could never be a key line.
#pragma once

#include <cstdint>
#include <string>

#include "core/ids.h"
#include "core/status.h"

namespace allot {

using SshKeyId = Id<struct SshKeyTag>;

struct SshKeyRecord {
  SshKeyId id;               // assigned by the state: its index in ssh_keys()
  TenantId tenant;
  std::string line;          // "TYPE BASE64[ COMMENT]", as SshPublicKey::Line() writes it
  std::string fingerprint;   // "SHA256:…" as ssh-keygen -l prints it
  std::string added_by;      // the principal's name
  int64_t added_ms = 0;
  bool removed = false;
  int64_t removed_ms = 0;
  bool operator==(const SshKeyRecord&) const = default;
};

// The most keys one tenant may have registered at once.
inline constexpr size_t kMaxSshKeysPerTenant = 100;

}  // namespace allot
