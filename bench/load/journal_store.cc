// Journal throughput on any store (OpenJournal's --store values): appends N events from a
// simulated scenario in groups of 64 (an allotd batch under load), timing only the appends,
// then times a restart: open the journal and replay every event into a fresh state.
//
//   journal_store SCENARIO.yaml STORE DATA_DIR [EVENTS]   (default 1,000,000)
//
// STORE is "sqlite" (DATA_DIR/journal.db, removed first) or a PostgreSQL conninfo, whose
// journal must be empty: this program does not delete what it did not write. EVENTS 0 replays
// an existing journal only, so `/usr/bin/time -v` measures the restart's peak RSS alone.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "sim/simulator.h"
#include "store/open_journal.h"

using namespace allot;

namespace {

constexpr size_t kGroup = 64;

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: journal_store SCENARIO.yaml STORE DATA_DIR [EVENTS]\n";
    return 2;
  }
  std::string store = argv[2], data = argv[3];
  uint64_t want = argc > 4 ? std::stoull(argv[4]) : 1'000'000;
  if (want > 0) {
    if (store == "sqlite") std::filesystem::remove_all(data);
    auto j = OpenJournal(store, data);
    if (!j) return std::cerr << j.error().message() << "\n", 1;
    if ((*j)->last_seq() != 0) {
      std::cerr << DescribeStore(store, data) << " holds " << (*j)->last_seq()
                << " events; expected an empty journal (use a fresh database)\n";
      return 2;
    }
    std::vector<Event> group;
    uint64_t written = 0, groups = 0;
    double appending = 0;
    Status failed = Status::Ok();
    SimOptions o;
    o.on_event = [&](const Event& e) {
      if (!failed.ok() || written + group.size() >= want) return;
      group.push_back(e);
      if (group.size() < kGroup) return;
      auto t0 = std::chrono::steady_clock::now();
      auto r = (*j)->Append(group);
      appending += Since(t0);
      if (!r) failed = r.error();
      written = r.value_or(written);
      ++groups;
      group.clear();
    };
    auto run = RunScenarioFile(argv[1], o, std::nullopt);
    if (!run) return std::cerr << run.error().message() << "\n", 1;
    if (!group.empty() && failed.ok()) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = (*j)->Append(group);
      appending += Since(t0);
      if (!r) failed = r.error();
      written = r.value_or(written);
      ++groups;
    }
    if (!failed.ok()) return std::cerr << failed.message() << "\n", 1;
    if (written == 0) return std::cerr << "journal_store: appended no event; nothing measured\n", 1;
    std::printf("append: %llu events in %llu groups of <= %zu in %.2f s: %.0f events/s, %.0f groups/s (%.3f ms/group)\n",
                static_cast<unsigned long long>(written), static_cast<unsigned long long>(groups), kGroup, appending,
                written / appending, groups / appending, 1000 * appending / groups);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto j = OpenJournal(store, data);
  if (!j) return std::cerr << j.error().message() << "\n", 1;
  ClusterState state;
  uint64_t n = 0;
  Status s = (*j)->Replay(0, [&](uint64_t, const Event& e) {
    ++n;
    return state.apply(e);
  });
  double secs = Since(t0);
  if (!s.ok()) return std::cerr << s.message() << "\n", 1;
  if (n == 0) return std::cerr << "journal_store: replayed no event; nothing measured\n", 1;
  std::printf("restart: opened %s and replayed %llu events in %.2f s (%.0f events/s); %zu jobs\n",
              DescribeStore(store, data).c_str(), static_cast<unsigned long long>(n), secs, n / secs,
              state.jobs().size());
  return 0;
}
