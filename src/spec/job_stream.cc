#include "spec/job_stream.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <fstream>
#include <vector>

#include "core/names.h"
#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/node.h"
#include "spec/field_limits.h"
#include "spec/field_reader.h"

namespace allot {
namespace {

namespace od = simdjson::ondemand;

constexpr int kFlatFields = static_cast<int>(std::size(kFlatJobFields));
enum Field : int {
  kName, kTenant, kSubmit, kDuration, kTimeLimit, kCount, kGpus, kCpu, kMemory, kGpuModel, kTopology,
  kPriority, kKind, kMinRuntime, kCheckpointInterval, kCheckpointGrace, kGrace, kReservation,
};
static_assert(kReservation + 1 == kFlatFields);

int FieldIndex(std::string_view path) {
  static const std::array<std::string_view, kFlatFields> names = [] {
    std::array<std::string_view, kFlatFields> out;
    for (int i = 0; i < kFlatFields; ++i) out[i] = kFlatJobFields[i];
    return out;
  }();
  for (int i = 0; i < kFlatFields; ++i) {
    if (path == names[i]) return i;
  }
  return -1;
}

// Where a record is, for its errors: "FILE:LINE", spelled only when one is reported.
struct Where {
  const std::string& file;
  int64_t line;
  operator std::string() const { return file + ":" + std::to_string(line); }
};
std::string operator+(const Where& w, const char* s) { return std::string(w) + s; }

// One flat job as written: each field's text (a view into the line or the parser), and
// whether a `tasks` and a `checkpoint` object were given.
struct FlatRecord {
  std::array<std::string_view, kFlatFields> text;
  uint32_t present = 0;
  bool tasks = false, checkpoint = false;
  bool Has(int f) const { return (present >> f) & 1; }
  void Set(int f, std::string_view v) {
    text[f] = v;
    present |= uint32_t{1} << f;
    if (f >= kCount && f <= kGpuModel) tasks = true;
    if (f == kCheckpointInterval || f == kCheckpointGrace) checkpoint = true;
  }
};

// Reads lines from a stream through one buffer; a line that does not fit grows it. The bytes
// after a line stay readable up to SIMDJSON_PADDING past the buffer, as simdjson asks.
class LineReader {
 public:
  LineReader(std::istream& in, size_t size) : in_(in), buf_(std::max<size_t>(size, 16) + simdjson::SIMDJSON_PADDING) {}

  // The next line without its end ("\n" or "\r\n") nor, on the first line, a UTF-8 byte order
  // mark; false at the end of the stream.
  bool Next(std::string_view& line) {
    if (!NextRaw(line)) return false;
    if (line_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    return true;
  }

 private:
  bool NextRaw(std::string_view& line) {
    for (;;) {
      if (const void* nl = std::memchr(buf_.data() + pos_, '\n', end_ - pos_)) {
        size_t at = static_cast<const char*>(nl) - buf_.data();
        line = Cut(at);
        pos_ = at + 1;
        return true;
      }
      if (eof_) {
        if (pos_ == end_) return false;
        line = Cut(end_);
        pos_ = end_;
        return true;
      }
      Fill();
    }
  }

 public:
  int64_t line_number() const { return line_; }
  // Bytes readable from `p` on: the rest of the buffer and its padding.
  size_t CapacityFrom(const char* p) const { return buf_.data() + buf_.size() - p; }

 private:
  std::string_view Cut(size_t at) {
    ++line_;
    size_t n = at - pos_;
    if (n > 0 && buf_[pos_ + n - 1] == '\r') --n;
    return {buf_.data() + pos_, n};
  }
  void Fill() {
    const size_t usable = buf_.size() - simdjson::SIMDJSON_PADDING;
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
    if (end_ == usable) buf_.resize(usable * 2 + simdjson::SIMDJSON_PADDING);  // one line fills it
    in_.read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - simdjson::SIMDJSON_PADDING - end_));
    end_ += static_cast<size_t>(in_.gcount());
    if (!in_) eof_ = true;
  }

  std::istream& in_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  int64_t line_ = 0;
};

// --- The direct reader of a flat record: ReadJob's checks, in its order, with its messages ---

Status Bad(const std::string& where, const std::string& path, const std::string& msg) {
  return InvalidArgument(where + ": " + path + ": " + msg);
}
Status Bad(const Where& where, const std::string& path, const std::string& msg) { return Bad(std::string(where), path, msg); }


// Where a flat record's fields are, for its errors: one line for a JSON or CSV record; each
// field's own line, and paths under "jobs[3].", for a scenario's YAML item.
struct Locator {
  const std::string& file;
  int64_t line;  // the record's (a YAML item: its mapping's)
  std::string_view prefix = {};
  const std::array<int64_t, kFlatFields>* field_lines = nullptr;
  int64_t checkpoint_line = 0;  // the checkpoint mapping's (YAML)
  int64_t LineOf(int f) const { return field_lines ? (*field_lines)[f] : line; }
};

class FlatReader {
 public:
  FlatReader(const FlatRecord& r, const Where& where) : r_(r), at_{where.file, where.line} {}
  FlatReader(const FlatRecord& r, const Locator& at) : r_(r), at_(at) {}

  Result<ScenarioJob> Read() {
    ScenarioJob j;
    j.line = static_cast<int>(at_.line);
    JobSpec& s = j.spec;
    if (!r_.Has(kName)) return Err(RecordError(at_.line, "name", "required"));
    if (!r_.Has(kTenant)) return Err(RecordError(at_.line, "tenant", "required"));
    if (!r_.tasks) return Err(RecordError(at_.line, "tasks", "required"));
    if (!r_.Has(kDuration)) return Err(RecordError(at_.line, "duration", "required (the simulator runs each job for its duration)"));
    s.name = r_.text[kName];
    if (Status c = CheckName(Path(kName), s.name); !c.ok()) return Err(At(kName, c));
    j.tenant = r_.text[kTenant];
    if (Status c = CheckTenantPath(Path(kTenant), j.tenant); !c.ok()) return Err(At(kTenant, c));
    // Ranges as the job reader words them; plain strings, not built for every record.
    static constexpr const char* kDurations = "a duration from 1ms to 3650d, e.g. 90s or 2h";
    static constexpr const char* kGraceRange = "a duration from 0s to 1d, e.g. 30s";
    if (r_.Has(kSubmit)) TRY_ASSIGN(s.submit_ms, Bounded(kSubmit, ParseDurationMs, 0, kMaxDurationMs, "a time from 0s to 3650d"));
    TRY_ASSIGN(s.duration_ms, Bounded(kDuration, ParseDurationMs, 1, kMaxDurationMs, kDurations));
    if (r_.Has(kTimeLimit)) {
      TRY_ASSIGN(s.time_limit_ms, Bounded(kTimeLimit, ParseDurationMs, 1, kMaxDurationMs, kDurations));
      if (s.time_limit_ms < s.duration_ms) {
        return Err(FieldError(kTimeLimit, "'" + Text(kTimeLimit) + "' is shorter than the duration; expected at least the duration "
                                             "(the simulator runs each job for its duration)"));
      }
    }
    // No MIG profile asked: `mig` stays empty (ResolveJob reads a missing entry as none), one
    // allocation a job fewer over a month of them.
    TaskGroup g;
    if (r_.Has(kCount)) {
      auto c = ParseInteger(r_.text[kCount], 1, 100000);
      if (!c) return Err(FieldError(kCount, "'" + Text(kCount) + "' is not valid; expected an integer from 1 to 100000"));
      g.count = static_cast<int>(*c);
    }
    if (r_.Has(kGpus)) TRY_STATUS(ReadGpus(g));
    if (r_.Has(kCpu)) TRY_ASSIGN(g.cpu, Bounded(kCpu, ParseMilli, 0, kMaxTaskCpuMilli, "CPUs from 0 to 10000, e.g. 4 or 0.5"));
    if (r_.Has(kMemory)) {
      TRY_ASSIGN(g.memory, Bounded(kMemory, ParseMemoryMiB, 0, kMaxTaskMemoryMiB, "memory from 0Mi to 64Ti, e.g. 16Gi"));
    }
    if (r_.Has(kGpuModel)) {
      j.gpu_model = r_.text[kGpuModel];
      if (!FindGpuModel(j.gpu_model)) return Err(FieldError(kGpuModel, "unknown GPU model '" + j.gpu_model + "'"));
    }
    s.groups.push_back(g);
    if (r_.Has(kTopology)) {
      auto t = ParseTopology(r_.text[kTopology]);
      if (!t) return Err(FieldError(kTopology, "'" + Text(kTopology) + "' is not valid; expected none, nvlink, rack or zone"));
      s.topology = *t;
    }
    if (r_.Has(kPriority)) TRY_ASSIGN(s.priority, Priority());
    if (r_.Has(kReservation)) {
      s.reservation = r_.text[kReservation];
      if (Status c = CheckName(Path(kReservation), s.reservation); !c.ok()) return Err(At(kReservation, c));
    }
    if (r_.Has(kKind)) {
      auto k = ParseJobKind(r_.text[kKind]);
      if (!k) return Err(FieldError(kKind, "'" + Text(kKind) + "' is not valid; expected batch, training, inference or interactive"));
      s.kind = *k;
    }
    if (r_.Has(kMinRuntime)) {
      TRY_ASSIGN(s.min_runtime_ms, Bounded(kMinRuntime, ParseDurationMs, 0, kMaxDurationMs, "a duration from 0s to 3650d"));
    }
    if (r_.Has(kGrace)) TRY_ASSIGN(s.grace_ms, Bounded(kGrace, ParseDurationMs, 0, kMaxGraceMs, kGraceRange));
    if (r_.checkpoint) {
      if (!r_.Has(kCheckpointInterval)) return Err(RecordError(at_.checkpoint_line ? at_.checkpoint_line : at_.line, "checkpoint.interval", "required"));
      TRY_ASSIGN(s.checkpoint_interval_ms, Bounded(kCheckpointInterval, ParseDurationMs, 1, kMaxDurationMs, kDurations));
      if (r_.Has(kCheckpointGrace)) TRY_ASSIGN(s.grace_ms, Bounded(kCheckpointGrace, ParseDurationMs, 0, kMaxGraceMs, kGraceRange));
    }
    return j;
  }

 private:
  std::string Text(int f) const { return std::string(r_.text[f]); }
  std::string Path(int f) const { return std::string(at_.prefix) + kFlatJobFields[f]; }
  std::string Line(int64_t line) const { return at_.file + ":" + std::to_string(line); }
  Status At(int f, const Status& checked) const { return InvalidArgument(Line(at_.LineOf(f)) + ": " + checked.message()); }
  Status FieldError(int f, const std::string& msg) const { return Bad(Line(at_.LineOf(f)), Path(f), msg); }
  Status RecordError(int64_t line, const char* path, const std::string& msg) const {
    return Bad(Line(line), std::string(at_.prefix) + path, msg);
  }

  template <class Parse>
  Result<int64_t> Bounded(int f, Parse parse, int64_t lo, int64_t hi, const char* range) const {
    auto v = parse(r_.text[f]);
    if (!v) return Err(FieldError(f, v.error().message() + "; expected " + std::string(range)));
    if (*v < lo || *v > hi) return Err(FieldError(f, "'" + Text(f) + "' is out of range; expected " + std::string(range)));
    return *v;
  }

  Status ReadGpus(TaskGroup& g) const {
    const std::string text = Text(kGpus);
    auto v = ParseGpus(text);
    if (!v) return FieldError(kGpus, v.error().message());
    g.gpu = *v;
    if (g.gpu > kGpuUnit && g.gpu % kGpuUnit != 0) {
      return FieldError(kGpus, "'" + text + "' is neither whole GPUs nor a share of one; expected an integer or a fraction below 1");
    }
    if (text != "0" && g.gpu < kMinGpuShare) {
      return FieldError(kGpus, "'" + text + "' is less than the smallest GPU share; expected 0 or from 0.001 to " +
                                           std::to_string(kMaxGpusPerNode));
    }
    if (g.gpu > kMaxGpusPerNode * kGpuUnit) {
      return FieldError(kGpus, "'" + text + "' is more than one node can hold; expected at most " +
                                           std::to_string(kMaxGpusPerNode) + " (use count for more tasks)");
    }
    return Status::Ok();
  }

  Result<int32_t> Priority() const {
    std::string_view s = r_.text[kPriority];
    if (s == "low") return kPriorityLow;
    if (s == "normal") return kPriorityNormal;
    if (s == "high") return kPriorityHigh;
    auto v = ParseInteger(s, -kMaxPriority, kMaxPriority);
    if (!v) {
      return Err(FieldError(kPriority, "'" + Text(kPriority) + "' is not valid; expected low, normal, high or an integer from -1000000 to 1000000"));
    }
    return static_cast<int32_t>(*v);
  }

  const FlatRecord& r_;
  const Locator at_;
};

// --- JSON Lines ---

std::string JsonError(const std::string& where, simdjson::error_code e) {
  std::string what = simdjson::error_message(e);
  if (!what.empty() && what.back() == '.') what.pop_back();
  return where + ": malformed JSON: " + what + "; expected one JSON object a line";
}

// A JSON scalar's text as the YAML tree would hold it: strings unescaped, numbers as written,
// true and false. Returns false for null, objects and arrays (not flat).
bool ScalarText(od::value v, std::string_view& out, simdjson::error_code& err) {
  od::json_type t;
  if ((err = v.type().get(t))) return false;
  switch (t) {
    case od::json_type::string:
      err = v.get_string().get(out);
      return !err;
    case od::json_type::number: {
      out = v.raw_json_token();
      while (!out.empty() && (out.back() == ' ' || out.back() == '\t' || out.back() == '\r' || out.back() == '\n')) out.remove_suffix(1);
      return true;
    }
    case od::json_type::boolean: {
      bool b = false;
      err = v.get_bool().get(b);
      out = b ? "true" : "false";
      return !err;
    }
    default:
      return false;
  }
}

enum class Fill { kFlat, kNotFlat, kError };

// Fills `r` from a record's fields. kNotFlat: a field the direct reader does not take.
Fill FillFlat(od::object obj, FlatRecord& r, const Where& where, Status& error) {
  simdjson::error_code err = simdjson::SUCCESS;
  auto fail_json = [&](simdjson::error_code e) {
    error = InvalidArgument(JsonError(where, e));
    return Fill::kError;
  };
  // A key given twice is refused before its value is read, as the tree reader does.
  auto duplicate = [&](const std::string& name) {
    error = Bad(where, name, "duplicate key; expected each key once in an object");
    return Fill::kError;
  };
  for (auto field : obj) {
    std::string_view key;
    if ((err = field.unescaped_key().get(key))) return fail_json(err);
    od::value v;
    if ((err = field.value().get(v))) return fail_json(err);
    if (key == "tasks" || key == "checkpoint") {
      bool& seen = key == "tasks" ? r.tasks : r.checkpoint;
      if (seen) return duplicate(std::string(key));
      seen = true;
      od::object inner;
      if (v.get_object().get(inner)) return Fill::kNotFlat;
      for (auto f : inner) {
        std::string_view k;
        if ((err = f.unescaped_key().get(k))) return fail_json(err);
        std::string path = std::string(key) + "." + std::string(k);
        int i = FieldIndex(path);
        if (i < 0) return Fill::kNotFlat;
        if (r.Has(i)) return duplicate(path);
        od::value iv;
        if ((err = f.value().get(iv))) return fail_json(err);
        std::string_view text;
        if (!ScalarText(iv, text, err)) return err ? fail_json(err) : Fill::kNotFlat;
        r.Set(i, text);
      }
      continue;
    }
    int i = FieldIndex(key);
    if (i < 0 || std::string_view(kFlatJobFields[i]).find('.') != std::string_view::npos) return Fill::kNotFlat;
    if (r.Has(i)) return duplicate(std::string(key));
    std::string_view text;
    if (!ScalarText(v, text, err)) return err ? fail_json(err) : Fill::kNotFlat;
    r.Set(i, text);
  }
  return Fill::kFlat;
}

constexpr int kMaxDepth = 64;  // as an API body (server/body_reader.h)

// The record as the YAML tree server/body_reader.h builds from JSON: scalars spelled as
// written, null as a null node, a key twice refused (named by its path).
Result<YAML::Node> ToNode(od::value v, const std::string& path, int depth, const std::string& where) {
  od::json_type t;
  if (auto e = v.type().get(t)) return Err(InvalidArgument(JsonError(where, e)));
  if (t == od::json_type::object || t == od::json_type::array) {
    if (depth >= kMaxDepth) {
      return Err(Bad(where, path, "nested deeper than " + std::to_string(kMaxDepth) + " levels; expected a flatter object"));
    }
  }
  if (t == od::json_type::object) {
    YAML::Node n(YAML::NodeType::Map);
    od::object obj;
    if (auto e = v.get_object().get(obj)) return Err(InvalidArgument(JsonError(where, e)));
    std::vector<std::string> keys;
    for (auto f : obj) {
      std::string_view k;
      if (auto e = f.unescaped_key().get(k)) return Err(InvalidArgument(JsonError(where, e)));
      std::string key(k), p = path.empty() ? key : path + "." + key;
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        return Err(Bad(where, p, "duplicate key; expected each key once in an object"));
      }
      keys.push_back(key);
      od::value child;
      if (auto e = f.value().get(child)) return Err(InvalidArgument(JsonError(where, e)));
      auto c = ToNode(child, p, depth + 1, where);
      if (!c) return c;
      n[key] = *c;
    }
    return n;
  }
  if (t == od::json_type::array) {
    YAML::Node n(YAML::NodeType::Sequence);
    od::array arr;
    if (auto e = v.get_array().get(arr)) return Err(InvalidArgument(JsonError(where, e)));
    size_t i = 0;
    for (auto el : arr) {
      od::value child;
      if (auto e = el.get(child)) return Err(InvalidArgument(JsonError(where, e)));
      auto c = ToNode(child, path + "[" + std::to_string(i++) + "]", depth + 1, where);
      if (!c) return c;
      n.push_back(*c);
    }
    return n;
  }
  if (t == od::json_type::null) {
    if (auto e = v.is_null().error()) return Err(InvalidArgument(JsonError(where, e)));
    return YAML::Node(YAML::NodeType::Null);
  }
  std::string_view text;
  simdjson::error_code err = simdjson::SUCCESS;
  if (!ScalarText(v, text, err)) return Err(InvalidArgument(JsonError(where, err)));
  return YAML::Node(std::string(text));
}

// ReadJob's messages name fields under "job."; a line names the record itself.
Status Unprefixed(const Status& s, const std::string& where) {
  const std::string prefix = where + ": job.";
  if (s.message().rfind(prefix, 0) != 0) return s;
  return InvalidArgument(where + ": " + s.message().substr(prefix.size()));
}

// A record the direct reader does not take (a JSON object of other fields, a CSV row naming a
// template), as a YAML tree through the scenario's job reader, with its messages.
Status ReadTreeRecord(const YAML::Node& node, const Where& where, const JobSink& sink, const JobStreamOptions& options) {
  YamlReader rd{std::string(where)};
  rd.set_templates(options.templates);
  Result<std::vector<ScenarioJob>> jobs = Err(Internal("unread"));
  try {
    jobs = ReadJob(rd, node, "job", /*simulated=*/true);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(where + ": " + e.msg);
  }
  if (!jobs) return Unprefixed(jobs.error(), std::string(where));
  for (ScenarioJob& j : *jobs) {
    j.line = static_cast<int>(where.line);
    if (Status s = sink(std::move(j)); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ReadJsonLines(LineReader& lines, const std::string& name, const JobSink& sink, const JobStreamOptions& options) {
  od::parser parser;
  std::string_view line;
  while (lines.Next(line)) {
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;  // a blank line
    const Where where{name, lines.line_number()};
    od::document doc;
    simdjson::padded_string_view text(line.data(), line.size(), lines.CapacityFrom(line.data()));
    if (auto e = parser.iterate(text).get(doc)) return InvalidArgument(JsonError(where, e));
    od::object obj;
    if (auto e = doc.get_object().get(obj)) {
      if (e == simdjson::INCORRECT_TYPE) return InvalidArgument(where + ": expected a JSON object (one job a line)");
      return InvalidArgument(JsonError(where, e));
    }
    FlatRecord r;
    Status error = Status::Ok();
    Fill fill = options.direct ? FillFlat(obj, r, where, error) : Fill::kNotFlat;
    if (fill == Fill::kError) return error;
    if (fill == Fill::kFlat) {
      if (!doc.current_location().error()) return InvalidArgument(where + ": text after the JSON object; expected one JSON object a line");
      auto job = FlatReader(r, where).Read();
      if (!job) return job.error();
      if (Status s = sink(std::move(*job)); !s.ok()) return s;
      continue;
    }
    // Not flat: the whole record as a YAML tree, through the scenario reader.
    doc.rewind();
    od::value root;
    if (auto e = doc.get_value().get(root)) return InvalidArgument(JsonError(where, e));
    auto node = ToNode(root, "", 0, std::string(where));
    if (!node) return node.error();
    if (!doc.current_location().error()) return InvalidArgument(where + ": text after the JSON object; expected one JSON object a line");
    if (Status s = ReadTreeRecord(*node, where, sink, options); !s.ok()) return s;
  }
  return Status::Ok();
}

// --- CSV ---

// Splits a row into cells: commas separate, a cell may be quoted ("a ""b""" is a "b"), no
// line breaks in a cell. Views point into `line` or, for a quoted cell with "", into `scratch` (a
// deque: a cell added does not move those before it, whose views a vector would leave dangling).
Status SplitRow(std::string_view line, std::vector<std::string_view>& cells, std::deque<std::string>& scratch, const Where& where) {
  cells.clear();
  scratch.clear();
  size_t i = 0;
  for (;;) {
    if (i < line.size() && line[i] == '"') {
      std::string cell;
      size_t j = i + 1;
      bool escaped = false;
      for (;; ++j) {
        if (j >= line.size()) return InvalidArgument(where + ": cell " + std::to_string(cells.size() + 1) + ": a quote is not closed; expected \"…\" on one line");
        if (line[j] != '"') continue;
        if (j + 1 < line.size() && line[j + 1] == '"') {
          escaped = true;
          ++j;
          continue;
        }
        break;
      }
      std::string_view raw = line.substr(i + 1, j - i - 1);
      if (escaped) {
        for (size_t k = 0; k < raw.size(); ++k) {
          cell += raw[k];
          if (raw[k] == '"') ++k;
        }
        scratch.push_back(std::move(cell));
        cells.push_back(scratch.back());
      } else {
        cells.push_back(raw);
      }
      i = j + 1;
      if (i < line.size() && line[i] != ',') return InvalidArgument(where + ": cell " + std::to_string(cells.size()) + ": text after a closing quote; expected a comma");
    } else {
      size_t comma = line.find(',', i);
      size_t end = comma == std::string_view::npos ? line.size() : comma;
      cells.push_back(line.substr(i, end - i));
      i = end;
    }
    if (i >= line.size()) break;
    ++i;  // the comma
    if (i == line.size()) {
      cells.push_back({});
      break;
    }
  }
  return Status::Ok();
}

// A CSV column beside the flat fields: `template`, the name of one of the scenario's templates.
// A row naming one is read through the scenario's job reader (the template's fields under the
// row's own), as a JSON Lines record naming one is.
constexpr int kTemplateColumn = kFlatFields;
constexpr const char* kTemplateColumnName = "template";

std::string FieldList() {
  std::string out;
  for (const char* f : kFlatJobFields) out += (out.empty() ? "" : ", ") + std::string(f);
  return out + ", " + kTemplateColumnName;
}

// A row naming a template, as the mapping a scenario's job item would be: `tasks.gpus` under
// `tasks`, an empty cell left out.
YAML::Node RowTree(const std::vector<std::string_view>& cells, const std::vector<int>& columns) {
  YAML::Node n(YAML::NodeType::Map);
  for (size_t c = 0; c < cells.size(); ++c) {
    if (cells[c].empty()) continue;
    const std::string value(cells[c]);
    if (columns[c] == kTemplateColumn) {
      n[kTemplateColumnName] = value;
      continue;
    }
    const std::string_view path = kFlatJobFields[columns[c]];
    const size_t dot = path.find('.');
    if (dot == std::string_view::npos) {
      n[std::string(path)] = value;
    } else {
      n[std::string(path.substr(0, dot))][std::string(path.substr(dot + 1))] = value;
    }
  }
  return n;
}

Status ReadCsv(LineReader& lines, const std::string& name, const JobSink& sink, const JobStreamOptions& options) {
  std::string_view line;
  std::vector<std::string_view> cells;
  std::deque<std::string> scratch;
  // The header: the first line that is not blank.
  std::vector<int> columns;  // field of each column
  while (lines.Next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const Where where{name, lines.line_number()};
    if (Status s = SplitRow(line, cells, scratch, where); !s.ok()) return s;
    uint32_t seen = 0;
    for (size_t c = 0; c < cells.size(); ++c) {
      int f = cells[c] == kTemplateColumnName ? kTemplateColumn : FieldIndex(cells[c]);
      if (f < 0) {
        return InvalidArgument(where + ": header: column " + std::to_string(c + 1) + " '" + std::string(cells[c]) +
                               "' is not a field of a flat job; expected one of: " + FieldList());
      }
      if ((seen >> f) & 1) return InvalidArgument(where + ": header: column '" + std::string(cells[c]) + "' is named twice; expected each once");
      seen |= uint32_t{1} << f;
      columns.push_back(f);
    }
    break;
  }
  if (columns.empty()) return InvalidArgument(name + ":1: empty file; expected a header row naming the columns (" + FieldList() + ")");
  while (lines.Next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const Where where{name, lines.line_number()};
    if (Status s = SplitRow(line, cells, scratch, where); !s.ok()) return s;
    if (cells.size() != columns.size()) {
      return InvalidArgument(where + ": " + std::to_string(cells.size()) + " cells; expected " + std::to_string(columns.size()) +
                             " as in the header");
    }
    bool templated = false;
    for (size_t c = 0; c < cells.size(); ++c) templated |= columns[c] == kTemplateColumn && !cells[c].empty();
    if (templated) {
      if (Status s = ReadTreeRecord(RowTree(cells, columns), where, sink, options); !s.ok()) return s;
      continue;
    }
    FlatRecord r;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (!cells[c].empty() && columns[c] != kTemplateColumn) r.Set(columns[c], cells[c]);  // an empty cell: left out
    }
    auto job = FlatReader(r, where).Read();
    if (!job) return job.error();
    if (Status s = sink(std::move(*job)); !s.ok()) return s;
  }
  return Status::Ok();
}

// The field "outer.key" (tasks.gpus), without building the string.
int NestedIndex(std::string_view outer, std::string_view key) {
  for (int i = 0; i < kFlatFields; ++i) {
    std::string_view f = kFlatJobFields[i];
    if (f.size() == outer.size() + 1 + key.size() && f.substr(0, outer.size()) == outer && f[outer.size()] == '.' &&
        f.substr(outer.size() + 1) == key) {
      return i;
    }
  }
  return -1;
}

}  // namespace

std::optional<Result<ScenarioJob>> ReadFlatYamlJob(const YAML::Node& n, const std::string& file, const std::string& path,
                                                   int line_offset) {
  if (!n.IsMap()) return std::nullopt;
  FlatRecord r;
  std::array<int64_t, kFlatFields> lines{};
  auto line_of = [&](const YAML::Node& x) { return static_cast<int64_t>(x.Mark().line) + 1 + line_offset; };
  const std::string prefix = path + ".";
  Locator at{file, line_of(n), prefix, &lines};
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) return std::nullopt;
    const std::string& key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "tasks" || key == "checkpoint") {
      bool& seen = key == "tasks" ? r.tasks : r.checkpoint;
      if (seen || !v.IsMap()) return std::nullopt;
      seen = true;
      if (key == "checkpoint") at.checkpoint_line = line_of(v);
      for (const auto& inner : v) {
        if (!inner.first.IsScalar() || !inner.second.IsScalar()) return std::nullopt;
        int i = NestedIndex(key, inner.first.Scalar());
        if (i < 0 || r.Has(i)) return std::nullopt;
        r.Set(i, inner.second.Scalar());
        lines[i] = line_of(inner.second);
      }
      continue;
    }
    int i = FieldIndex(key);
    if (i < 0 || std::string_view(kFlatJobFields[i]).find('.') != std::string_view::npos || !v.IsScalar() || r.Has(i)) {
      return std::nullopt;
    }
    r.Set(i, v.Scalar());
    lines[i] = line_of(v);
  }
  return FlatReader(r, at).Read();
}

std::optional<JobFileFormat> JobFileFormatOf(std::string_view path) {
  auto ends = [&](std::string_view ext) {
    return path.size() > ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  if (ends(".jsonl") || ends(".ndjson")) return JobFileFormat::kJsonLines;
  if (ends(".csv")) return JobFileFormat::kCsv;
  return std::nullopt;
}

Status ReadJobStream(std::istream& in, JobFileFormat format, const std::string& name, const JobSink& sink,
                     const JobStreamOptions& options) {
  LineReader lines(in, options.buffer_bytes);
  Status s = format == JobFileFormat::kCsv ? ReadCsv(lines, name, sink, options) : ReadJsonLines(lines, name, sink, options);
  if (s.ok() && in.bad()) return InvalidArgument(name + ": read error after line " + std::to_string(lines.line_number()));
  return s;
}

Status ReadJobFile(const std::string& path, const JobSink& sink, const JobStreamOptions& options) {
  auto format = JobFileFormatOf(path);
  if (!format) return InvalidArgument(path + ": unknown jobs file type; expected a name ending in .jsonl, .ndjson or .csv");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the jobs file");
  return ReadJobStream(in, *format, path, sink, options);
}

}  // namespace allot
