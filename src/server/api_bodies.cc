#include "server/api_bodies.h"

#include <yaml-cpp/yaml.h>

#include "metering/money.h"
#include "server/body_reader.h"
#include "spec/field_reader.h"
#include "state/billing_state.h"

namespace allot {
namespace {

// These bodies are JSON only: strict JSON (server/body_reader.h) turned into the tree the spec
// field reader walks, so their errors read as a job's or a tenant's do: "body: FIELD: ...".
const YamlReader kBody("body");

// The body as an object of at most `fields`; `shape` says what was expected of the whole.
Result<YAML::Node> ObjectOf(Result<YAML::Node> tree, std::initializer_list<const char*> fields, const std::string& shape) {
  if (!tree) return Err(tree.error());
  if (!tree->IsMap()) return Err(InvalidArgument("body: expected " + shape));
  TRY_STATUS(kBody.Fields(*tree, "", fields));
  return *tree;
}

Result<YAML::Node> Json(const std::string& text) { return ParseBody(BodyFormat::kJson, text, ""); }

// A field's text: a JSON string or number as written; `required` refuses it absent or null.
Result<std::string> Text(const YAML::Node& body, const char* key, bool required, const std::string& expected) {
  const YAML::Node& n = body[key];
  if (!n || n.IsNull()) {
    if (required) return Err(kBody.Error(body, key, "missing; expected " + expected));
    return std::string();
  }
  if (!n.IsScalar()) return Err(kBody.Error(n, key, "expected " + expected));
  return n.Scalar();
}

// "5000", 5000, "none" or null → micros (kNoCap for none); absent: kNoCap.
Result<int64_t> Cap(const YAML::Node& body, const char* key, bool money) {
  auto text = Text(body, key, false, money ? "an amount or \"none\"" : "a number of GPU-hours or \"none\"");
  if (!text) return Err(text.error());
  if (text->empty() || *text == "none") return kNoCap;
  if (money) {
    auto r = ParseMicros(*text, key);
    if (!r || *r < 0) {
      return Err(kBody.Error(body[key], key, "'" + *text +
                                                 "' is not an amount; expected a decimal of the rate card's currency from 0 "
                                                 "to 1000000000, e.g. \"5000\", or \"none\""));
    }
    return *r;
  }
  auto hours = ParseBudgetHours(*text, key);
  if (!hours) return Err(kBody.At(body[key], hours.error()));
  return *hours;
}

}  // namespace

Status ParseTokenBody(const std::string& text, TokenBody& out) {
  auto body = ObjectOf(Json(text), {"principal", "role", "scope"}, "{\"principal\", \"role\", \"scope\"}");
  if (!body) return body.error();
  auto principal = Text(*body, "principal", true, "a string");
  if (!principal) return principal.error();
  out.principal = *principal;
  auto scope = Text(*body, "scope", true, "a string");
  if (!scope) return scope.error();
  out.scope = *scope;
  auto role = Text(*body, "role", true, "a string");
  if (!role) return role.error();
  out.role_name = *role;
  out.role = ParseRole(out.role_name);
  if (!out.role) {
    return kBody.Error((*body)["role"], "role", "'" + out.role_name + "' is not valid; expected platform-admin, org-admin, "
                                                "team-admin, member, auditor or viewer");
  }
  if (out.principal.empty()) return kBody.Error((*body)["principal"], "principal", "must not be empty");
  return Status::Ok();
}

Status ParseBudgetBody(const std::string& text, BudgetBody& out) {
  auto parsed = Json(text);
  // The tenant first, so a refused body's audit names it.
  if (parsed && parsed->IsMap()) {
    // A missing key is an invalid node in yaml-cpp, and asking it its type throws: test it first.
    const YAML::Node& tenant = static_cast<const YAML::Node&>(*parsed)["tenant"];
    if (tenant && tenant.IsScalar()) out.tenant = tenant.Scalar();
  }
  auto body = ObjectOf(std::move(parsed), {"tenant", "spend", "gpu_hours"}, "{\"tenant\", \"spend\", \"gpu_hours\"}");
  if (!body) return body.error();
  auto spend = Cap(*body, "spend", true);
  if (!spend) return spend.error();
  out.spend_micros = *spend;
  auto gpu = Cap(*body, "gpu_hours", false);
  if (!gpu) return gpu.error();
  out.gpu_hours_milli = *gpu;
  return Status::Ok();
}

Status ParseMoveBody(const std::string& text, MoveBody& out) {
  auto body = ObjectOf(Json(text), {"path", "to"}, "{\"path\", \"to\"}");
  if (!body) return body.error();
  auto path = Text(*body, "path", true, "a tenant path");
  if (!path) return path.error();
  out.path = *path;
  auto to = Text(*body, "to", true, "a tenant path");
  if (!to) return to.error();
  out.to = *to;
  return Status::Ok();
}

Status ParseAdjustmentBody(const std::string& text, AdjustmentBody& out) {
  auto body = ObjectOf(Json(text), {"tenant", "amount", "note"}, "{\"tenant\", \"amount\", \"note\"}");
  if (!body) return body.error();
  auto tenant = Text(*body, "tenant", true, "a tenant path");
  if (!tenant) return tenant.error();
  out.tenant = *tenant;
  auto note = Text(*body, "note", false, "a string");
  if (!note) return note.error();
  out.note = *note;
  auto amount = Text(*body, "amount", true, "an amount such as \"-12.50\"");
  if (!amount) return amount.error();
  auto micros = ParseSignedMicros(*amount, "amount");
  if (!micros) {
    return kBody.Error((*body)["amount"], "amount",
                       "'" + *amount + "' is not an amount; expected a decimal of the rate card's currency from "
                       "-1000000000 to 1000000000 (at most 6 decimals), negative to refund, e.g. \"-12.50\"");
  }
  out.amount_micros = *micros;
  return Status::Ok();
}

}  // namespace allot
