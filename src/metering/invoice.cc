#include "metering/invoice.h"

#include "core/resources.h"

namespace allot {
namespace {

// The path's first `depth` components, or `above` when the path is shallower.
std::string Prefix(const std::string& path, int depth, const char* above) {
  size_t at = 0;
  for (int d = 1; d < depth; ++d) {
    at = path.find('/', at);
    if (at == std::string::npos) return above;
    ++at;
  }
  return path.substr(0, path.find('/', at));
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string FormatUnitHours(const std::string& resource, __int128 quantity) {
  __int128 unit = resource.starts_with("gpu/") ? kGpuUnit : resource == "cpu" ? kMilli : 1024;
  __int128 den = unit * 3600 * 1000;
  // round_half_up(quantity × 10^6 / den), split so the product cannot overflow.
  bool overflow = false;
  int64_t micro = MulDivRoundHalfUp(quantity, kMicros, den, 1, &overflow);
  if (overflow) return Int128ToString(quantity / den);
  return FormatMicros(micro);
}

Result<Invoice> BuildInvoice(const std::vector<LedgerEntry>& entries, const std::string& org, const std::string& period,
                             const std::string& currency) {
  Invoice inv;
  inv.org = org;
  inv.period = period;
  inv.currency = currency;
  for (const LedgerEntry& e : entries) {
    const LedgerLine& l = e.line;
    if (l.kind == EntryKind::kClose || l.period != period) continue;
    if (l.tenant != org && !l.tenant.starts_with(org + "/")) continue;
    // Each sum is checked: a total that does not fit is refused, never wrapped.
    for (int64_t* sum : {&inv.total, &inv.by_team[Prefix(l.tenant, 2, "(org)")], &inv.by_project[Prefix(l.tenant, 3, "(team)")],
                         &inv.by_user[Prefix(l.tenant, 4, "(project)")], &inv.by_model[l.resource.empty() ? "(none)" : l.resource],
                         &inv.by_class[l.kind == EntryKind::kUsage ? UsageClassName(l.usage_class) : EntryKindName(l.kind)]}) {
      auto v = AddMicros(*sum, l.amount, "invoice " + org + " " + period);
      if (!v) return Err(v.error());
      *sum = *v;
    }
    inv.lines.push_back(l);
  }
  return inv;
}

std::string InvoiceCsv(const Invoice& inv) {
  std::string out =
      "period,tenant,team,project,user,kind,resource,class,topology,unit_hours,unit_price,burst_premium,"
      "topology_premium,amount,currency,note\n";
  for (const LedgerLine& l : inv.lines) {
    std::string cells[] = {l.period,
                           l.tenant,
                           Prefix(l.tenant, 2, ""),
                           Prefix(l.tenant, 3, ""),
                           Prefix(l.tenant, 4, ""),
                           EntryKindName(l.kind),
                           l.resource,
                           l.kind == EntryKind::kUsage ? UsageClassName(l.usage_class) : "",
                           l.kind == EntryKind::kUsage ? TopologyName(l.topology) : "",
                           l.resource.empty() ? "" : FormatUnitHours(l.resource, l.quantity),
                           FormatMicros(l.unit_price),
                           FormatMicros(l.burst_ppm),
                           FormatMicros(l.topology_ppm),
                           FormatMicros(l.amount),
                           inv.currency,
                           l.note};
    bool first = true;
    for (const std::string& c : cells) {
      out += (first ? "" : ",") + CsvField(c);
      first = false;
    }
    out += "\n";
  }
  out += inv.period + "," + CsvField(inv.org) + ",,,,total,,,,,,,," + FormatMicros(inv.total) + "," + inv.currency + ",\n";
  return out;
}

}  // namespace allot
