// POST /v1/reservations: the body as the booking route reads it (ReadBody by its Content-Type,
// then ReadReservationObject), resolved against a small cluster (ResolveReservation: tenant,
// model, the recurrence expanded) and each window planned against its book (Find), as allotd
// does before it journals the booking. The first byte picks the Content-Type: odd → YAML.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_state.h"
#include "server/body_reader.h"
#include "spec/reservation_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  if (size == 0) return 0;
  const ClusterState& state = fuzz::FixtureState();
  const char* type = data[0] & 1 ? "application/yaml" : "application/json";
  auto tree = ReadBody(type, std::string(reinterpret_cast<const char*>(data + 1), size - 1), "reservation");
  if (!tree) return 0;
  auto ask = ReadReservationObject(*tree, "body");
  if (!ask) return 0;
  auto spec = ResolveReservation(*ask, state, "");
  if (!spec) return 0;
  for (const Window& w : spec->windows) (void)state.book().Find(state.fleet(), state.resource_names(), spec->Ask(), w);
  return 0;
}
