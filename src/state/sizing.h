// Sizing by workload (docs/sizing.md): a task group that describes its model rather than a
// share keeps, with the job, the model as written, the memory estimated for it and the
// allocation chosen at submit, so explain and the job's status can show them after a restart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace allot {

// The precision the weights are held in.
enum class ModelPrecision : uint8_t { kFp16, kBf16, kFp8, kInt8, kInt4 };
const char* ModelPrecisionName(ModelPrecision p);
std::optional<ModelPrecision> ParseModelPrecision(std::string_view text);
// Bits per weight: 16, 16, 8, 8, 4.
int ModelPrecisionBits(ModelPrecision p);

// What the task does with the model: serve it, fine-tune every weight, or train LoRA adapters.
enum class ModelMode : uint8_t { kInference, kFinetune, kLora };
const char* ModelModeName(ModelMode m);
std::optional<ModelMode> ParseModelMode(std::string_view text);

// A task group's `model:` as written, the catalogue's values filled in.
struct ModelWorkload {
  std::string name;        // a catalogue name, or empty when the shape is written out
  int64_t parameters = 0;  // weights, a count (7B = 7'000'000'000)
  ModelPrecision precision = ModelPrecision::kBf16;
  int64_t context = 0;     // tokens per sequence
  int64_t batch = 1;       // sequences held at once
  int64_t layers = 0;      // 0: unknown (no KV cache term)
  int64_t hidden = 0;      // 0: unknown
  ModelMode mode = ModelMode::kInference;
  bool override = false;   // the group's own gpus/mig/mps stands; the estimate is kept for the record
  bool operator==(const ModelWorkload&) const = default;
};

// The GPU memory a task needs, in MiB, by term (docs/sizing.md has the formula).
struct MemoryEstimate {
  int64_t weights_mib = 0;
  int64_t kv_cache_mib = 0;
  int64_t training_mib = 0;  // gradients and optimizer state (finetune), adapters (lora)
  int64_t overhead_mib = 0;  // CUDA context, activations, fragmentation
  int64_t total_mib() const { return weights_mib + kv_cache_mib + training_mib + overhead_mib; }
  bool operator==(const MemoryEstimate&) const = default;
};

// One sized task group of a job.
struct GroupSizing {
  int32_t group = 0;        // index into JobSpec::groups
  ModelWorkload model;
  MemoryEstimate estimate;
  std::string allocation;   // "MIG 2g.20gb on A100-80GB", "2 × H100-80GB GPUs (nvlink)"
  std::string why;          // one line: why this allocation
  bool operator==(const GroupSizing&) const = default;
};

}  // namespace allot
