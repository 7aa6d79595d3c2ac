// What reading a heartbeat strictly costs allotd (issue 14 made registrations and heartbeats go
// through ParseStrictJson, which refuses a repeated key, instead of nlohmann's lenient parse):
// one 8-GPU node's heartbeat — telemetry for every GPU, eight running tasks — parsed and read
// (ParseHeartbeat) both ways, by turns, best of the rounds. At 6,250 nodes beating once a second
// this is the per-second parsing bill of the whole fleet. And the SAX reader allotd reads it with
// now (wire/heartbeat_reader.h: straight into the Heartbeat, no JSON tree).
//
//   build-release/bench/heartbeat_parse [ROUNDS] [PER_ROUND]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "server/body_reader.h"
#include "wire/agent_messages.h"
#include "wire/heartbeat_reader.h"

namespace {

using allot::Json;
using Clock = std::chrono::steady_clock;

std::string SampleHeartbeat() {
  allot::Heartbeat hb;
  hb.node = "gpu-node-0421";
  for (int g = 0; g < 8; ++g) {
    allot::GpuTelemetry t;
    t.index = g;
    t.uuid = "GPU-5f0c7a1e-2b3d-4c5e-8f9a-0b1c2d3e4f" + std::to_string(10 + g);
    t.utilization_percent = 87;
    t.memory_used_mib = 61234;
    t.power_mw = 612000;
    t.temperature_c = 64;
    t.ecc_corrected = 3;
    t.ecc_uncorrected = 0;
    t.retired_pages = 0;
    hb.gpus.push_back(t);
    allot::TaskReport r;
    r.job = "train-llama-70b-" + std::to_string(g);
    r.job_id = 100000 + g;
    r.task = g;
    r.run = 2;
    hb.tasks.push_back(r);
  }
  return allot::HeartbeatJson(hb).dump();
}

// Seconds per heartbeat over `n` parses and reads; -1 when a read failed.
template <class Parse>
double Time(const std::string& body, int n, Parse parse) {
  auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    auto json = parse(body);
    if (!json) return -1;
    auto hb = allot::ParseHeartbeat(*json);
    if (!hb || hb->tasks.size() != 8) return -1;
  }
  return std::chrono::duration<double>(Clock::now() - start).count() / n;
}

// The same through the SAX reader.
double TimeSax(const std::string& body, int n) {
  auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    auto hb = allot::ReadPlainHeartbeat(body);
    if (!hb || hb->tasks.size() != 8) return -1;
  }
  return std::chrono::duration<double>(Clock::now() - start).count() / n;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const int per_round = argc > 2 ? std::atoi(argv[2]) : 20000;
  const std::string body = SampleHeartbeat();
  auto lenient = [](const std::string& b) -> allot::Result<Json> {
    Json j = Json::parse(b, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return allot::Err(allot::InvalidArgument("malformed"));
    return j;
  };
  auto strict = [](const std::string& b) { return allot::ParseStrictJson(b); };
  double best_lenient = 1e9, best_strict = 1e9, best_sax = 1e9;
  for (int r = 0; r < rounds; ++r) {
    double l = Time(body, per_round, lenient);
    double s = Time(body, per_round, strict);
    double x = TimeSax(body, per_round);
    if (l < 0 || s < 0 || x < 0) {
      std::fprintf(stderr, "heartbeat_parse: a heartbeat did not parse back; nothing measured\n");
      return 1;
    }
    best_lenient = std::min(best_lenient, l);
    best_strict = std::min(best_strict, s);
    best_sax = std::min(best_sax, x);
  }
  std::printf("heartbeat of %zu bytes (8 GPUs' telemetry, 8 tasks), best of %d rounds of %d:\n", body.size(), rounds,
              per_round);
  std::printf("  lenient parse + read: %.1f us\n", best_lenient * 1e6);
  std::printf("  strict parse + read:  %.1f us (%.2fx)\n", best_strict * 1e6, best_strict / best_lenient);
  std::printf("  SAX read (strict):     %.1f us (%.2fx)\n", best_sax * 1e6, best_sax / best_lenient);
  std::printf("  6,250 nodes at 1 beat/s: %.1f%% of one core strict, %.1f%% lenient, %.1f%% SAX\n", best_strict * 6250 * 100,
              best_lenient * 6250 * 100, best_sax * 6250 * 100);
  return 0;
}
