// POST /v1/tenants: the body as UpsertTenant reads it (ReadBody by its Content-Type,
// ReadTenantObject, ResolveTenant), then the upsert tried on a copy of the tenant tree, as the
// handler does before it journals one. The first byte picks the Content-Type: odd → YAML, even → JSON.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_state.h"
#include "server/body_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  if (size == 0) return 0;
  const ClusterState& state = fuzz::FixtureState();
  const char* type = data[0] & 1 ? "application/yaml" : "application/json";
  auto tree = ReadBody(type, std::string(reinterpret_cast<const char*>(data + 1), size - 1), "tenant");
  if (!tree) return 0;
  auto tenant = ReadTenantObject(*tree, "body");
  if (!tenant) return 0;
  auto spec = ResolveTenant(*tenant, state.resource_names(), "tenant.");
  if (!spec) return 0;
  QuotaTree next = state.tenants();
  (void)next.Upsert(*spec, state.resource_names());
  return 0;
}
