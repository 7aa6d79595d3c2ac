#include "billing/billing_setup.h"

#include "billing/rate_card_yaml.h"
#include "billing/zoneinfo.h"

namespace allot {

Result<std::shared_ptr<const BillingSetup>> LoadBillingSetup(const std::string& rates_file) {
  auto card = LoadRateCard(rates_file, ZoneCheck::kLookUp);
  if (!card) return Err(card.error());
  auto setup = std::make_shared<BillingSetup>();
  setup->card = std::move(*card);
  std::vector<std::string> names = {setup->card.time_zone};
  for (const auto& [org, b] : setup->card.orgs) {
    if (b.time_zone) names.push_back(*b.time_zone);
  }
  for (const std::string& name : names) {
    if (setup->zones.count(name)) continue;
    auto tz = LoadTimeZone(name);
    if (!tz) return Err(InvalidArgument(rates_file + ": " + tz.error().message()));
    setup->zones.emplace(name, std::move(*tz));
  }
  return std::shared_ptr<const BillingSetup>(std::move(setup));
}

}  // namespace allot
