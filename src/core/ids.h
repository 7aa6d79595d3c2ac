// Strong ids: distinct types so a JobId can never be passed where a NodeId is expected.
// Ids are dense indices assigned in creation order, so iterating by id is deterministic.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace allot {

template <class Tag>
class Id {
 public:
  static constexpr uint32_t kInvalid = UINT32_MAX;
  constexpr Id() = default;
  explicit constexpr Id(uint32_t v) : v_(v) {}
  constexpr uint32_t value() const { return v_; }
  constexpr bool valid() const { return v_ != kInvalid; }
  constexpr auto operator<=>(const Id&) const = default;

 private:
  uint32_t v_ = kInvalid;
};

using JobId = Id<struct JobTag>;
using NodeId = Id<struct NodeTag>;
using TenantId = Id<struct TenantTag>;

}  // namespace allot

template <class Tag>
struct std::hash<allot::Id<Tag>> {
  size_t operator()(allot::Id<Tag> id) const noexcept { return std::hash<uint32_t>()(id.value()); }
};
