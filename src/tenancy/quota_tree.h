// The tenant tree (org → team → project → user, any depth) with per-resource guarantee and
// max, and usage rolled up to every ancestor.
//
// Semantics:
//   - guarantee unset for a resource = no constraint at that level; max unset = unlimited.
//   - Validation: the guarantees of a node's nearest guaranteed descendants never sum past its
//     own guarantee; a child's max never exceeds its parent's; guarantee <= max.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"
#include "core/status.h"

namespace allot {

enum class Trust : uint8_t { kTrusted, kUntrusted };

struct TenantSpec {
  std::string path;                                     // "research/nlp"
  Resources guarantee;                                  // meaningful where guarantee_set has the bit
  uint32_t guarantee_set = 0;                           // bit r = guarantee set for resource r
  Resources max = Resources::Filled(kUnlimited);
  int64_t weight = kMilli;                              // milli-weight for DRF; > 0
  Trust trust = Trust::kTrusted;
  // Pool kinds the subtree may use, bit (1 << Sharing): exclusive, mig, mps, timeslice. The
  // effective set is the intersection along the path (and exclusive + mig when untrusted).
  uint8_t pools = 0xF;
  // Reservations (issue 16): the most the subtree may have booked at once beyond its guarantee,
  // per resource (set by whoever manages the parent). Unlimited: bounded by max only.
  Resources max_reserved = Resources::Filled(kUnlimited);
  // When the subtree is expected to use GPUs ("Mon-Fri 08:00-19:00 Europe/Berlin", the canonical
  // text of metering/business_hours.h; "" none): holding GPUs outside them raises an alert.
  std::string business_hours;

  bool operator==(const TenantSpec&) const = default;
  bool has_guarantee_bit(ResourceId r) const { return (guarantee_set >> r) & 1; }
  void SetGuarantee(ResourceId r, int64_t amount) {
    guarantee[r] = amount;
    guarantee_set |= 1u << r;
  }
};

struct Tenant {
  TenantId id;
  TenantId parent;                // invalid for the root
  std::string path;               // "" for the root
  std::vector<TenantId> children;  // in creation order
  int depth = 0;                  // root 0, orgs 1, …
  Resources guarantee;
  uint32_t guarantee_set = 0;
  Resources max = Resources::Filled(kUnlimited);
  int64_t weight = kMilli;
  Trust trust = Trust::kTrusted;
  uint8_t pools = 0xF;
  Resources max_reserved = Resources::Filled(kUnlimited);
  std::string business_hours;  // TenantSpec::business_hours

  // Roll-ups over the whole subtree.
  Resources usage;             // every job holding resources
  Resources guaranteed_usage;  // jobs admitted as guaranteed

  // Deleted tenants stay as tombstones so ids (and the finished jobs that name them) stay
  // valid; they are out of the path index and their parent's children.
  bool removed = false;

  // Derived along the path, kept by the tree as tenants are upserted, moved and restored (the
  // pass reads them for every waiting tenant): `pools` intersected from the root down, and
  // whether this tenant or an ancestor is untrusted. Not kept for tombstones (their parents no
  // longer list them): read their path instead (ClusterState::Untrusted does).
  uint8_t path_pools = 0xF;
  bool path_untrusted = false;

  bool has_guarantee(ResourceId r) const { return (guarantee_set >> r) & 1; }
  bool has_any_guarantee() const { return guarantee_set != 0; }
};

class QuotaTree {
 public:
  QuotaTree();

  // Creates or updates the tenant at spec.path. The parent must exist. Validates against the
  // rest of the tree and changes nothing on error.
  Result<TenantId> Upsert(const TenantSpec& spec, const ResourceNames& names);

  // Deletes the tenant at `path`: it must exist, have no children and no usage (the caller
  // checks for pending jobs). Changes nothing on error.
  Result<TenantId> Remove(std::string_view path);

  // Moves the subtree at `from` to the path `to` (a new parent, a new name or both). Usage
  // moves with it; guarantees and maxes are validated at the new place. Changes nothing on error.
  Result<TenantId> Move(std::string_view from, std::string_view to, const ResourceNames& names);

  // Checks every live tenant against its parent and children (what Upsert checks for one).
  Status Validate(const ResourceNames& names) const;

  // Top-level guarantees must fit the fleet's capacity.
  Status ValidateAgainstCapacity(const Resources& capacity, const ResourceNames& names) const;

  // Adds (sign = +1) or removes (-1) a job's demand at `tenant` and every ancestor.
  void AddUsage(TenantId tenant, const Demand& demand, bool guaranteed, int sign);

  TenantId root() const { return TenantId(0); }
  TenantId Find(std::string_view path) const;  // invalid id when unknown
  const Tenant& tenant(TenantId id) const { return tenants_[id.value()]; }
  const std::vector<Tenant>& tenants() const { return tenants_; }
  size_t size() const { return tenants_.size(); }

  // The guarantee that `id` passes up for resource r: its own when set, else the sum of its
  // children's effective guarantees.
  int64_t EffectiveGuarantee(TenantId id, ResourceId r) const;
  // What floor+burst billing charges `id` for: its own part of its org's guarantee of r, its
  // effective guarantee less its children's, so an org's floor splits down the tree without
  // overlap. 0 for the root, a removed tenant, or one that sets no guarantee of r.
  int64_t OwnGuarantee(TenantId id, ResourceId r) const;
  // The org (top-level tenant) `id` lies in: itself at depth 1; the root, or an invalid id, as is.
  TenantId OrgOf(TenantId id) const {
    while (id.valid() && tenant(id).depth > 1) id = tenant(id).parent;
    return id;
  }

 private:
  friend class SnapshotCodec;  // state/snapshot.cc restores a tree through Restore()
  // Replaces the tree by `tenants` (by id, tombstones included; usage is recomputed by the
  // caller): checks that it is one tree (the root first, parents and children agree, no cycle,
  // live paths unique) and rebuilds the path index. Changes nothing on error.
  Status Restore(std::vector<Tenant> tenants);
  // Sets path_pools and path_untrusted of `top` (from its parent's) and of its subtree.
  void DerivePath(TenantId top);
  Status CheckNode(const Tenant& t, const ResourceNames& names) const;

  std::vector<Tenant> tenants_;
  std::unordered_map<std::string, TenantId> by_path_;
};

// "research/nlp" → "research"; "research" → "".
std::string_view ParentPath(std::string_view path);

}  // namespace allot
