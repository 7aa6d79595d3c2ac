#include "spec/model_catalog.h"

#include <yaml-cpp/yaml.h>

#include <vector>

#include "core/quantity.h"

namespace allot {

extern const char kModelCatalogYaml[];

namespace {

std::vector<CatalogModel> Load() {
  std::vector<CatalogModel> out;
  const YAML::Node root = YAML::Load(kModelCatalogYaml);
  for (const YAML::Node& m : root["models"]) {
    CatalogModel c;
    c.name = m["name"].as<std::string>();
    auto p = ParseParameterCount(m["parameters"].as<std::string>());
    ALLOT_CHECK(p.has_value());  // tests/spec/model_catalog_test.cc reads every entry
    c.parameters = *p;
    c.layers = m["layers"].as<int64_t>();
    c.hidden = m["hidden"].as<int64_t>();
    c.context = m["context"].as<int64_t>();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::span<const CatalogModel> ModelCatalog() {
  static const std::vector<CatalogModel> kModels = Load();
  return kModels;
}

const CatalogModel* FindCatalogModel(std::string_view name) {
  for (const CatalogModel& m : ModelCatalog()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::string CatalogNames() {
  std::string out;
  for (const CatalogModel& m : ModelCatalog()) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

Result<int64_t> ParseParameterCount(std::string_view text) {
  const std::string expected = "expected a count such as 7B, 6.74B, 350M or 1.5T (from 1M to 100T)";
  if (text.empty()) return Err(InvalidArgument("'' is not a parameter count; " + expected));
  int64_t scale = 1;  // per milli-unit: the number is read in thousandths
  std::string_view number = text;
  switch (text.back()) {
    case 'K': case 'k': scale = 1; break;
    case 'M': case 'm': scale = 1'000; break;
    case 'B': case 'b': scale = 1'000'000; break;
    case 'T': case 't': scale = 1'000'000'000; break;
    default: scale = 0;
  }
  if (scale != 0) number.remove_suffix(1);
  auto milli = ParseMilli(number);
  if (!milli) return Err(InvalidArgument("'" + std::string(text) + "' is not a parameter count; " + expected));
  int64_t n;
  if (scale == 0) {
    if (*milli % 1000 != 0) return Err(InvalidArgument("'" + std::string(text) + "' is not a whole count; " + expected));
    n = *milli / 1000;
  } else {
    // Bounded before multiplying: 100T is 10^14, 10^17 milli-units at most.
    if (*milli > kMaxModelParameters / scale * 1000) return Err(InvalidArgument("'" + std::string(text) + "' is more than 100T; " + expected));
    n = *milli * scale;
  }
  if (n < kMinModelParameters || n > kMaxModelParameters) {
    return Err(InvalidArgument("'" + std::string(text) + "' is out of range; " + expected));
  }
  return n;
}

std::string FormatParameterCount(int64_t n) {
  struct Unit { int64_t size; const char* suffix; };
  for (Unit u : {Unit{1'000'000'000'000, "T"}, Unit{1'000'000'000, "B"}, Unit{1'000'000, "M"}, Unit{1'000, "K"}}) {
    if (n < u.size) continue;
    // Two decimals, rounded half-up, trailing zeros dropped.
    int64_t hundredths = (n * 100 + u.size / 2) / u.size;
    std::string s = std::to_string(hundredths / 100);
    int64_t frac = hundredths % 100;
    if (frac != 0) s += "." + std::string(frac < 10 ? "0" : "") + std::to_string(frac % 10 == 0 ? frac / 10 : frac);
    return s + u.suffix;
  }
  return std::to_string(n);
}

}  // namespace allot
