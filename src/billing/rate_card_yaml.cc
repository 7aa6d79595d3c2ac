#include "billing/rate_card_yaml.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "billing/zoneinfo.h"
#include "core/names.h"
#include "fleet/gpu_catalog.h"
#include "spec/field_reader.h"

namespace allot {
namespace {

// Prices and premiums stay below these: a month of a large fleet then still fits 64-bit micros.
constexpr int64_t kMaxPrice = 1000000 * kMicros;  // 1,000,000 a unit-hour
constexpr int64_t kMaxPremium = 100 * kPpm;

// The card's own values over the spec field reader (spec/field_reader.h): errors read
// "FILE:LINE: FIELD: what was wrong; expected what", as every other reader's do.
class CardReader {
 public:
  CardReader(std::string file, ZoneCheck zones) : rd_(std::move(file)), zones_(zones) {}

  Status Error(const YAML::Node& n, const std::string& field, const std::string& msg) const {
    return rd_.Error(n, field, msg);
  }

  Result<std::string> Scalar(const YAML::Node& n, const std::string& field) const { return rd_.Scalar(n, field); }

  Result<int64_t> Decimal(const YAML::Node& n, const std::string& field, int64_t max, const char* expected) const {
    auto s = Scalar(n, field);
    if (!s) return Err(s.error());
    auto v = ParseMicros(*s, "'" + *s + "'");
    if (!v || *v > max) {
      return Err(Error(n, field, "'" + *s + "' is not valid; expected " + expected));
    }
    return *v;
  }

  Result<BillingMode> Mode(const YAML::Node& n, const std::string& field) const {
    auto s = Scalar(n, field);
    if (!s) return Err(s.error());
    if (*s == "usage") return BillingMode::kUsage;
    if (*s == "floor+burst") return BillingMode::kFloorBurst;
    return Err(Error(n, field, "'" + *s + "' is not a billing mode; expected usage or floor+burst"));
  }

  Result<Accounting> Account(const YAML::Node& n, const std::string& field) const {
    auto s = Scalar(n, field);
    if (!s) return Err(s.error());
    if (*s == "chargeback") return Accounting::kChargeback;
    if (*s == "showback") return Accounting::kShowback;
    return Err(Error(n, field, "'" + *s + "' is not an accounting; expected chargeback or showback"));
  }

  Result<std::string> Zone(const YAML::Node& n, const std::string& field) const {
    auto s = Scalar(n, field);
    if (!s) return Err(s.error());
    if (zones_ == ZoneCheck::kLookUp) {
      if (auto tz = LoadTimeZone(*s); !tz) return Err(Error(n, field, tz.error().message()));
    }
    return *s;
  }

  Status Fields(const YAML::Node& n, const std::string& field, std::initializer_list<const char*> allowed) const {
    return rd_.Fields(n, field, allowed);
  }

  Result<RateCard> Read(const YAML::Node& root) const {
    RateCard card;
    if (root.IsNull()) return Err(InvalidArgument(rd_.file() + ": empty rate card; expected at least currency and gpu_hour"));
    if (Status s = Fields(root, "", {"currency", "mode", "accounting", "time_zone", "gpu_hour", "cpu_hour", "memory_gib_hour",
                                     "burst_premium", "topology_premium", "orgs"});
        !s.ok()) {
      return Err(s);
    }
    if (!root["currency"]) return Err(Error(root, "currency", "missing; expected a currency code such as USD"));
    auto currency = Scalar(root["currency"], "currency");
    if (!currency) return Err(currency.error());
    bool iso = currency->size() == 3;
    for (char c : *currency) iso &= c >= 'A' && c <= 'Z';
    if (!iso) return Err(Error(root["currency"], "currency", "'" + *currency + "' is not valid; expected three capital letters such as USD"));
    card.currency = *currency;
    if (root["mode"]) {
      auto m = Mode(root["mode"], "mode");
      if (!m) return Err(m.error());
      card.mode = *m;
    }
    if (root["accounting"]) {
      auto a = Account(root["accounting"], "accounting");
      if (!a) return Err(a.error());
      card.accounting = *a;
    }
    if (root["time_zone"]) {
      auto z = Zone(root["time_zone"], "time_zone");
      if (!z) return Err(z.error());
      card.time_zone = *z;
    }
    const YAML::Node gpu = root["gpu_hour"];
    if (!gpu || !gpu.IsMap() || gpu.size() == 0) {
      return Err(Error(gpu ? gpu : root, "gpu_hour", "expected a mapping of GPU model to price per GPU-hour, such as {H100-80GB: 2.50}"));
    }
    for (const auto& kv : gpu) {
      std::string model = kv.first.Scalar();
      std::string field = "gpu_hour." + model;
      if (FindGpuModel(model) == nullptr) {
        std::string known;
        for (const GpuModelInfo& m : GpuCatalog()) known += (known.empty() ? "" : ", ") + std::string(m.name);
        return Err(Error(kv.first, field, "'" + model + "' is not a known GPU model; expected one of: " + known));
      }
      auto price = Decimal(kv.second, field, kMaxPrice, "a price per GPU-hour from 0 to 1000000 with at most 6 decimals, such as 2.50");
      if (!price) return Err(price.error());
      card.gpu_hour[model] = *price;
    }
    struct Price { const char* field; int64_t* out; const char* expected; };
    for (Price p : {Price{"cpu_hour", &card.cpu_hour, "a price per CPU-hour from 0 to 1000000 with at most 6 decimals, such as 0.02"},
                    Price{"memory_gib_hour", &card.memory_gib_hour, "a price per GiB-hour from 0 to 1000000 with at most 6 decimals, such as 0.003"},
                    Price{"burst_premium", &card.burst_premium, "a multiplier from 0 to 100 with at most 6 decimals, such as 1.2"}}) {
      if (!root[p.field]) continue;
      auto v = Decimal(root[p.field], p.field, std::string(p.field) == "burst_premium" ? kMaxPremium : kMaxPrice, p.expected);
      if (!v) return Err(v.error());
      *p.out = *v;
    }
    if (const YAML::Node topo = root["topology_premium"]) {
      if (Status s = Fields(topo, "topology_premium", {"nvlink", "rack", "zone"}); !s.ok()) return Err(s);
      const std::pair<const char*, Topology> kinds[] = {{"nvlink", Topology::kNvlink}, {"rack", Topology::kRack}, {"zone", Topology::kZone}};
      for (auto [name, t] : kinds) {
        if (!topo[name]) continue;
        auto v = Decimal(topo[name], std::string("topology_premium.") + name, kMaxPremium, "a multiplier from 0 to 100 with at most 6 decimals, such as 1.1");
        if (!v) return Err(v.error());
        card.topology_premium[static_cast<int>(t)] = *v;
      }
    }
    if (const YAML::Node orgs = root["orgs"]) {
      if (!orgs.IsMap()) return Err(Error(orgs, "orgs", "expected a mapping of org name to {mode, accounting, time_zone}"));
      for (const auto& kv : orgs) {
        std::string org = kv.first.Scalar();
        // An org is a top-level tenant: one name under the one rule (core/names.h).
        if (!IsValidName(org)) {
          return Err(Error(kv.first, "orgs", "'" + EscapeText(org) + "' is not an org; expected a top-level tenant name, " +
                                                 kNameExpected));
        }
        std::string field = "orgs." + org;
        if (Status s = Fields(kv.second, field, {"mode", "accounting", "time_zone"}); !s.ok()) return Err(s);
        OrgBilling b;
        if (kv.second["mode"]) {
          auto m = Mode(kv.second["mode"], field + ".mode");
          if (!m) return Err(m.error());
          b.mode = *m;
        }
        if (kv.second["accounting"]) {
          auto a = Account(kv.second["accounting"], field + ".accounting");
          if (!a) return Err(a.error());
          b.accounting = *a;
        }
        if (kv.second["time_zone"]) {
          auto z = Zone(kv.second["time_zone"], field + ".time_zone");
          if (!z) return Err(z.error());
          b.time_zone = *z;
        }
        card.orgs[org] = b;
      }
    }
    return card;
  }

 private:
  YamlReader rd_;
  ZoneCheck zones_;
};

}  // namespace

Result<RateCard> ParseRateCard(const std::string& text, const std::string& file, ZoneCheck zones) {
  auto root = LoadObject(text, file);
  if (!root) return Err(root.error());
  try {
    return CardReader(file, zones).Read(*root);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
}

Result<RateCard> LoadRateCard(const std::string& path, ZoneCheck zones) {
  std::ifstream in(path);
  if (!in) return Err(NotFound(path + ": cannot open the rate card"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseRateCard(text.str(), path, zones);
}

}  // namespace allot
