// Restart time: builds a journal of N events from a simulated scenario (the real event mix:
// nodes, tenants, submissions, placements, exits, preemptions), then times what allotd does at
// start-up — open the journal and replay every event into a fresh state.
//
//   journal_restart SCENARIO.yaml DATA_DIR [EVENTS]   (default 1,000,000)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "sim/simulator.h"
#include "store/sqlite_journal.h"

using namespace allot;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: journal_restart SCENARIO.yaml DATA_DIR [EVENTS]\n";
    return 2;
  }
  uint64_t want = argc > 3 ? std::stoull(argv[3]) : 1'000'000;
  std::filesystem::remove_all(argv[2]);
  std::filesystem::create_directories(argv[2]);
  std::string db = (std::filesystem::path(argv[2]) / "journal.db").string();
  {
    auto j = SqliteJournal::Open(db);
    if (!j) return std::cerr << j.error().message() << "\n", 1;
    std::vector<Event> group;
    uint64_t written = 0;
    SimOptions o;
    o.on_event = [&](const Event& e) {
      if (written + group.size() >= want) return;
      group.push_back(e);
      if (group.size() == 1000) {
        written = (*j)->Append(group).value_or(written);
        group.clear();
      }
    };
    auto run = RunScenarioFile(argv[1], o, std::nullopt);
    if (!run) return std::cerr << run.error().message() << "\n", 1;
    if (!group.empty()) written = (*j)->Append(group).value_or(written);
    std::printf("journal: %llu events, %.0f MB\n", static_cast<unsigned long long>(written),
                static_cast<double>(std::filesystem::file_size(db)) / 1e6);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto j = SqliteJournal::Open(db);
  ClusterState state;
  uint64_t n = 0;
  Status s = (*j)->Replay(0, [&](uint64_t, const Event& e) {
    ++n;
    return state.apply(e);
  });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) return std::cerr << s.message() << "\n", 1;
  std::printf("restart: replayed %llu events in %.2f s (%.0f events/s); %zu jobs\n", static_cast<unsigned long long>(n), secs,
              n / secs, state.jobs().size());
  return 0;
}
