// Fixed-point resource vectors. GPUs in GPU units (1/21000 GPU), CPU in millicores, memory in
// MiB, so sums are exact and comparisons deterministic. Each GPU model is its own resource ("gpu/H100-80GB").
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace allot {

using ResourceId = uint8_t;
inline constexpr int kMaxResources = 32;
inline constexpr ResourceId kCpu = 0;     // millicores
inline constexpr ResourceId kMemory = 1;  // MiB
inline constexpr ResourceId kFirstGpu = 2;  // gpu/<model>, in GPU units
inline constexpr int64_t kMilli = 1000;
// One GPU in GPU units. 21000 = 1000 × 3 × 7: decimal GPUs to 0.001 ("gpus: 0.46"), MPS
// percentages, MIG slices (sevenths; quarters on the A30) and time-slice replicas 1/N for every
// N dividing it are all whole numbers of units, so quota and fairness count shares exactly.
inline constexpr int64_t kGpuUnit = 21000;

// Quota amounts saturate at kUnlimited, which compares above every real amount.
inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kUnlimited : std::numeric_limits<int64_t>::min();
  return r;
}

// A dense vector over every resource id. Small and flat so tenants can hold several.
class Resources {
 public:
  int64_t& operator[](ResourceId r) { return v_[r]; }
  int64_t operator[](ResourceId r) const { return v_[r]; }

  Resources& operator+=(const Resources& o) {
    for (int i = 0; i < kMaxResources; ++i) v_[i] = SatAdd(v_[i], o.v_[i]);
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    for (int i = 0; i < kMaxResources; ++i) v_[i] -= o.v_[i];
    return *this;
  }
  bool operator==(const Resources&) const = default;
  bool IsZero() const {
    for (int64_t x : v_) if (x != 0) return false;
    return true;
  }
  // True when every amount is <= the other's.
  bool FitsIn(const Resources& o) const {
    for (int i = 0; i < kMaxResources; ++i) if (v_[i] > o.v_[i]) return false;
    return true;
  }
  static Resources Filled(int64_t x) {
    Resources r;
    r.v_.fill(x);
    return r;
  }

 private:
  std::array<int64_t, kMaxResources> v_{};
};

// What one job (or one task) asks for: at most one GPU model, plus CPU and memory. Kept
// sparse because a fleet holds hundreds of thousands of jobs.
struct Demand {
  ResourceId gpu_resource = 0;  // 0 (kCpu) when no GPU is asked for
  int64_t gpu = 0;              // GPU units
  int64_t cpu = 0;              // millicores
  int64_t memory = 0;           // MiB

  Demand& operator+=(const Demand& o) {
    if (o.gpu > 0) gpu_resource = o.gpu_resource;
    gpu += o.gpu;
    cpu += o.cpu;
    memory += o.memory;
    return *this;
  }
  Demand Times(int64_t n) const { return {gpu_resource, gpu * n, cpu * n, memory * n}; }
  bool operator==(const Demand&) const = default;
  // Amount of resource r in this demand.
  int64_t Get(ResourceId r) const {
    if (r == kCpu) return cpu;
    if (r == kMemory) return memory;
    return (gpu > 0 && r == gpu_resource) ? gpu : 0;
  }
};

inline void AddDemand(Resources& r, const Demand& d, int64_t sign = 1) {
  r[kCpu] += sign * d.cpu;
  r[kMemory] += sign * d.memory;
  if (d.gpu > 0) r[d.gpu_resource] += sign * d.gpu;
}

// Names of resources in id order: "cpu", "memory", then "gpu/<model>" as models are met.
class ResourceNames {
 public:
  ResourceNames() : names_{"cpu", "memory"} {}
  // Returns the id of `name`, adding it if new; kInvalid (255) when the table is full.
  static constexpr ResourceId kInvalid = 255;
  ResourceId Intern(std::string_view name);
  ResourceId Find(std::string_view name) const;  // kInvalid when unknown
  const std::string& Name(ResourceId r) const { return names_[r]; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  std::vector<std::string> names_;
};

// Formats an amount of resource r for people: "8" GPUs, "2.5" CPUs, "512Gi".
std::string FormatAmount(ResourceId r, int64_t amount);
// Parses an amount of resource r as people write it: "0.5" GPUs, "96" CPUs, "512Gi".
Result<int64_t> ParseAmount(ResourceId r, std::string_view text);

}  // namespace allot
