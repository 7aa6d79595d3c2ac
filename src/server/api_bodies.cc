#include "server/api_bodies.h"

#include <nlohmann/json.hpp>

#include "metering/money.h"
#include "server/body_reader.h"
#include "state/billing_state.h"

namespace allot {
namespace {

using Json = nlohmann::json;

// "5000", 5000, "none" or null → micros (kNoCap for none); absent: kNoCap.
Result<int64_t> Cap(const Json& body, const char* key, bool money) {
  if (!body.contains(key) || body[key].is_null()) return kNoCap;
  const Json& v = body[key];
  std::string text = v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
  if (text == "none") return kNoCap;
  if (money) {
    auto r = ParseMicros(text, key);
    if (!r || *r < 0) {
      return Err(InvalidArgument(std::string(key) + ": '" + (text.empty() ? v.dump() : text) +
                                 "' is not an amount; expected a decimal of the rate card's currency from 0 to 1000000000, "
                                 "e.g. \"5000\", or \"none\""));
    }
    return *r;
  }
  return ParseBudgetHours(text.empty() ? v.dump() : text, key);
}

}  // namespace

Status ParseTokenBody(const std::string& text, TokenBody& out) {
  auto parsed = ParseStrictJson(text);
  if (!parsed) return parsed.error();
  const Json& body = *parsed;
  if (!body.is_object()) return InvalidArgument("body: expected {\"principal\", \"role\", \"scope\"}");
  for (const char* key : {"principal", "role", "scope"}) {
    if (!body.contains(key) || !body[key].is_string()) return InvalidArgument(std::string(key) + ": required, a string");
  }
  for (const auto& [key, value] : body.items()) {
    if (key != "principal" && key != "role" && key != "scope") {
      return InvalidArgument(key + ": unknown field; expected principal, role, scope");
    }
  }
  out.principal = body["principal"];
  out.role_name = body["role"];
  out.scope = body["scope"];
  out.role = ParseRole(out.role_name);
  if (!out.role) {
    return InvalidArgument("role: '" + out.role_name + "' is not valid; expected platform-admin, org-admin, "
                           "team-admin, member, auditor or viewer");
  }
  if (out.principal.empty()) return InvalidArgument("principal: must not be empty");
  return Status::Ok();
}

Status ParseBudgetBody(const std::string& text, BudgetBody& out) {
  auto parsed = ParseStrictJson(text);
  if (!parsed) return parsed.error();
  const Json& body = *parsed;
  if (!body.is_object()) return InvalidArgument("body: expected {\"tenant\", \"spend\", \"gpu_hours\"} as JSON");
  out.tenant = body.contains("tenant") && body["tenant"].is_string() ? body["tenant"].get<std::string>() : "";
  for (const auto& [key, value] : body.items()) {
    if (key != "tenant" && key != "spend" && key != "gpu_hours") {
      return InvalidArgument(key + ": unknown field; expected tenant, spend, gpu_hours");
    }
  }
  auto spend = Cap(body, "spend", true);
  if (!spend) return spend.error();
  out.spend_micros = *spend;
  auto gpu = Cap(body, "gpu_hours", false);
  if (!gpu) return gpu.error();
  out.gpu_hours_milli = *gpu;
  return Status::Ok();
}

}  // namespace allot
