#include "sim/trace_writer.h"

#include "core/quantity.h"

namespace allot {
namespace {

// A duration as the readers take it back exactly: whole seconds, else milliseconds.
std::string Ms(int64_t ms) { return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms"; }

std::string Priority(int32_t p) {
  if (p == kPriorityLow) return "low";
  if (p == kPriorityNormal) return "normal";
  if (p == kPriorityHigh) return "high";
  return std::to_string(p);
}

Result<std::string> Amount(const std::string& resource, int64_t amount) {
  if (resource == "memory") return FormatMemoryMiB(amount);
  if (resource == "cpu") return FormatMilli(amount);
  std::string text = FormatGpus(amount);
  auto back = ParseGpus(text);
  if (!back || *back != amount) return Err(InvalidArgument(resource + ": " + std::to_string(amount) + " GPU units are not writable exactly"));
  return text;
}

Status WriteQuota(const char* key, const std::vector<QuotaEntry>& entries, std::ostream& out) {
  if (entries.empty()) return Status::Ok();
  out << ", " << key << ": {";
  for (size_t i = 0; i < entries.size(); ++i) {
    auto a = Amount(entries[i].resource, entries[i].amount);
    if (!a) return a.error();
    out << (i ? ", " : "") << entries[i].resource << ": " << *a;
  }
  out << "}";
  return Status::Ok();
}

// The fields of a flat job, in writing order, as (field path, text); empty text: left out.
struct Field {
  const char* path;
  std::string text;
};
constexpr int kFields = 16;
constexpr const char* kPaths[kFields] = {"name",         "tenant",       "submit",      "duration", "time_limit", "tasks.count",
                                         "tasks.gpus",   "tasks.cpu",    "tasks.memory", "tasks.gpu_model", "topology",  "priority",
                                         "kind",         "min_runtime",  "checkpoint.interval", "grace"};

Result<std::vector<Field>> Flatten(const ScenarioJob& j) {
  const JobSpec& s = j.spec;
  if (s.groups.size() != 1) return Err(InvalidArgument("job " + s.name + ": a trace job has one task group"));
  const TaskGroup& g = s.groups.front();
  if (g.shared() || !s.command.empty() || !s.reservation.empty() || !s.require.empty() || !s.sizing.empty() ||
      !(s.environment == JobEnvironment{})) {
    return Err(InvalidArgument("job " + s.name + ": only whole GPUs and no command, reservation, require or model in a trace job"));
  }
  std::vector<Field> f(kFields);
  for (int i = 0; i < kFields; ++i) f[i].path = kPaths[i];
  f[0].text = s.name;
  f[1].text = j.tenant;
  f[2].text = Ms(s.submit_ms);
  f[3].text = Ms(s.duration_ms);
  if (s.time_limit_ms) f[4].text = Ms(s.time_limit_ms);
  f[5].text = std::to_string(g.count);
  f[6].text = std::to_string(g.gpu / kGpuUnit);
  f[7].text = FormatMilli(g.cpu);
  f[8].text = FormatMemoryMiB(g.memory);
  f[9].text = j.gpu_model;
  if (s.topology != Topology::kNone) f[10].text = TopologyName(s.topology);
  f[11].text = Priority(s.priority);
  if (s.kind != JobKind::kBatch) f[12].text = JobKindName(s.kind);
  if (s.min_runtime_ms) f[13].text = Ms(s.min_runtime_ms);
  if (s.checkpoint_interval_ms) f[14].text = Ms(s.checkpoint_interval_ms);
  if (s.grace_ms != JobSpec{}.grace_ms) f[15].text = Ms(s.grace_ms);
  return f;
}

bool Numeric(const std::string& path) { return path == "tasks.count" || path == "tasks.gpus"; }

// A JSON string: the names and values written here are printable ASCII without quotes, but a
// tenant or job name is escaped all the same.
void JsonString(const std::string& s, std::ostream& out) {
  out << '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out << '\\';
    out << c;
  }
  out << '"';
}

}  // namespace

Status WriteFleetAndTenants(const Scenario& sc, std::ostream& out) {
  out << "fleet:\n";
  for (const NodeSpec& n : sc.nodes) {
    if (n.sharing != Sharing::kExclusive || !n.nvlink_domain.empty() || !n.gpu_groups.empty() || !n.labels.empty()) {
      return InvalidArgument("node " + n.name + ": only exclusive nodes without groups, labels or NVLink domains are written");
    }
    out << "  - {name: " << n.name << ", zone: " << n.zone << ", rack: " << n.rack << ", cpu: " << FormatMilli(n.cpu)
        << ", memory: " << FormatMemoryMiB(n.memory);
    if (n.gpu_count > 0) out << ", gpus: {model: " << n.gpu_model << ", count: " << n.gpu_count << "}";
    out << "}\n";
  }
  out << "tenants:\n";
  for (const ScenarioTenant& t : sc.tenants) {
    if (!t.max_reserved.empty() || t.trust != Trust::kTrusted || t.pools != 0xF || !t.business_hours.empty()) {
      return InvalidArgument("tenant " + t.path + ": only guarantee, max and weight are written");
    }
    out << "  - {path: " << t.path;
    if (Status s = WriteQuota("guarantee", t.guarantee, out); !s.ok()) return s;
    if (Status s = WriteQuota("max", t.max, out); !s.ok()) return s;
    if (t.weight != kMilli) out << ", weight: " << FormatMilli(t.weight);
    out << "}\n";
  }
  return Status::Ok();
}

void TraceWriter::Begin() {
  if (format_ != TraceFormat::kCsv) return;
  for (int i = 0; i < kFields; ++i) out_ << (i ? "," : "") << kPaths[i];
  out_ << "\n";
}

Status TraceWriter::Write(const ScenarioJob& job) {
  auto fields = Flatten(job);
  if (!fields) return fields.error();
  switch (format_) {
    case TraceFormat::kCsv:
      for (size_t i = 0; i < fields->size(); ++i) {
        const std::string& t = (*fields)[i].text;
        if (t.find_first_of(",\"\n") != std::string::npos) return InvalidArgument("job " + job.spec.name + ": a CSV cell holds ',' or '\"'");
        out_ << (i ? "," : "") << t;
      }
      out_ << "\n";
      return Status::Ok();
    case TraceFormat::kJsonLines:
    case TraceFormat::kYaml: {
      // One flow mapping per job, nested by the dotted paths (tasks.*, checkpoint.*); YAML takes
      // the same text as JSON when every string is quoted.
      const bool json = format_ == TraceFormat::kJsonLines;
      out_ << (json ? "{" : "  - {");
      std::string open;  // the nested object being written ("tasks"), or ""
      bool first = true, first_inner = true;
      for (const Field& f : *fields) {
        if (f.text.empty()) continue;
        std::string path = f.path;
        size_t dot = path.find('.');
        std::string outer = dot == std::string::npos ? "" : path.substr(0, dot);
        std::string key = dot == std::string::npos ? path : path.substr(dot + 1);
        if (outer != open) {
          if (!open.empty()) out_ << "}";
          if (!outer.empty()) {
            out_ << (first ? "" : ", ");
            JsonString(outer, out_);
            out_ << ": {";
            first = false;
            first_inner = true;
          }
          open = outer;
        }
        bool& comma = open.empty() ? first : first_inner;
        out_ << (comma ? "" : ", ");
        comma = false;
        JsonString(key, out_);
        out_ << ": ";
        if (json && Numeric(path)) {
          out_ << f.text;
        } else {
          JsonString(f.text, out_);
        }
      }
      if (!open.empty()) out_ << "}";
      out_ << "}\n";
      return Status::Ok();
    }
  }
  return Status::Ok();
}

}  // namespace allot
