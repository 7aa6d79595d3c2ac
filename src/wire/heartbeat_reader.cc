#include "wire/heartbeat_reader.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace allot {
namespace {

// The objects and lists of a heartbeat this reader fills, and what it only walks past: an
// unknown field's value (its objects still refuse a key twice, as the strict parse does) or an
// xids element that is not a number.
enum class Kind : uint8_t {
  kRoot, kGpus, kGpu, kXids, kActivities, kActivity, kTasks, kTask, kLoads, kLoad, kScrubs, kScrub,
  kSkipObject, kSkipArray,
};

// Each object's fields, by their index in these lists (a bit in Frame::seen).
constexpr std::array<std::string_view, 9> kRootKeys = {"node", "gpus", "tasks", "loads", "scrubs",
                                                       "mig", "clusters", "acceptance", "health"};
enum RootField { kNode, kGpusField, kTasksField, kLoadsField, kScrubsField, kFirstDeclined };
constexpr std::array<std::string_view, 11> kGpuKeys = {
    "index", "uuid", "utilization_percent", "memory_used_mib", "power_mw", "temperature_c",
    "ecc_corrected", "ecc_uncorrected", "retired_pages", "xids", "tasks"};
constexpr std::array<std::string_view, 7> kActivityKeys = {"job_id", "task", "run", "sm_percent",
                                                           "memory_percent", "p99_us", "bad_latency_lines"};
constexpr std::array<std::string_view, 14> kTaskKeys = {
    "job", "task", "run", "exited", "pid", "exit_code", "signal", "oom_killed", "time_limit_exceeded",
    "preempted", "reason", "started_ms", "ended_ms", "job_id"};
constexpr std::array<std::string_view, 4> kLoadKeys = {"job_id", "task", "run", "load_milli"};
constexpr std::array<std::string_view, 6> kScrubKeys = {"gpu", "uuid", "from", "to", "ok", "detail"};

template <size_t N>
int IndexOf(const std::array<std::string_view, N>& keys, const std::string& key) {
  for (size_t i = 0; i < N; ++i) {
    if (keys[i] == key) return static_cast<int>(i);
  }
  return -1;
}

// A scalar value as the SAX parser hands it over.
struct Value {
  enum Type : uint8_t { kNull, kBool, kInt, kFloat, kString } type = kNull;
  bool b = false;
  int64_t i = 0;
  bool unsigned_over = false;  // an unsigned integer past INT64_MAX (JsonFields::Int would wrap it)
  uint64_t u = 0;              // an unsigned integer as read (xids)
  bool is_unsigned = false;
  const std::string* s = nullptr;
};

// JsonFields' readers over one value: false where JsonFields would fail. A null is an absent
// field: the default stays.
bool ReadStr(const Value& v, std::string& out) {
  if (v.type == Value::kNull) return true;
  if (v.type != Value::kString) return false;
  out = *v.s;
  return true;
}
template <class T>
bool ReadInt(const Value& v, int64_t lo, int64_t hi, T& out) {
  if (v.type == Value::kNull) return true;
  if (v.type != Value::kInt || v.unsigned_over || v.i < lo || v.i > hi) return false;
  out = static_cast<T>(v.i);
  return true;
}
bool ReadOpt(const Value& v, int64_t lo, int64_t hi, std::optional<int64_t>& out) {
  if (v.type == Value::kNull) return true;
  int64_t x = 0;
  if (!ReadInt(v, lo, hi, x)) return false;
  out = x;
  return true;
}
bool ReadBool(const Value& v, bool& out) {
  if (v.type == Value::kNull) return true;
  if (v.type != Value::kBool) return false;
  out = v.b;
  return true;
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

class HeartbeatSax : public nlohmann::json_sax<Json> {
 public:
  Heartbeat& heartbeat() { return hb_; }

  bool null() override { return Scalar(Value{}); }
  bool boolean(bool b) override {
    Value v;
    v.type = Value::kBool;
    v.b = b;
    return Scalar(v);
  }
  bool number_integer(number_integer_t i) override {
    Value v;
    v.type = Value::kInt;
    v.i = i;
    return Scalar(v);
  }
  bool number_unsigned(number_unsigned_t u) override {
    Value v;
    v.type = Value::kInt;
    v.is_unsigned = true;
    v.u = u;
    v.unsigned_over = u > static_cast<uint64_t>(kMax);
    v.i = static_cast<int64_t>(u);
    return Scalar(v);
  }
  bool number_float(number_float_t, const string_t&) override {
    Value v;
    v.type = Value::kFloat;
    return Scalar(v);
  }
  bool string(string_t& s) override {
    Value v;
    v.type = Value::kString;
    v.s = &s;
    return Scalar(v);
  }
  bool binary(binary_t&) override { return false; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  bool start_object(std::size_t) override { return Open(true); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& k) override {
    Frame& f = stack_.back();
    int i = -1;
    switch (f.kind) {
      case Kind::kRoot: i = IndexOf(kRootKeys, k); break;
      case Kind::kGpu: i = IndexOf(kGpuKeys, k); break;
      case Kind::kActivity: i = IndexOf(kActivityKeys, k); break;
      case Kind::kTask: i = IndexOf(kTaskKeys, k); break;
      case Kind::kLoad: i = IndexOf(kLoadKeys, k); break;
      case Kind::kScrub: i = IndexOf(kScrubKeys, k); break;
      default: break;
    }
    f.field = i;
    if (i >= 0) {
      // A key twice in one object: the strict parse refuses it, and words it.
      if (f.seen >> i & 1) return false;
      f.seen |= uint32_t{1} << i;
      return true;
    }
    for (const std::string& other : f.others) {
      if (other == k) return false;
    }
    f.others.push_back(k);
    return true;
  }

 private:
  struct Frame {
    Kind kind;
    int field = -1;      // an object's field being read (-1: one it does not know)
    uint32_t seen = 0;   // its known keys read so far
    uint32_t set = 0;    // those with a value other than null
    std::vector<std::string> others;  // its unknown keys (none, in an agent's heartbeat)
  };

  bool Scalar(const Value& v) {
    if (stack_.empty()) return false;  // not an object
    Frame& f = stack_.back();
    switch (f.kind) {
      case Kind::kSkipObject: case Kind::kSkipArray: return true;
      case Kind::kXids:
        if (v.is_unsigned) hb_.gpus.back().xids.push_back(v.u);  // anything else is passed over
        return true;
      case Kind::kGpus: case Kind::kActivities: case Kind::kTasks: case Kind::kLoads: case Kind::kScrubs:
        return false;  // an element that is not an object
      default: break;
    }
    if (f.field < 0) return true;  // an unknown field
    if (v.type != Value::kNull) f.set |= uint32_t{1} << f.field;
    return Field(f, v);
  }

  // Reads the value of field `f.field` of the object being read.
  bool Field(const Frame& f, const Value& v) {
    switch (f.kind) {
      case Kind::kRoot:
        if (f.field == kNode) return ReadStr(v, hb_.node);
        // A list's null is no list; a declined part's null is no part; anything else is neither.
        return v.type == Value::kNull;
      case Kind::kGpu: {
        GpuTelemetry& g = hb_.gpus.back();
        switch (f.field) {
          case 0: return ReadInt(v, 0, 63, g.index);
          case 1: return ReadStr(v, g.uuid);
          case 2: return ReadOpt(v, kMin, kMax, g.utilization_percent);
          case 3: return ReadOpt(v, kMin, kMax, g.memory_used_mib);
          case 4: return ReadOpt(v, kMin, kMax, g.power_mw);
          case 5: return ReadOpt(v, kMin, kMax, g.temperature_c);
          case 6: return ReadOpt(v, kMin, kMax, g.ecc_corrected);
          case 7: return ReadOpt(v, kMin, kMax, g.ecc_uncorrected);
          case 8: return ReadOpt(v, kMin, kMax, g.retired_pages);
          default: return v.type == Value::kNull;  // xids, tasks: lists
        }
      }
      case Kind::kActivity: {
        TaskGpuActivity& a = hb_.gpus.back().tasks.back();
        switch (f.field) {
          case 0: return ReadInt(v, 0, kMax, a.job_id);
          case 1: return ReadInt(v, 0, 1 << 20, a.task);
          case 2: return ReadInt(v, 0, 1 << 30, a.run);
          case 3: return ReadOpt(v, 0, 100, a.sm_percent);
          case 4: return ReadOpt(v, 0, 100, a.memory_percent);
          case 5: return ReadOpt(v, 0, int64_t{3600} * 1000000, a.p99_us);
          default: return ReadInt(v, 0, kMax, a.bad_latency_lines);
        }
      }
      case Kind::kTask: {
        TaskReport& r = hb_.tasks.back();
        switch (f.field) {
          case 0: return ReadStr(v, r.job);
          case 1: return ReadInt(v, 0, 1 << 20, r.task);
          case 2: return ReadInt(v, 0, 1 << 30, r.run);
          case 3: return ReadBool(v, r.exited);
          case 4: return ReadInt(v, 0, 1 << 30, r.pid);
          case 5: return ReadInt(v, -1, 255, r.exit_code);
          case 6: return ReadInt(v, 0, 128, r.signal);
          case 7: return ReadBool(v, r.oom_killed);
          case 8: return ReadBool(v, r.time_limit_exceeded);
          case 9: return ReadBool(v, r.preempted);
          case 10: return ReadStr(v, r.reason);
          case 11: return ReadInt(v, kMin, kMax, r.started_ms);
          case 12: return ReadInt(v, kMin, kMax, r.ended_ms);
          default: return ReadInt(v, -1, UINT32_MAX, r.job_id);
        }
      }
      case Kind::kLoad: {
        TaskLoad& l = hb_.loads.back();
        switch (f.field) {
          case 0: return ReadInt(v, 0, UINT32_MAX, l.job_id);
          case 1: return ReadInt(v, 0, 1 << 20, l.task);
          case 2: return ReadInt(v, 0, 1 << 30, l.run);
          default: return ReadInt(v, 0, int64_t{1'000'000'000} * 1000, l.load_milli);
        }
      }
      case Kind::kScrub: {
        ScrubReport& s = hb_.scrubs.back();
        switch (f.field) {
          case 0: return ReadInt(v, 0, 63, s.gpu);
          case 1: return ReadStr(v, s.uuid);
          case 2: return ReadStr(v, s.from);
          case 3: return ReadStr(v, s.to);
          case 4: return ReadBool(v, s.ok);
          default: return ReadStr(v, s.detail);
        }
      }
      default: return false;
    }
  }

  bool Push(Kind kind) {
    stack_.push_back(Frame{kind});
    return true;
  }

  bool Open(bool object) {
    if (stack_.empty()) return object && Push(Kind::kRoot);
    Frame& f = stack_.back();
    switch (f.kind) {
      case Kind::kSkipObject: case Kind::kSkipArray: case Kind::kXids:
        return Push(object ? Kind::kSkipObject : Kind::kSkipArray);
      // A list's elements must be objects.
      case Kind::kGpus:
        if (!object) return false;
        hb_.gpus.emplace_back();
        return Push(Kind::kGpu);
      case Kind::kActivities:
        if (!object) return false;
        hb_.gpus.back().tasks.emplace_back();
        return Push(Kind::kActivity);
      case Kind::kTasks:
        if (!object) return false;
        hb_.tasks.emplace_back();
        return Push(Kind::kTask);
      case Kind::kLoads:
        if (!object) return false;
        hb_.loads.emplace_back();
        return Push(Kind::kLoad);
      case Kind::kScrubs:
        if (!object) return false;
        hb_.scrubs.emplace_back().ok = false;  // JsonFields::Bool's default, not the struct's
        return Push(Kind::kScrub);
      default: break;
    }
    if (f.field < 0) return Push(object ? Kind::kSkipObject : Kind::kSkipArray);
    f.set |= uint32_t{1} << f.field;
    // A known field's list; any other container where a known field is expected is refused
    // (or declined: health, mig, clusters, acceptance).
    if (object) return false;
    switch (f.kind) {
      case Kind::kRoot:
        switch (f.field) {
          case kGpusField: return Push(Kind::kGpus);
          case kTasksField: return Push(Kind::kTasks);
          case kLoadsField: return Push(Kind::kLoads);
          case kScrubsField: return Push(Kind::kScrubs);
          default: return false;
        }
      case Kind::kGpu:
        if (f.field == 9) return Push(Kind::kXids);
        if (f.field == 10) return Push(Kind::kActivities);
        return false;
      default: return false;
    }
  }

  // Ends an object or list: an element's own checks, in ParseHeartbeat's words (each declined).
  bool Close() {
    const Frame f = std::move(stack_.back());
    stack_.pop_back();
    auto has = [&](int field) { return (f.set >> field & 1) != 0; };
    switch (f.kind) {
      case Kind::kRoot: return has(kNode);                   // node: missing
      case Kind::kActivity: return has(0);                   // job_id: missing
      case Kind::kLoad: return has(0);                       // job_id: missing
      case Kind::kScrub: return has(2) && has(3);            // from, to: missing
      case Kind::kTask: {
        const TaskReport& r = hb_.tasks.back();
        return has(0) && !(r.exited && r.reason.empty());   // job: missing; an exit says how it ended
      }
      default: return true;
    }
  }

  Heartbeat hb_;
  std::vector<Frame> stack_;
};

}  // namespace

std::optional<Heartbeat> ReadPlainHeartbeat(std::string_view body) {
  HeartbeatSax sax;
  if (!Json::sax_parse(body.data(), body.data() + body.size(), &sax, nlohmann::detail::input_format_t::json, /*strict=*/true)) {
    return std::nullopt;
  }
  return std::move(sax.heartbeat());
}

}  // namespace allot
