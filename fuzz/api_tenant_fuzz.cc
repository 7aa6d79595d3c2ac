// POST /v1/tenants: the body as UpsertTenant reads it (ParseTenant, ResolveTenant), then the
// upsert tried on a copy of the tenant tree, as the handler does before it journals one.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  const ClusterState& state = fuzz::FixtureState();
  auto tenant = ParseTenant(std::string(reinterpret_cast<const char*>(data), size), "body");
  if (!tenant) return 0;
  auto spec = ResolveTenant(*tenant, state.resource_names(), "tenant.");
  if (!spec) return 0;
  QuotaTree next = state.tenants();
  (void)next.Upsert(*spec, state.resource_names());
  return 0;
}
