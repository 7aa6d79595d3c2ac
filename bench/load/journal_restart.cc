// Restart time: builds a journal of N events from a simulated scenario (the real event mix:
// nodes, tenants, submissions, placements, exits, preemptions), then times what allotd does at
// start-up — open the journal and replay every event into a fresh state. The other modes work
// on a journal built so, one step each, so `/usr/bin/time -v` can measure each one's memory:
//
//   journal_restart SCENARIO.yaml DATA_DIR [EVENTS]   build (default 1,000,000 events), full replay
//   journal_restart --replay DATA_DIR                 full replay only
//   journal_restart --snapshot DATA_DIR [TAIL]        save a snapshot TAIL events (default 10,000)
//                                                     before the end: size, encode and save times;
//                                                     checks restore + tail == the full replay
//   journal_restart --restore DATA_DIR                what Controller::Start does with a snapshot:
//                                                     load it, restore it, replay the tail
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "sim/simulator.h"
#include "state/snapshot.h"
#include "store/sqlite_journal.h"

using namespace allot;

namespace {

using Clock = std::chrono::steady_clock;
double Secs(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string DbPath(const char* dir) { return (std::filesystem::path(dir) / "journal.db").string(); }

std::unique_ptr<SqliteJournal> OpenOrDie(const std::string& db) {
  auto j = SqliteJournal::Open(db);
  if (!j) {
    std::cerr << j.error().message() << "\n";
    std::exit(1);
  }
  return std::move(*j);
}

int Build(const char* scenario, const char* dir, uint64_t want) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string db = DbPath(dir);
  auto j = OpenOrDie(db);
  std::vector<Event> group;
  uint64_t written = 0;
  SimOptions o;
  o.on_event = [&](const Event& e) {
    if (written + group.size() >= want) return;
    group.push_back(e);
    if (group.size() == 1000) {
      written = j->Append(group).value_or(written);
      group.clear();
    }
  };
  auto run = RunScenarioFile(scenario, o, std::nullopt);
  if (!run) return std::cerr << run.error().message() << "\n", 1;
  if (!group.empty()) written = j->Append(group).value_or(written);
  if (written == 0) return std::cerr << "journal_restart: the scenario wrote no event; nothing to measure\n", 1;
  std::printf("journal: %llu events, %.0f MB\n", static_cast<unsigned long long>(written),
              static_cast<double>(std::filesystem::file_size(db)) / 1e6);
  return 0;
}

int FullReplay(const char* dir) {
  auto t0 = Clock::now();
  auto j = OpenOrDie(DbPath(dir));
  ClusterState state;
  uint64_t n = 0;
  Status s = j->Replay(0, [&](uint64_t, const Event& e) {
    ++n;
    return state.apply(e);
  });
  double secs = Secs(t0);
  if (!s.ok()) return std::cerr << s.message() << "\n", 1;
  if (n == 0) return std::cerr << "journal_restart: replayed no event; nothing measured\n", 1;
  std::printf("restart: replayed %llu events in %.2f s (%.0f events/s); %zu jobs\n", static_cast<unsigned long long>(n), secs,
              n / secs, state.jobs().size());
  return 0;
}

int SaveSnapshot(const char* dir, uint64_t tail) {
  auto j = OpenOrDie(DbPath(dir));
  if (tail >= j->last_seq()) return std::cerr << "--snapshot: TAIL must be less than the journal's events\n", 1;
  uint64_t at = j->last_seq() - tail;
  ClusterState state;
  std::string bytes;
  double encode_s = 0, save_s = 0;
  Status s = j->Replay(0, [&](uint64_t seq, const Event& e) {
    if (Status a = state.apply(e); !a.ok()) return a;
    if (seq != at) return Status::Ok();
    auto t0 = Clock::now();
    bytes = EncodeSnapshot(state);
    encode_s = Secs(t0);
    return Status::Ok();
  });
  if (!s.ok()) return std::cerr << s.message() << "\n", 1;
  auto t0 = Clock::now();
  if (Status saved = j->SaveSnapshot(at, bytes); !saved.ok()) return std::cerr << saved.message() << "\n", 1;
  save_s = Secs(t0);
  std::printf("snapshot: at event %llu, %.1f MB (%zu bytes), %zu jobs; encoded in %.0f ms, saved in %.0f ms\n",
              static_cast<unsigned long long>(at), static_cast<double>(bytes.size()) / 1e6, bytes.size(),
              state.jobs().size(), encode_s * 1e3, save_s * 1e3);

  // Correctness at scale: the snapshot restored and the tail replayed give the full replay.
  ClusterState restored;
  if (Status r = RestoreSnapshot(bytes, restored); !r.ok()) return std::cerr << r.message() << "\n", 1;
  s = j->Replay(at, [&](uint64_t, const Event& e) { return restored.apply(e); });
  if (!s.ok()) return std::cerr << s.message() << "\n", 1;
  bool same = EncodeSnapshot(restored) == EncodeSnapshot(state);
  std::printf("check: restore + %llu-event tail %s the full replay\n", static_cast<unsigned long long>(tail),
              same ? "encodes identically to" : "DIFFERS from");
  return same ? 0 : 1;
}

int RestoreAndTail(const char* dir) {
  auto t0 = Clock::now();
  auto j = OpenOrDie(DbPath(dir));
  auto loaded = j->LoadSnapshot();
  if (!loaded || !*loaded) return std::cerr << "--restore: no snapshot; run --snapshot first\n", 1;
  double load_s = Secs(t0);
  auto t1 = Clock::now();
  ClusterState state;
  uint64_t at = (*loaded)->first;
  size_t size = (*loaded)->second.size();
  if (Status r = RestoreSnapshot((*loaded)->second, state); !r.ok()) return std::cerr << r.message() << "\n", 1;
  loaded->reset();  // as Controller::Start does, before the tail
  double restore_s = Secs(t1);
  auto t2 = Clock::now();
  uint64_t n = 0;
  Status s = j->Replay(at, [&](uint64_t, const Event& e) {
    ++n;
    return state.apply(e);
  });
  if (!s.ok()) return std::cerr << s.message() << "\n", 1;
  double tail_s = Secs(t2), total = Secs(t0);
  std::printf("restart: snapshot at event %llu (%.1f MB) loaded in %.0f ms, restored in %.0f ms; %llu-event tail "
              "replayed in %.0f ms; %.2f s in all; %zu jobs\n",
              static_cast<unsigned long long>(at), static_cast<double>(size) / 1e6, load_s * 1e3,
              restore_s * 1e3, static_cast<unsigned long long>(n), tail_s * 1e3, total, state.jobs().size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--replay") == 0) return FullReplay(argv[2]);
  if (argc >= 3 && std::strcmp(argv[1], "--snapshot") == 0) {
    return SaveSnapshot(argv[2], argc > 3 ? std::stoull(argv[3]) : 10'000);
  }
  if (argc >= 3 && std::strcmp(argv[1], "--restore") == 0) return RestoreAndTail(argv[2]);
  if (argc < 3 || argv[1][0] == '-') {
    std::cerr << "usage: journal_restart SCENARIO.yaml DATA_DIR [EVENTS] | --replay DATA_DIR | "
                 "--snapshot DATA_DIR [TAIL] | --restore DATA_DIR\n";
    return 2;
  }
  if (int rc = Build(argv[1], argv[2], argc > 3 ? std::stoull(argv[3]) : 1'000'000); rc != 0) return rc;
  return FullReplay(argv[2]);
}
