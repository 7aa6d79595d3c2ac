// Who may do what: principals hold a role over a tenant subtree (their scope), and reach the
// API through bearer tokens, of which only a hash is kept. Pure data and rules; hashing and
// randomness live in the server.
//
//   platform-admin  everything, the fleet included
//   org-admin       manage their subtree: tenants and quotas inside it, tokens, jobs
//   team-admin      the same, for a team's subtree
//   member          submit and cancel jobs in their subtree; see it
//   auditor         read-only over their subtree, the audit log included
//   viewer          read-only over their subtree
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/status.h"
#include "tenancy/quota_tree.h"

namespace allot {

// Strongest first, but for kNode: a node agent's role, which may only act as an agent (register,
// heartbeat, take assignments, report) and read nothing else; only a platform-admin grants it.
enum class Role : uint8_t { kPlatformAdmin, kOrgAdmin, kTeamAdmin, kMember, kAuditor, kViewer, kNode };
const char* RoleName(Role r);
std::optional<Role> ParseRole(std::string_view name);

struct Principal {
  std::string name;
  Role role = Role::kViewer;
  TenantId scope;  // the root for the whole tree
  bool operator==(const Principal&) const = default;
};

struct TokenRecord {
  std::string hash;  // hex of the token's hash
  Principal principal;
  int64_t issued_ms = 0;
  bool revoked = false;
  bool operator==(const TokenRecord&) const = default;
};

// What a principal may do to a tenant (and the jobs in it).
enum class Action : uint8_t {
  kRead,          // see the tenant, its jobs, usage
  kReadAudit,     // the audit log
  kSubmit,        // submit and cancel jobs
  kManage,        // tenants, quotas and tokens inside the scope
  kOperateFleet,  // cordon, drain, nodes
  kAgent,         // act as the node agent of the principal's node ("*": any node)
};

// Whether `p` may do `a` on tenant `t` (for kOperateFleet, t is ignored: platform-admin only).
bool Allowed(const QuotaTree& tree, const Principal& p, Action a, TenantId t);
// Whether `inner` lies in the subtree of `outer`.
bool InSubtree(const QuotaTree& tree, TenantId inner, TenantId outer);
// Whether `issuer` may grant `role` over `scope`: within its own scope, a role no stronger than
// its own, and only managers issue at all.
Status MayIssue(const QuotaTree& tree, const Principal& issuer, Role role, TenantId scope);

class AccessTable {
 public:
  // Fails on a duplicate hash, an empty principal, or an unknown scope.
  Status Issue(const TokenRecord& record, const QuotaTree& tree);
  Status Revoke(const std::string& hash);
  // Revokes every live token scoped exactly at `scope` (its tenant is being deleted).
  int RevokeScope(TenantId scope);
  const TokenRecord* Find(const std::string& hash) const;
  const std::map<std::string, TokenRecord>& tokens() const { return tokens_; }

 private:
  friend class SnapshotCodec;  // state/snapshot.cc restores tokens_ as saved (revoked ones and
                               // those scoped at since-deleted tenants included)
  std::map<std::string, TokenRecord> tokens_;
};

}  // namespace allot
