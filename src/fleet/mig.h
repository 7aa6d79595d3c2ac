// MIG geometry per GPU model and its placement rules (../shared/reference/NVML-MIG.md §4).
//
// A GPU instance (GI) of a profile takes `memory_slices` consecutive memory slices from one of
// the profile's allowed starts; instances never overlap in memory; their compute slices sum to
// at most the GPU's; a profile has a per-GPU maximum count; at most one "+me" instance. Creating
// an instance never disturbs the ones that exist.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace allot {

struct MigProfile {
  std::string_view name;    // "1g.10gb"
  int compute_slices;       // CS
  int memory_slices;        // MS
  int max_count;            // per GPU
  std::span<const int> starts;  // allowed first memory slices, ascending
  int64_t memory_mib;
  bool media_extensions;    // "+me": at most one per GPU
};

struct MigGeometry {
  std::string_view model;   // GPU model name in the catalog
  int compute_slices;       // 7 (A100/H100/H200/B200) or 4 (A30)
  int memory_slices;        // 8 or 4
  std::span<const MigProfile> profiles;
  // The profile named `name` (index into profiles), or -1.
  int Find(std::string_view name) const;
};

// nullptr when the model has no MIG.
const MigGeometry* FindMigGeometry(std::string_view model);

struct MigInstance {
  uint8_t profile;  // index into MigGeometry::profiles
  uint8_t start;    // first memory slice
  auto operator<=>(const MigInstance&) const = default;
};
using MigLayout = std::vector<MigInstance>;

// Memory slices a layout occupies, as bits.
uint32_t MigMemoryMask(const MigGeometry& g, const MigLayout& layout);
// Whether an instance of `profile` can be created at `start` beside `layout`.
bool CanCreateMig(const MigGeometry& g, const MigLayout& layout, int profile, int start);
// Starts where `profile` can be created now, ascending.
std::vector<int> FreeMigStarts(const MigGeometry& g, const MigLayout& layout, int profile);
// How many (profile, start) pairs could still be created beside `layout` — how much choice a
// GPU keeps. Media-extension profiles are left out (they mirror their base profile).
int OpenMigChoices(const MigGeometry& g, const MigLayout& layout);
// Ok when every instance is at an allowed start and the rules above hold; else names the first
// instance that breaks one.
Status ValidateMigLayout(const MigGeometry& g, const MigLayout& layout);
// A layout from profile names (a pool's `mig_layout:`), placed at the lowest starts that let
// every instance fit (largest first, then the given order). Fails naming the profile that is
// unknown or does not fit.
Result<MigLayout> LayoutFromNames(const MigGeometry& g, const std::vector<std::string>& names);

}  // namespace allot
