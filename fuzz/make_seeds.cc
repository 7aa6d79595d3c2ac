// Writes the binary seeds of the event and snapshot harnesses (text seeds are written by hand):
//   fuzz_make_seeds SOURCE_DIR OUT_DIR
// event/: the first event of each type a run of scenarios/example.yaml applies, and a default
// one of every type, and the first of each type of tests/scenarios/require-labels.yaml (nodes with
// labels, jobs and reservations with a requirement) as TYPE-labels and of
// tests/scenarios/sizing-by-model.yaml (jobs sized from a model) as TYPE-sizing, of pipeline-three-stage
// and array-parallel-retry (dependencies, arrays, retries) as TYPE-pipeline and TYPE-array, of
// service-autoscale and templates-override as TYPE-service and TYPE-template; snapshot/: the states of small
// scenarios after a run. Run it again when a
// format changes (kEventFormat, kSnapshotFormat) so the corpus starts from current bytes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <variant>

#include "sim/simulator.h"
#include "state/event_codec.h"
#include "state/snapshot.h"

namespace {

using namespace allot;

void Write(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

template <size_t... I>
void WriteDefaults(const std::filesystem::path& dir, std::index_sequence<I...>) {
  (Write(dir / (std::string("default-") + EventTypeName(Event{0, EventBody(std::in_place_index<I>)})),
         EncodeEvent(Event{0, EventBody(std::in_place_index<I>)})),
   ...);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_make_seeds SOURCE_DIR OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path src = argv[1], out = argv[2];
  std::map<std::string, std::string> first;  // type → encoding
  SimOptions options;
  options.on_event = [&](const Event& e) { first.emplace(EventTypeName(e), EncodeEvent(e)); };
  auto run = RunScenarioFile((src / "scenarios/example.yaml").string(), options, std::nullopt);
  if (!run) {
    std::fprintf(stderr, "%s\n", run.error().message().c_str());
    return 1;
  }
  for (const auto& [type, bytes] : first) Write(out / "event" / type, bytes);
  // The first event of each type of scenarios that fill fields example.yaml leaves empty.
  for (const auto& [scenario, suffix] : {std::pair{"require-labels", "-labels"}, std::pair{"sizing-by-model", "-sizing"},
                                          std::pair{"pipeline-three-stage", "-pipeline"}, std::pair{"array-parallel-retry", "-array"},
                                          std::pair{"service-autoscale", "-service"}, std::pair{"templates-override", "-template"}}) {
    std::map<std::string, std::string> seen;
    SimOptions each;
    each.on_event = [&](const Event& e) { seen.emplace(EventTypeName(e), EncodeEvent(e)); };
    if (auto r = RunScenarioFile((src / "tests/scenarios" / (std::string(scenario) + ".yaml")).string(), each, std::nullopt); !r) {
      std::fprintf(stderr, "%s\n", r.error().message().c_str());
      return 1;
    }
    for (const auto& [type, bytes] : seen) Write(out / "event" / (type + suffix), bytes);
  }
  WriteDefaults(out / "event", std::make_index_sequence<std::variant_size_v<EventBody>>());
  Write(out / "snapshot" / "example", EncodeSnapshot(run->state));
  for (const char* name : {"backfill", "mig-layouts", "mps-limits", "require-labels", "reservation-lending", "sizing-by-model",
                           "array-parallel-retry", "service-autoscale", "templates-override"}) {
    auto r = RunScenarioFile((src / "tests/scenarios" / (std::string(name) + ".yaml")).string(), SimOptions{}, std::nullopt);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().message().c_str());
      return 1;
    }
    Write(out / "snapshot" / name, EncodeSnapshot(r->state));
  }
  return 0;
}
