#include "core/resources.h"

#include "core/quantity.h"

namespace allot {

ResourceId ResourceNames::Intern(std::string_view name) {
  ResourceId found = Find(name);
  if (found != kInvalid) return found;
  if (names_.size() >= static_cast<size_t>(kMaxResources)) return kInvalid;
  names_.emplace_back(name);
  return static_cast<ResourceId>(names_.size() - 1);
}

ResourceId ResourceNames::Find(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<ResourceId>(i);
  }
  return kInvalid;
}

std::string FormatAmount(ResourceId r, int64_t amount) {
  if (amount == kUnlimited) return "unlimited";
  if (r == kMemory) return FormatMemoryMiB(amount);
  if (r >= kFirstGpu) return FormatGpus(amount);
  return FormatMilli(amount);
}

Result<int64_t> ParseAmount(ResourceId r, std::string_view text) {
  if (r == kMemory) return ParseMemoryMiB(text);
  if (r >= kFirstGpu) return ParseGpus(text);
  return ParseMilli(text);
}

}  // namespace allot
