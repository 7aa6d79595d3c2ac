#include "metering/billing.h"

namespace allot {

const TimeZone& BillingSetup::ZoneOf(const std::string& org) const {
  static const TimeZone kUtc = TimeZone::Utc();
  auto it = zones.find(card.TimeZoneOf(org));
  return it == zones.end() ? kUtc : it->second;
}

Result<std::vector<OrgPeriod>> BillingSetup::OrgPeriods(const QuotaTree& tree, const std::string& label) const {
  std::vector<OrgPeriod> out;
  for (TenantId id : tree.tenant(tree.root()).children) {
    const Tenant& org = tree.tenant(id);
    auto p = ParseMonth(ZoneOf(org.path), label);
    if (!p) return Err(p.error());
    out.push_back({id, *p, card.ModeOf(org.path)});
  }
  return out;
}

namespace {

std::string Group(std::string digits) {
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string FormatMoney(int64_t micros, const std::string& currency) {
  std::string s = FormatMicros(micros);
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.erase(0, 1);
  size_t dot = s.find('.');
  std::string whole = dot == std::string::npos ? s : s.substr(0, dot);
  std::string rest = dot == std::string::npos ? "" : s.substr(dot);
  return (negative ? "-" : "") + Group(whole) + rest + " " + currency;
}

std::string FormatGpuHours(int64_t milli) {
  std::string s = Group(std::to_string(milli / 1000));
  if (int64_t f = milli % 1000; f != 0) {
    std::string frac = std::to_string(1000 + f).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s + " GPU-hours";
}

}  // namespace allot
