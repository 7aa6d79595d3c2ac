// The reservation book at the mission's scale (issue 16's goal): 6,250 nodes × 8 H100 (50,000
// GPUs) in 200 racks, 10,000 confirmed reservations over a 180-day horizon, then 1,000 timed
// bookings (Find then Book) and 1,000 timed earliest-start queries, each of a random size,
// topology and length. Prints p50/p99/max of each; exits non-zero when nothing was booked or
// found. Run under /usr/bin/time -v for the peak RSS (make bench does).
//
// Then the same with 100,000 live jobs busy until their expected ends, the way GET
// /v1/availability sees them: an overlay of the book built per query (not a copy of it), then the
// query; each timed, and the two together.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "booking/reservation_book.h"

using namespace allot;

namespace {

double Ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void Print(const char* what, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  std::printf("%-36s n=%zu p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", what, ms.size(), ms[ms.size() / 2],
              ms[ms.size() * 99 / 100], ms.back());
}

}  // namespace

int main(int argc, char** argv) {
  const int kNodes = 6250, kReservations = argc > 1 ? std::atoi(argv[1]) : 10000;
  constexpr int64_t kHour = 3600 * 1000, kHorizon = 180 * 24 * kHour;
  Fleet fleet;
  ResourceNames names;
  for (int n = 0; n < kNodes; ++n) {
    NodeSpec spec{"n" + std::to_string(n), "z" + std::to_string(n / 2000), "r" + std::to_string(n / 32), "", 96000, 1 << 20,
                  "H100-80GB", 8};
    if (auto id = fleet.AddNode(spec, names); !id) return std::fprintf(stderr, "%s\n", id.error().message().c_str()), 2;
  }
  const ResourceId h100 = names.Find("gpu/H100-80GB");
  std::mt19937_64 rng(16);
  auto random_ask = [&] {
    CapacityAsk ask{h100, 0, 0, std::nullopt};
    int kind = static_cast<int>(rng() % 10);
    if (kind < 6) {
      ask.gpus = 1 + static_cast<int>(rng() % 16);
    } else if (kind < 9) {
      ask.gpus = 8 * (1 + static_cast<int>(rng() % 8));
      ask.within = DomainKind::kRack;
    } else {
      ask.nodes = 1 + static_cast<int>(rng() % 4);
    }
    return ask;
  };
  auto random_window = [&] {
    int64_t start = static_cast<int64_t>(rng() % (kHorizon / kHour)) * kHour;
    int64_t len = (1 + static_cast<int64_t>(rng() % 72)) * kHour;
    return Window{start, start + len};
  };
  ReservationBook book;
  uint32_t next = 0;
  auto t0 = std::chrono::steady_clock::now();
  while (book.bookings().size() < static_cast<size_t>(kReservations)) {
    CapacityAsk ask = random_ask();
    Window w = random_window();
    auto fit = book.Find(fleet, names, ask, w);
    if (fit.ok() && !book.Book(fleet, BookingId(next++), w, fit.holds).ok()) return 3;
  }
  std::printf("filled the book: %d reservations in %.1f s\n", kReservations, Ms(std::chrono::steady_clock::now() - t0) / 1000);

  std::vector<double> book_ms, earliest_ms;
  int booked = 0, found = 0;
  for (int i = 0; i < 1000; ++i) {
    CapacityAsk ask = random_ask();
    Window w = random_window();
    auto s = std::chrono::steady_clock::now();
    auto fit = book.Find(fleet, names, ask, w);
    if (fit.ok()) {
      if (!book.Book(fleet, BookingId(next++), w, fit.holds).ok()) return 3;
      ++booked;
    }
    book_ms.push_back(Ms(std::chrono::steady_clock::now() - s));
  }
  for (int i = 0; i < 1000; ++i) {
    CapacityAsk ask = random_ask();
    Window w = random_window();
    auto s = std::chrono::steady_clock::now();
    auto at = book.EarliestStart(fleet, names, ask, w.start_ms, w.duration_ms(), w.start_ms + kHorizon);
    earliest_ms.push_back(Ms(std::chrono::steady_clock::now() - s));
    found += at.has_value();
  }
  Print("book (find + book)", book_ms);
  Print("earliest start", earliest_ms);
  std::printf("booked %d of 1000, an earliest start found for %d of 1000\n", booked, found);

  // With 100,000 live jobs, as GET /v1/availability sees them: per query, an overlay of each
  // running job's GPUs busy until its expected end, then the query. The running jobs fill every
  // node now (1 or 2 GPUs each, ending within 7 days: about 33,000 jobs on the 50,000 GPUs);
  // the rest of the 100,000 wait in the queue, which the query does not read.
  const int kJobs = argc > 2 ? std::atoi(argv[2]) : 100000;
  struct LiveJob {
    NodeId node;
    int32_t gpus;
    int64_t end;
  };
  std::vector<LiveJob> jobs;
  std::mt19937_64 jobs_rng(7);
  for (int n = 0; n < kNodes && static_cast<int>(jobs.size()) < kJobs; ++n) {
    for (int32_t used = 0; used < 8;) {
      int32_t gpus = std::min<int32_t>(8 - used, 1 + static_cast<int32_t>(jobs_rng() % 2));
      int64_t end = static_cast<int64_t>(1 + jobs_rng() % (7 * 24)) * kHour;
      jobs.push_back({NodeId(static_cast<uint32_t>(n)), gpus, end});
      used += gpus;
    }
  }
  std::vector<double> copy_ms, live_ms, total_ms;
  int live_found = 0;
  for (int i = 0; i < 400; ++i) {
    CapacityAsk ask = random_ask();
    Window w = random_window();
    if (i % 2 == 0) w = {0, w.duration_ms()};  // half of them from now, where the live jobs are
    auto s = std::chrono::steady_clock::now();
    ReservationBook::BusyByNode busy;
    uint32_t id = UINT32_MAX - 1;
    for (const LiveJob& j : jobs) busy.Add(j.node, {{0, j.end}, j.gpus, BookingId(id--)});
    busy.Seal(kNodes);
    auto built = std::chrono::steady_clock::now();
    auto at = book.EarliestStart(fleet, names, ask, w.start_ms, w.duration_ms(), w.start_ms + kHorizon, &busy);
    auto done = std::chrono::steady_clock::now();
    copy_ms.push_back(Ms(built - s));
    live_ms.push_back(Ms(done - built));
    total_ms.push_back(Ms(done - s));
    live_found += at.has_value();
  }
  char what[96];
  std::snprintf(what, sizeof what, "overlay of %zu running jobs", jobs.size());
  Print(what, copy_ms);
  Print("earliest start, live jobs in", live_ms);
  Print("availability (overlay + query)", total_ms);
  std::printf("an earliest start found for %d of 400 with live jobs (half of them asked from now)\n", live_found);
  return booked > 0 && found > 0 && live_found > 0 ? 0 : 1;
}
