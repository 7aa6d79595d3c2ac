#include "sim/scenario_budgets.h"

#include "metering/money.h"

namespace allot {
namespace {

Status At(const std::string& file, const YAML::Node& n, const std::string& field, const std::string& msg) {
  return InvalidArgument(file + ":" + std::to_string(n.IsDefined() ? n.Mark().line + 1 : 0) + ": " + field + ": " + msg);
}

// A cap's scalar text; a non-scalar (a list, a mapping) is refused naming the field.
Result<std::string> CapText(const std::string& file, const YAML::Node& n, const std::string& field,
                            const char* expected) {
  if (!n.IsScalar()) return Err(At(file, n, field, std::string("a list or mapping is not valid; ") + expected));
  return n.Scalar();
}

Result<ScenarioBudget> ReadBudget(const YAML::Node& n, const std::string& file, const std::string& path) {
  if (!n.IsMap()) return Err(At(file, n, path, "expected a mapping with tenant and spend and/or gpu_hours"));
  for (const auto& kv : n) {
    std::string key = kv.first.as<std::string>();
    if (key != "tenant" && key != "spend" && key != "gpu_hours") {
      return Err(At(file, kv.first, path + "." + key, "unknown field; expected one of: tenant, spend, gpu_hours"));
    }
  }
  ScenarioBudget b;
  b.line = n.Mark().line + 1;
  const YAML::Node tenant = n["tenant"];
  if (!tenant) return Err(At(file, n, path + ".tenant", "required; expected a tenant path of the scenario such as research/nlp"));
  if (!tenant.IsScalar() || tenant.Scalar().empty()) {
    return Err(At(file, tenant, path + ".tenant", "expected a tenant path of the scenario such as research/nlp"));
  }
  b.tenant = tenant.Scalar();
  if (const YAML::Node s = n["spend"]) {
    const char* expected = "expected an amount of the rate card's currency >= 0 with at most six decimals, e.g. 1500.00";
    auto text = CapText(file, s, path + ".spend", expected);
    if (!text) return Err(text.error());
    auto micros = ParseMicros(*text, path + ".spend");
    if (!micros) return Err(At(file, s, path + ".spend", "'" + *text + "' is not valid; " + expected));
    b.spend_micros = *micros;
  }
  if (const YAML::Node g = n["gpu_hours"]) {
    auto text = CapText(file, g, path + ".gpu_hours", "expected GPU-hours >= 0 such as 120 or 0.5 (at most 3 decimals)");
    if (!text) return Err(text.error());
    auto milli = ParseBudgetHours(*text, path + ".gpu_hours");
    if (!milli) return Err(InvalidArgument(file + ":" + std::to_string(g.Mark().line + 1) + ": " + milli.error().message()));
    b.gpu_hours_milli = *milli;
  }
  if (b.spend_micros == kNoCap && b.gpu_hours_milli == kNoCap) {
    return Err(At(file, n, path, "has no cap; expected spend and/or gpu_hours"));
  }
  return b;
}

}  // namespace

Result<std::vector<ScenarioBudget>> ReadBudgets(const YAML::Node& budgets, const std::string& file) {
  if (!budgets.IsSequence()) {
    return Err(At(file, budgets, "budgets", "expected a list of {tenant, spend, gpu_hours}"));
  }
  std::vector<ScenarioBudget> out;
  for (size_t i = 0; i < budgets.size(); ++i) {
    std::string path = "budgets[" + std::to_string(i) + "]";
    auto b = ReadBudget(budgets[i], file, path);
    if (!b) return Err(b.error());
    for (size_t k = 0; k < out.size(); ++k) {
      if (out[k].tenant != b->tenant) continue;
      return Err(At(file, budgets[i]["tenant"], path + ".tenant",
                    "'" + b->tenant + "' already has a budget (budgets[" + std::to_string(k) +
                        "]); expected one entry per tenant with both caps"));
    }
    out.push_back(std::move(*b));
  }
  return out;
}

}  // namespace allot
