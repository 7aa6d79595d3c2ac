// CSV readers for the openb node and pod lists.
#include <charconv>
#include <fstream>
#include <map>
#include <tuple>

#include "core/strings.h"
#include "placement/share_node.h"
#include "sim/openb.h"

namespace allot {
namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out = Split(line, ',');
  if (!out.back().empty() && out.back().back() == '\r') out.back().pop_back();
  return out;
}

class CsvFile {
 public:
  // Reads the header; `required` columns must be present.
  static Result<CsvFile> Open(std::istream& in, const std::string& path, const std::vector<std::string>& required) {
    CsvFile f(in);
    f.path_ = path;
    std::string header;
    if (!std::getline(f.in_, header)) return Err(InvalidArgument(path + ":1: empty file; expected a header row"));
    f.columns_ = SplitCsv(header);
    f.line_ = 1;
    for (size_t i = 0; i < f.columns_.size(); ++i) f.index_[f.columns_[i]] = i;
    for (const std::string& c : required) {
      if (!f.index_.count(c)) return Err(InvalidArgument(path + ":1: header: missing column '" + c + "'"));
    }
    return f;
  }
  // The next non-empty row; false at the end.
  Result<bool> Next() {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_;
      if (line.empty() || line == "\r") continue;
      row_ = SplitCsv(line);
      if (row_.size() != columns_.size()) {
        return Err(InvalidArgument(Where() + std::to_string(row_.size()) + " fields; expected " +
                                   std::to_string(columns_.size()) + " as in the header"));
      }
      return true;
    }
    return false;
  }
  bool Has(const std::string& column) const { return index_.count(column) > 0; }
  const std::string& Text(const std::string& column) const { return row_[index_.at(column)]; }
  Result<int64_t> Int(const std::string& column, int64_t lo, int64_t hi) const {
    const std::string& v = Text(column);
    int64_t x = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi) {
      return Err(InvalidArgument(Where() + column + ": '" + v + "'; expected an integer from " + std::to_string(lo) +
                                 " to " + std::to_string(hi)));
    }
    return x;
  }
  std::string Where() const { return path_ + ":" + std::to_string(line_) + ": "; }

 private:
  explicit CsvFile(std::istream& in) : in_(in) {}

  std::string path_;
  std::istream& in_;
  std::vector<std::string> columns_;
  std::map<std::string, size_t> index_;
  std::vector<std::string> row_;
  int64_t line_ = 0;
};

constexpr int64_t kMaxMilli = int64_t{1} << 40;

}  // namespace

Result<std::vector<OpenbNode>> ReadOpenbNodes(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(InvalidArgument(path + ": cannot open"));
  return ReadOpenbNodes(in, path);
}

Result<std::vector<OpenbPod>> ReadOpenbPods(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(InvalidArgument(path + ": cannot open"));
  return ReadOpenbPods(in, path);
}

Result<std::vector<OpenbNode>> ReadOpenbNodes(std::istream& in, const std::string& path) {
  auto f = CsvFile::Open(in, path, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!f) return Err(f.error());
  std::vector<OpenbNode> nodes;
  while (true) {
    auto more = f->Next();
    if (!more) return Err(more.error());
    if (!*more) break;
    OpenbNode n;
    n.name = f->Text("sn");
    if (n.name.empty()) return Err(InvalidArgument(f->Where() + "sn: empty; expected a node name"));
    auto cpu = f->Int("cpu_milli", 0, kMaxMilli);
    auto mem = f->Int("memory_mib", 0, kMaxMilli);
    auto gpus = f->Int("gpu", 0, kMaxShareGpus);
    if (!cpu) return Err(cpu.error());
    if (!mem) return Err(mem.error());
    if (!gpus) return Err(gpus.error());
    n.cpu = *cpu;
    n.memory = *mem;
    n.gpus = static_cast<int>(*gpus);
    n.model = f->Text("model");
    if (n.gpus > 0 && n.model.empty()) {
      return Err(InvalidArgument(f->Where() + "model: empty; expected the GPU model of a node with GPUs"));
    }
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) return Err(InvalidArgument(path + ": no nodes; expected at least one row"));
  return nodes;
}

Result<std::vector<OpenbPod>> ReadOpenbPods(std::istream& in, const std::string& path) {
  auto f = CsvFile::Open(in, path, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"});
  if (!f) return Err(f.error());
  bool has_spec = f->Has("gpu_spec");
  bool has_creation = f->Has("creation_time"), has_deletion = f->Has("deletion_time");
  constexpr int64_t kMaxSeconds = int64_t{3650} * 86400;
  std::vector<OpenbPod> pods;
  while (true) {
    auto more = f->Next();
    if (!more) return Err(more.error());
    if (!*more) break;
    OpenbPod p;
    p.name = f->Text("name");
    if (p.name.empty()) return Err(InvalidArgument(f->Where() + "name: empty; expected a pod name"));
    auto cpu = f->Int("cpu_milli", 0, kMaxMilli);
    auto mem = f->Int("memory_mib", 0, kMaxMilli);
    auto gpus = f->Int("num_gpu", 0, kMaxShareGpus);
    auto milli = f->Int("gpu_milli", 0, 1000000);  // above 1000 is clamped, as in the reference
    if (!cpu) return Err(cpu.error());
    if (!mem) return Err(mem.error());
    if (!gpus) return Err(gpus.error());
    if (!milli) return Err(milli.error());
    p.cpu = *cpu;
    p.memory = *mem;
    p.num_gpu = static_cast<int>(*gpus);
    p.gpu_milli = static_cast<int32_t>(*milli);
    if (has_spec) p.gpu_spec = f->Text("gpu_spec");
    for (auto [has, column, field] : {std::tuple{has_creation, "creation_time", &p.creation_s},
                                      std::tuple{has_deletion, "deletion_time", &p.deletion_s}}) {
      if (!has || f->Text(column).empty()) continue;
      auto t = f->Int(column, 0, kMaxSeconds);
      if (!t) return Err(t.error());
      *field = *t;
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

}  // namespace allot
