#include "state/sizing.h"

namespace allot {

const char* ModelPrecisionName(ModelPrecision p) {
  switch (p) {
    case ModelPrecision::kFp16: return "fp16";
    case ModelPrecision::kBf16: return "bf16";
    case ModelPrecision::kFp8: return "fp8";
    case ModelPrecision::kInt8: return "int8";
    case ModelPrecision::kInt4: return "int4";
  }
  return "?";
}

std::optional<ModelPrecision> ParseModelPrecision(std::string_view t) {
  for (ModelPrecision p : {ModelPrecision::kFp16, ModelPrecision::kBf16, ModelPrecision::kFp8, ModelPrecision::kInt8,
                           ModelPrecision::kInt4}) {
    if (t == ModelPrecisionName(p)) return p;
  }
  return std::nullopt;
}

int ModelPrecisionBits(ModelPrecision p) {
  switch (p) {
    case ModelPrecision::kFp16:
    case ModelPrecision::kBf16: return 16;
    case ModelPrecision::kFp8:
    case ModelPrecision::kInt8: return 8;
    case ModelPrecision::kInt4: return 4;
  }
  return 16;
}

const char* ModelModeName(ModelMode m) {
  switch (m) {
    case ModelMode::kInference: return "inference";
    case ModelMode::kFinetune: return "finetune";
    case ModelMode::kLora: return "lora";
  }
  return "?";
}

std::optional<ModelMode> ParseModelMode(std::string_view t) {
  for (ModelMode m : {ModelMode::kInference, ModelMode::kFinetune, ModelMode::kLora}) {
    if (t == ModelModeName(m)) return m;
  }
  return std::nullopt;
}

}  // namespace allot
