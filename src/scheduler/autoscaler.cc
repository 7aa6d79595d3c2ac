#include "scheduler/autoscaler.h"

#include <algorithm>
#include <cstdio>

namespace allot {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

std::string Load(int64_t milli) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(milli) / 1000.0);
  return buf;
}

std::string Secs(int64_t ms) { return std::to_string(ms / 1000) + "s"; }

std::string Replicas(int64_t n) { return std::to_string(n) + (n == 1 ? " replica" : " replicas"); }

}  // namespace

void Autoscaler::Observe(int64_t now, int64_t load_milli, int64_t stable_window_ms) {
  samples_.emplace_back(now, std::max<int64_t>(load_milli, 0));
  while (!samples_.empty() && samples_.front().first <= now - stable_window_ms) samples_.pop_front();
}

int64_t Autoscaler::Mean(int64_t now, int64_t window_ms) const {
  __int128 sum = 0;
  int64_t n = 0;
  for (auto it = samples_.rbegin(); it != samples_.rend() && it->first > now - window_ms; ++it) {
    sum += it->second;
    ++n;
  }
  return n == 0 ? -1 : static_cast<int64_t>(sum / n);
}

ScaleDecision Autoscaler::Decide(const ServiceSpec& spec, int32_t current, int32_t running, int64_t now) {
  const AutoscaleSpec& a = spec.autoscale;
  auto clamp = [&](int64_t n) { return static_cast<int32_t>(std::clamp<int64_t>(n, spec.min_replicas, spec.max_replicas)); };
  int64_t stable = Mean(now, a.stable_window_ms), panic = Mean(now, a.panic_window_ms);
  if (stable < 0) return {clamp(current), panicking(), "no load reported yet: " + Replicas(clamp(current)) + " kept"};
  int64_t want_stable = CeilDiv(stable, a.target_milli), want_panic = CeilDiv(panic, a.target_milli);
  // 1. Panic: the short window asks for panic_threshold × what runs (at least one replica's worth).
  int64_t base = std::max(running, 1);
  bool condition = want_panic * 1000 >= a.panic_threshold_milli * base && want_panic > current;
  if (condition) {
    last_panic_ms_ = now;
    if (panic_since_ms_ < 0) panic_since_ms_ = now;
  } else if (panic_since_ms_ >= 0 && now - last_panic_ms_ >= a.stable_window_ms) {
    panic_since_ms_ = -1;
  }
  ScaleDecision d;
  d.panic = panicking();
  if (d.panic) {
    d.desired = clamp(std::max<int64_t>({want_panic, want_stable, current}));
    d.why = "load " + Load(panic) + " over " + Secs(a.panic_window_ms) + " asks " + Replicas(want_panic) + " at target " +
            Load(a.target_milli) + " (" + std::to_string(running) + " running): panic, " + Replicas(d.desired);
  } else {
    // 2. Stable: the mean over the stable window; down no lower than what the delay remembers.
    int64_t want = want_stable;
    wanted_.emplace_back(now, clamp(want));
    while (!wanted_.empty() && wanted_.front().first <= now - a.scale_down_delay_ms) wanted_.pop_front();
    int32_t floor = 0;
    for (const auto& [t, n] : wanted_) floor = std::max(floor, n);
    d.desired = clamp(std::max<int64_t>(want, std::min<int64_t>(floor, current)));
    d.why = "load " + Load(stable) + " over " + Secs(a.stable_window_ms) + " at target " + Load(a.target_milli) + " per replica: " +
            Replicas(d.desired);
    if (d.desired > want) d.why += " (scale-down delay " + Secs(a.scale_down_delay_ms) + ")";
  }
  return d;
}

}  // namespace allot
