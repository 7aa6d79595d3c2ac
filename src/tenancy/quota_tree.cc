#include "tenancy/quota_tree.h"

namespace allot {

std::string_view ParentPath(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

QuotaTree::QuotaTree() {
  Tenant root;
  root.id = TenantId(0);
  tenants_.push_back(root);
  by_path_.emplace("", root.id);
}

TenantId QuotaTree::Find(std::string_view path) const {
  auto it = by_path_.find(std::string(path));
  return it == by_path_.end() ? TenantId() : it->second;
}

int64_t QuotaTree::EffectiveGuarantee(TenantId id, ResourceId r) const {
  const Tenant& t = tenant(id);
  if (t.has_guarantee(r)) return t.guarantee[r];
  int64_t sum = 0;
  for (TenantId c : t.children) sum = SatAdd(sum, EffectiveGuarantee(c, r));
  return sum;
}

// Checks `t` against its parent and children, as if `t` were already in the tree.
Status QuotaTree::CheckNode(const Tenant& t, const ResourceNames& names) const {
  const Tenant& parent = tenant(t.parent);
  for (int i = 0; i < names.size(); ++i) {
    ResourceId r = static_cast<ResourceId>(i);
    const std::string& rn = names.Name(r);
    if (t.has_guarantee(r) && t.guarantee[r] > t.max[r]) {
      return InvalidArgument("tenant '" + t.path + "' guarantee." + rn + ": " + FormatAmount(r, t.guarantee[r]) +
                             " exceeds its own max " + FormatAmount(r, t.max[r]));
    }
    if (t.max[r] != kUnlimited && t.max[r] > parent.max[r]) {
      return InvalidArgument("tenant '" + t.path + "' max." + rn + ": " + FormatAmount(r, t.max[r]) +
                             " exceeds the max of parent '" + parent.path + "' (" + FormatAmount(r, parent.max[r]) + ")");
    }
    // Children of t must still fit under t's (possibly new) guarantee and max.
    if (t.has_guarantee(r)) {
      int64_t sum = 0;
      for (TenantId c : t.children) sum = SatAdd(sum, EffectiveGuarantee(c, r));
      if (sum > t.guarantee[r]) {
        return InvalidArgument("tenant '" + t.path + "' guarantee." + rn + ": " + FormatAmount(r, t.guarantee[r]) +
                               " is less than its children's guarantees (" + FormatAmount(r, sum) + ")");
      }
    }
    for (TenantId c : t.children) {
      const Tenant& child = tenant(c);
      if (child.max[r] != kUnlimited && child.max[r] > t.max[r]) {
        return InvalidArgument("tenant '" + t.path + "' max." + rn + ": " + FormatAmount(r, t.max[r]) +
                               " is below the max of child '" + child.path + "' (" + FormatAmount(r, child.max[r]) + ")");
      }
    }
    // Siblings' guarantees must fit under the nearest ancestor that sets one.
    TenantId a = t.parent;
    while (a.valid() && !tenant(a).has_guarantee(r)) a = tenant(a).parent;
    if (a.valid()) {
      const Tenant& anc = tenant(a);
      int64_t sum = 0;
      // Sum the effective guarantees under `anc`, substituting t's new values.
      std::vector<TenantId> stack(anc.children.begin(), anc.children.end());
      while (!stack.empty()) {
        TenantId x = stack.back();
        stack.pop_back();
        const Tenant& cur = x == t.id ? t : tenant(x);
        if (cur.has_guarantee(r)) {
          sum = SatAdd(sum, cur.guarantee[r]);
        } else {
          stack.insert(stack.end(), cur.children.begin(), cur.children.end());
        }
      }
      // A new tenant is not yet among its parent's children, so the walk above misses it.
      // (New tenants have no children, so their own guarantee is all they pass up.)
      if (t.id.value() >= tenants_.size() && t.has_guarantee(r)) sum = SatAdd(sum, t.guarantee[r]);
      if (sum > anc.guarantee[r]) {
        return InvalidArgument("tenant '" + t.path + "' guarantee." + rn + ": guarantees under '" + anc.path +
                               "' would sum to " + FormatAmount(r, sum) + ", past its guarantee of " +
                               FormatAmount(r, anc.guarantee[r]));
      }
    }
  }
  return Status::Ok();
}

Result<TenantId> QuotaTree::Upsert(const TenantSpec& spec, const ResourceNames& names) {
  if (spec.path.empty() || spec.path.front() == '/' || spec.path.back() == '/' ||
      spec.path.find("//") != std::string::npos) {
    return Err(InvalidArgument("tenant path: '" + spec.path + "' is not a path like 'org/team/project'"));
  }
  if (spec.weight <= 0) {
    return Err(InvalidArgument("tenant '" + spec.path + "' weight: must be greater than 0"));
  }
  for (int i = 0; i < kMaxResources; ++i) {
    ResourceId r = static_cast<ResourceId>(i);
    if ((spec.has_guarantee_bit(r) && spec.guarantee[r] < 0) || spec.max[r] < 0) {
      return Err(InvalidArgument("tenant '" + spec.path + "': quota amounts must not be negative"));
    }
  }
  std::string_view parent_path = ParentPath(spec.path);
  TenantId parent = Find(parent_path);
  if (!parent.valid()) {
    return Err(NotFound("tenant '" + spec.path + "': parent '" + std::string(parent_path) +
                        "' does not exist (list parents before children)"));
  }
  TenantId existing = Find(spec.path);
  Tenant t = existing.valid() ? tenant(existing) : Tenant{};
  if (!existing.valid()) {
    t.id = TenantId(static_cast<uint32_t>(tenants_.size()));
    t.parent = parent;
    t.path = spec.path;
    t.depth = tenant(parent).depth + 1;
  }
  t.guarantee = spec.guarantee;
  t.guarantee_set = spec.guarantee_set;
  t.max = spec.max;
  t.weight = spec.weight;
  t.trust = spec.trust;
  if ((spec.pools & 0xF) == 0) return Err(InvalidArgument("tenant '" + spec.path + "' pools: expected at least one pool kind"));
  t.pools = spec.pools & 0xF;
  if (Status s = CheckNode(t, names); !s.ok()) return Err(s);

  if (existing.valid()) {
    tenants_[existing.value()] = std::move(t);
    return existing;
  }
  TenantId id = t.id;
  tenants_[parent.value()].children.push_back(id);
  by_path_.emplace(t.path, id);
  tenants_.push_back(std::move(t));
  return id;
}

Status QuotaTree::ValidateAgainstCapacity(const Resources& capacity, const ResourceNames& names) const {
  for (int i = 0; i < names.size(); ++i) {
    ResourceId r = static_cast<ResourceId>(i);
    int64_t sum = EffectiveGuarantee(root(), r);
    if (sum > capacity[r]) {
      return InvalidArgument("tenants: top-level guarantees for " + names.Name(r) + " sum to " +
                             FormatAmount(r, sum) + ", more than the fleet has (" + FormatAmount(r, capacity[r]) + ")");
    }
  }
  return Status::Ok();
}

void QuotaTree::AddUsage(TenantId id, const Demand& demand, bool guaranteed, int sign) {
  for (TenantId a = id; a.valid(); a = tenants_[a.value()].parent) {
    Tenant& t = tenants_[a.value()];
    AddDemand(t.usage, demand, sign);
    if (guaranteed) AddDemand(t.guaranteed_usage, demand, sign);
  }
}

}  // namespace allot
