#include "tenancy/access.h"

#include <iterator>

namespace allot {

namespace {
constexpr const char* kRoleNames[] = {"platform-admin", "org-admin", "team-admin", "member", "auditor", "viewer", "node"};
}

const char* RoleName(Role r) { return kRoleNames[static_cast<int>(r)]; }

std::optional<Role> ParseRole(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kRoleNames)); ++i) {
    if (name == kRoleNames[i]) return static_cast<Role>(i);
  }
  return std::nullopt;
}

bool InSubtree(const QuotaTree& tree, TenantId inner, TenantId outer) {
  for (TenantId a = inner; a.valid(); a = tree.tenant(a).parent) {
    if (a == outer) return true;
  }
  return false;
}

bool Allowed(const QuotaTree& tree, const Principal& p, Action a, TenantId t) {
  if (p.role == Role::kPlatformAdmin) return true;
  if (p.role == Role::kNode || a == Action::kAgent) return p.role == Role::kNode && a == Action::kAgent;
  if (a == Action::kOperateFleet) return false;
  if (!t.valid() || !InSubtree(tree, t, p.scope)) return false;
  switch (a) {
    case Action::kRead: return true;
    case Action::kReadAudit: return p.role == Role::kAuditor || p.role == Role::kOrgAdmin || p.role == Role::kTeamAdmin;
    case Action::kSubmit: return p.role == Role::kOrgAdmin || p.role == Role::kTeamAdmin || p.role == Role::kMember;
    case Action::kManage: return p.role == Role::kOrgAdmin || p.role == Role::kTeamAdmin;
    case Action::kOperateFleet: return false;
    case Action::kAgent: return false;
  }
  return false;
}

Status MayIssue(const QuotaTree& tree, const Principal& issuer, Role role, TenantId scope) {
  if (role == Role::kNode && (issuer.role != Role::kPlatformAdmin || scope != tree.root())) {
    return {Code::kPermissionDenied, "only a platform-admin issues node tokens, scoped at the root"};
  }
  if (!Allowed(tree, issuer, Action::kManage, scope)) {
    return {Code::kPermissionDenied, std::string("a ") + RoleName(issuer.role) + " may not issue tokens over this scope"};
  }
  // Roles are ordered strongest first; a manager grants its own role or weaker.
  if (static_cast<int>(role) < static_cast<int>(issuer.role)) {
    return {Code::kPermissionDenied, std::string("a ") + RoleName(issuer.role) + " may not grant the stronger role " + RoleName(role)};
  }
  return Status::Ok();
}

Status AccessTable::Issue(const TokenRecord& record, const QuotaTree& tree) {
  if (record.principal.name.empty()) return InvalidArgument("principal: must not be empty");
  if (record.hash.size() != 64) return InvalidArgument("token hash: expected 64 hex digits");
  if (!record.principal.scope.valid() || record.principal.scope.value() >= tree.size() ||
      tree.tenant(record.principal.scope).removed) {
    return NotFound("scope: the tenant does not exist");
  }
  if (tokens_.count(record.hash)) return Conflict("token already issued");
  tokens_.emplace(record.hash, record);
  return Status::Ok();
}

int AccessTable::RevokeScope(TenantId scope) {
  int n = 0;
  for (auto& [hash, record] : tokens_) {
    if (record.principal.scope == scope && !record.revoked) {
      record.revoked = true;
      ++n;
    }
  }
  return n;
}

Status AccessTable::Revoke(const std::string& hash) {
  auto it = tokens_.find(hash);
  if (it == tokens_.end()) return NotFound("token does not exist");
  it->second.revoked = true;
  return Status::Ok();
}

const TokenRecord* AccessTable::Find(const std::string& hash) const {
  auto it = tokens_.find(hash);
  return it == tokens_.end() || it->second.revoked ? nullptr : &it->second;
}

}  // namespace allot
