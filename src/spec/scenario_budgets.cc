#include "spec/scenario_budgets.h"

#include "core/names.h"
#include "metering/money.h"

namespace allot {
namespace {

constexpr const char* kSpendExpected =
    "expected an amount of the rate card's currency >= 0 with at most six decimals, e.g. 1500.00";
constexpr const char* kHoursExpected = "expected GPU-hours >= 0 such as 120 or 0.5 (at most 3 decimals)";

// A cap's scalar text; a list or mapping is refused naming the field.
Result<std::string> CapText(const YamlReader& rd, const YAML::Node& n, const std::string& field, const char* expected) {
  if (!n.IsScalar()) return Err(rd.Error(n, field, std::string("a list or mapping is not valid; ") + expected));
  return n.Scalar();
}

Result<ScenarioBudget> ReadBudget(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  if (!n.IsMap()) return Err(rd.Error(n, path, "expected a mapping with tenant and spend and/or gpu_hours"));
  if (Status s = rd.Fields(n, path, {"tenant", "spend", "gpu_hours"}); !s.ok()) return Err(s);
  ScenarioBudget b;
  b.line = n.Mark().line + 1;
  const YAML::Node tenant = n["tenant"];
  if (!tenant) return Err(rd.Error(n, path + ".tenant", "required; expected a tenant path of the scenario such as research/nlp"));
  if (!tenant.IsScalar() || tenant.Scalar().empty()) {
    return Err(rd.Error(tenant, path + ".tenant", "expected a tenant path of the scenario such as research/nlp"));
  }
  b.tenant = tenant.Scalar();
  if (Status s = rd.At(tenant, CheckTenantPath(path + ".tenant", b.tenant)); !s.ok()) return Err(s);
  if (const YAML::Node s = n["spend"]) {
    auto text = CapText(rd, s, path + ".spend", kSpendExpected);
    if (!text) return Err(text.error());
    auto micros = ParseMicros(*text, path + ".spend");
    if (!micros) return Err(rd.Error(s, path + ".spend", "'" + *text + "' is not valid; " + kSpendExpected));
    b.spend_micros = *micros;
  }
  if (const YAML::Node g = n["gpu_hours"]) {
    auto text = CapText(rd, g, path + ".gpu_hours", kHoursExpected);
    if (!text) return Err(text.error());
    auto milli = ParseBudgetHours(*text, path + ".gpu_hours");  // its message names the field
    if (!milli) return Err(InvalidArgument(rd.file() + ":" + std::to_string(g.Mark().line + 1) + ": " + milli.error().message()));
    b.gpu_hours_milli = *milli;
  }
  if (b.spend_micros == kNoCap && b.gpu_hours_milli == kNoCap) {
    return Err(rd.Error(n, path, "has no cap; expected spend and/or gpu_hours"));
  }
  return b;
}

}  // namespace

Result<std::vector<ScenarioBudget>> ReadBudgets(const YamlReader& rd, const YAML::Node& budgets) {
  if (!budgets.IsSequence()) return Err(rd.Error(budgets, "budgets", "expected a list of {tenant, spend, gpu_hours}"));
  std::vector<ScenarioBudget> out;
  for (size_t i = 0; i < budgets.size(); ++i) {
    std::string path = "budgets[" + std::to_string(i) + "]";
    auto b = ReadBudget(rd, budgets[i], path);
    if (!b) return Err(b.error());
    for (size_t k = 0; k < out.size(); ++k) {
      if (out[k].tenant != b->tenant) continue;
      return Err(rd.Error(budgets[i]["tenant"], path + ".tenant",
                          "'" + b->tenant + "' already has a budget (budgets[" + std::to_string(k) +
                              "]); expected one entry per tenant with both caps"));
    }
    out.push_back(std::move(*b));
  }
  return out;
}

}  // namespace allot
