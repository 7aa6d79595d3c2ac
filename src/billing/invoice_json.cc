#include "billing/invoice_json.h"

#include <nlohmann/json.hpp>

namespace allot {

std::string InvoiceJson(const Invoice& inv) {
  using Json = nlohmann::ordered_json;
  auto money = [&](int64_t micros) {
    return Json{{"amount_micros", micros}, {"amount", FormatMicros(micros)}, {"currency", inv.currency}};
  };
  auto breakdown = [&](const std::map<std::string, int64_t>& m) {
    Json out = Json::object();
    for (const auto& [k, v] : m) out[k] = v;
    return out;
  };
  Json lines = Json::array();
  for (const LedgerLine& l : inv.lines) {
    Json line = {{"tenant", l.tenant}, {"kind", EntryKindName(l.kind)}, {"resource", l.resource}};
    if (l.kind == EntryKind::kUsage) {
      line["class"] = UsageClassName(l.usage_class);
      line["topology"] = TopologyName(l.topology);
    }
    if (!l.resource.empty()) line["unit_hours"] = FormatUnitHours(l.resource, l.quantity);
    line["unit_price_micros"] = l.unit_price;
    line["burst_premium"] = FormatMicros(l.burst_ppm);
    line["topology_premium"] = FormatMicros(l.topology_ppm);
    line["amount_micros"] = l.amount;
    if (!l.note.empty()) line["note"] = l.note;
    lines.push_back(std::move(line));
  }
  Json j = {{"org", inv.org},
            {"period", inv.period},
            {"total", money(inv.total)},
            {"by_team", breakdown(inv.by_team)},
            {"by_project", breakdown(inv.by_project)},
            {"by_user", breakdown(inv.by_user)},
            {"by_model", breakdown(inv.by_model)},
            {"by_class", breakdown(inv.by_class)},
            {"lines", std::move(lines)}};
  return j.dump(2) + "\n";
}

}  // namespace allot
