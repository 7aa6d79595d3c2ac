// The catalogue of well-known models (data/models.yaml, compiled in): a task group may name one
// in `model: {name: …}` rather than write its shape out (docs/sizing.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace allot {

struct CatalogModel {
  std::string name;        // "llama-3-8b"
  int64_t parameters = 0;  // a count
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t context = 0;     // the context length it was trained for: the default
};

// Every entry in the file's order. The embedded file is checked by the tests; a broken one is a
// build defect (ALLOT_CHECK).
std::span<const CatalogModel> ModelCatalog();
// nullptr when `name` is not in the catalogue.
const CatalogModel* FindCatalogModel(std::string_view name);
// The names, comma-separated, for errors.
std::string CatalogNames();

// "7B", "6.74B", "350M", "1.5T", "125000000" → a count of parameters (K, M, B, T: 10^3, 10^6,
// 10^9, 10^12; decimals beyond a thousandth of the unit rounded half-up). From 1M to 100T.
inline constexpr int64_t kMinModelParameters = 1'000'000;
inline constexpr int64_t kMaxModelParameters = 100'000'000'000'000;
Result<int64_t> ParseParameterCount(std::string_view text);
// 6'740'000'000 → "6.74B", 350'000'000 → "350M".
std::string FormatParameterCount(int64_t n);

}  // namespace allot
