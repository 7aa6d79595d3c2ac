#include "tenancy/quota_tree.h"

#include <algorithm>

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

int64_t QuotaTree::OwnGuarantee(TenantId id, ResourceId r) const {
  const Tenant& t = tenant(id);
  if (id == root() || t.removed || !t.has_guarantee(r)) return 0;
  int64_t own = t.guarantee[r];
  for (TenantId c : t.children) own -= EffectiveGuarantee(c, r);
  return std::max<int64_t>(own, 0);
}

// Checks `t` against its parent and children, as if `t` were already in the tree.
Status QuotaTree::CheckNode(const Tenant& t, const ResourceNames& names) const {
  const Tenant& parent = tenant(t.parent);
  for (int i = 0; i < names.size(); ++i) {
    ResourceId r = static_cast<ResourceId>(i);
    const std::string& rn = names.Name(r);
    if (t.max_reserved[r] < 0) {
      return InvalidArgument("tenant '" + t.path + "' max_reserved." + rn + ": " + std::to_string(t.max_reserved[r]) +
                             " is negative; expected an amount of 0 or more");
    }
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

namespace {

Status CheckPath(std::string_view path, const char* field) {
  if (path.empty() || path.front() == '/' || path.back() == '/' || path.find("//") != std::string_view::npos) {
    return InvalidArgument(std::string(field) + ": '" + std::string(path) + "' is not a path like 'org/team/project'");
  }
  return Status::Ok();
}

}  // namespace

Result<TenantId> QuotaTree::Upsert(const TenantSpec& spec, const ResourceNames& names) {
  if (Status s = CheckPath(spec.path, "tenant path"); !s.ok()) return Err(s);
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
  t.max_reserved = spec.max_reserved;
  t.business_hours = spec.business_hours;
  t.weight = spec.weight;
  t.trust = spec.trust;
  if ((spec.pools & 0xF) == 0) return Err(InvalidArgument("tenant '" + spec.path + "' pools: expected at least one pool kind"));
  t.pools = spec.pools & 0xF;
  if (Status s = CheckNode(t, names); !s.ok()) return Err(s);

  if (existing.valid()) {
    tenants_[existing.value()] = std::move(t);
    DerivePath(existing);  // its pools or trust may have changed for its whole subtree
    return existing;
  }
  TenantId id = t.id;
  tenants_[parent.value()].children.push_back(id);
  by_path_.emplace(t.path, id);
  tenants_.push_back(std::move(t));
  DerivePath(id);
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

Status QuotaTree::Validate(const ResourceNames& names) const {
  for (const Tenant& t : tenants_) {
    if (t.id == root() || t.removed) continue;
    if (Status s = CheckNode(t, names); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<TenantId> QuotaTree::Remove(std::string_view path) {
  TenantId id = Find(path);
  if (!id.valid() || id == root()) return Err(NotFound("tenant '" + std::string(path) + "' does not exist"));
  const Tenant& t = tenant(id);
  if (!t.children.empty()) {
    return Err(Conflict("tenant '" + t.path + "' has " + std::to_string(t.children.size()) +
                        " child tenant(s), e.g. '" + tenant(t.children.front()).path + "': delete or move them first"));
  }
  if (!(t.usage == Resources{})) {
    return Err(Conflict("tenant '" + t.path + "' still has jobs holding resources: cancel them or let them finish first"));
  }
  std::vector<TenantId>& siblings = tenants_[t.parent.value()].children;
  siblings.erase(std::find(siblings.begin(), siblings.end(), id));
  by_path_.erase(t.path);
  tenants_[id.value()].removed = true;
  return id;
}

Result<TenantId> QuotaTree::Move(std::string_view from, std::string_view to, const ResourceNames& names) {
  if (Status s = CheckPath(to, "to"); !s.ok()) return Err(s);
  TenantId id = Find(from);
  if (!id.valid() || id == root()) return Err(NotFound("tenant '" + std::string(from) + "' does not exist"));
  if (Find(to).valid()) return Err(Conflict("to: tenant '" + std::string(to) + "' already exists"));
  std::string_view parent_path = ParentPath(to);
  TenantId parent = Find(parent_path);
  if (!parent.valid()) {
    return Err(NotFound("to: the new parent '" + std::string(parent_path) + "' does not exist"));
  }
  for (TenantId a = parent; a.valid(); a = tenant(a).parent) {
    if (a == id) return Err(InvalidArgument("to: '" + std::string(to) + "' lies inside the subtree being moved"));
  }

  // Work on a copy so that a move the quotas refuse changes nothing. Moves are rare and the
  // tree is hundreds of tenants, so copying is cheaper than undoing.
  QuotaTree next = *this;
  Tenant& moved = next.tenants_[id.value()];
  const Resources usage = moved.usage, guaranteed = moved.guaranteed_usage;
  auto add_up = [&](TenantId start, int sign) {
    for (TenantId a = start; a.valid(); a = next.tenants_[a.value()].parent) {
      Tenant& t = next.tenants_[a.value()];
      for (int r = 0; r < kMaxResources; ++r) {
        t.usage[r] += sign * usage[r];
        t.guaranteed_usage[r] += sign * guaranteed[r];
      }
    }
  };
  add_up(moved.parent, -1);
  std::vector<TenantId>& old_siblings = next.tenants_[moved.parent.value()].children;
  old_siblings.erase(std::find(old_siblings.begin(), old_siblings.end(), id));
  next.tenants_[parent.value()].children.push_back(id);
  moved.parent = parent;
  add_up(parent, +1);

  // Rename the subtree: every path under `from` gets the new prefix, and depths follow.
  const std::string old_prefix(from), new_prefix(to);
  std::vector<TenantId> stack{id};
  while (!stack.empty()) {
    Tenant& t = next.tenants_[stack.back().value()];
    stack.pop_back();
    next.by_path_.erase(t.path);
    t.path = new_prefix + t.path.substr(old_prefix.size());
    t.depth = next.tenants_[t.parent.value()].depth + 1;
    next.by_path_.emplace(t.path, t.id);
    stack.insert(stack.end(), t.children.begin(), t.children.end());
  }
  if (Status s = next.Validate(names); !s.ok()) {
    return Err(Status(s.code(), "to: moving '" + old_prefix + "' to '" + new_prefix + "' breaks a quota: " + s.message()));
  }
  *this = std::move(next);
  DerivePath(id);
  return id;
}

void QuotaTree::DerivePath(TenantId top) {
  std::vector<TenantId> stack{top};
  while (!stack.empty()) {
    Tenant& t = tenants_[stack.back().value()];
    stack.pop_back();
    const Tenant* parent = t.parent.valid() ? &tenants_[t.parent.value()] : nullptr;
    t.path_pools = static_cast<uint8_t>(t.pools & (parent ? parent->path_pools : 0xF));
    t.path_untrusted = t.trust == Trust::kUntrusted || (parent && parent->path_untrusted);
    stack.insert(stack.end(), t.children.begin(), t.children.end());
  }
}

Status QuotaTree::Restore(std::vector<Tenant> tenants) {
  const size_t n = tenants.size();
  if (n == 0 || tenants[0].parent.valid() || !tenants[0].path.empty() || tenants[0].removed) {
    return InvalidArgument("tenants: the first must be the root (no parent, path '')");
  }
  auto bad = [&](size_t i, const std::string& why) {
    return InvalidArgument("tenant " + std::to_string(i) + " ('" + tenants[i].path + "'): " + why);
  };
  for (size_t i = 0; i < n; ++i) {
    const Tenant& t = tenants[i];
    if (t.id != TenantId(static_cast<uint32_t>(i))) return bad(i, "id " + std::to_string(t.id.value()) + " is not its position");
    if (i > 0 && (!t.parent.valid() || t.parent.value() >= n || t.parent.value() == i)) {
      return bad(i, "parent " + std::to_string(t.parent.value()) + " is out of range; expected another of the " +
                        std::to_string(n) + " tenants");
    }
  }
  std::unordered_map<std::string, TenantId> by_path{{"", root()}};
  for (size_t i = 0; i < n; ++i) {
    const Tenant& t = tenants[i];
    // A live tenant's depth counts the steps to the root; a tombstone keeps the depth it had
    // when deleted (its old parent may have moved since), so for it only a cycle is wrong.
    size_t steps = 0;
    for (TenantId a = t.parent; a.valid() && steps <= n; a = tenants[a.value()].parent) ++steps;
    if (steps > n) return bad(i, "its ancestors form a cycle");
    if (!t.removed && steps != static_cast<size_t>(t.depth)) {
      return bad(i, "depth " + std::to_string(t.depth) + " disagrees with its " + std::to_string(steps) + " ancestors");
    }
    for (TenantId c : t.children) {
      if (!c.valid() || c.value() >= n || tenants[c.value()].parent != t.id || tenants[c.value()].removed) {
        return bad(i, "child " + std::to_string(c.value()) + " is not a live tenant whose parent it is");
      }
    }
    if (i > 0 && !t.removed) {
      const std::vector<TenantId>& siblings = tenants[t.parent.value()].children;
      if (std::count(siblings.begin(), siblings.end(), t.id) != 1) return bad(i, "its parent does not list it once");
      if (!by_path.emplace(t.path, t.id).second) return bad(i, "path is used twice");
    }
  }
  for (Tenant& t : tenants) t.usage = t.guaranteed_usage = Resources{};
  tenants_ = std::move(tenants);
  by_path_ = std::move(by_path);
  DerivePath(root());  // live tenants; tombstones' are not kept (ClusterState reads their path)
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
