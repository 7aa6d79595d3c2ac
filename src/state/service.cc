#include "state/service.h"

namespace allot {

const char* SpreadName(Spread s) {
  switch (s) {
    case Spread::kNone: return "none";
    case Spread::kNode: return "node";
    case Spread::kRack: return "rack";
    case Spread::kZone: return "zone";
  }
  return "?";
}

std::optional<Spread> ParseSpread(std::string_view t) {
  if (t == "none") return Spread::kNone;
  if (t == "node") return Spread::kNode;
  if (t == "rack") return Spread::kRack;
  if (t == "zone") return Spread::kZone;
  return std::nullopt;
}

int64_t RestartBackoffMs(int32_t crashes) {
  if (crashes <= 0) return 0;
  int64_t ms = kBackoffFirstMs;
  for (int32_t i = 1; i < crashes && ms < kBackoffMaxMs; ++i) ms *= 2;
  return std::min(ms, kBackoffMaxMs);
}

Status ServiceSpec::Check() const {
  auto bad = [&](const std::string& field, int64_t v, const std::string& want) {
    return InvalidArgument("service '" + name + "' " + field + ": " + std::to_string(v) + "; expected " + want);
  };
  const std::string kCount = "0 to " + std::to_string(kMaxServiceReplicas);
  if (replicas < 0 || replicas > kMaxServiceReplicas) return bad("replicas", replicas, kCount);
  if (min_replicas < 0 || min_replicas > kMaxServiceReplicas) return bad("min_replicas", min_replicas, kCount);
  if (max_replicas < 0 || max_replicas > kMaxServiceReplicas) return bad("max_replicas", max_replicas, kCount);
  if (max_replicas > 0 && min_replicas > max_replicas) {
    return bad("min_replicas", min_replicas, "at most max_replicas (" + std::to_string(max_replicas) + ")");
  }
  if ((max_replicas > 0) != (autoscale.target_milli > 0)) {
    return InvalidArgument("service '" + name + "' autoscale: max_replicas and autoscale.target go together; expected both "
                           "(autoscaled) or neither");
  }
  if (spread > Spread::kZone) return bad("spread", static_cast<int>(spread), "none, node, rack or zone");
  if (port < 0 || port > 65535) return bad("port", port, "1 to 65535, or none");
  if (max_unavailable < 0 || max_unavailable > kMaxServiceReplicas) return bad("max_unavailable", max_unavailable, kCount);
  if (max_surge < 0 || max_surge > kMaxServiceReplicas) return bad("max_surge", max_surge, kCount);
  if (max_unavailable == 0 && max_surge == 0) {
    return InvalidArgument("service '" + name + "' max_unavailable and max_surge are both 0; expected one above 0 "
                           "(else a rolling update could never replace a replica)");
  }
  const AutoscaleSpec& a = autoscale;
  const int64_t kDay = 86'400'000;
  if (a.target_milli < 0 || a.target_milli > int64_t{1'000'000'000}) return bad("autoscale.target", a.target_milli, "above 0");
  if (a.stable_window_ms < 1000 || a.stable_window_ms > kDay) return bad("autoscale.stable_window (ms)", a.stable_window_ms, "1s to 1d");
  if (a.panic_window_ms < 1000 || a.panic_window_ms > a.stable_window_ms) {
    return bad("autoscale.panic_window (ms)", a.panic_window_ms, "1s up to the stable window");
  }
  if (a.panic_threshold_milli < 1000 || a.panic_threshold_milli > 100'000) {
    return bad("autoscale.panic_threshold (thousandths)", a.panic_threshold_milli, "1 to 100 (× the current replicas)");
  }
  if (a.scale_down_delay_ms < 0 || a.scale_down_delay_ms > kDay) return bad("autoscale.scale_down_delay (ms)", a.scale_down_delay_ms, "0s to 1d");
  return Status::Ok();
}

}  // namespace allot
