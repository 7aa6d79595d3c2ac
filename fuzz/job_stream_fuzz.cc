// `allot sim`'s jobs files (spec/job_stream.h): the same bytes read as JSON Lines and as CSV,
// through a 16-byte buffer. JSON Lines is read twice, by the direct reader of flat records and
// with every record through the scenario reader's tree: both must give the same jobs, or the
// same error. A difference aborts (a finding).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "spec/job_stream.h"

namespace {

struct Read {
  std::vector<allot::ScenarioJob> jobs;
  std::string error;
};

Read ReadAll(const std::string& text, allot::JobFileFormat format, allot::JobStreamOptions options) {
  std::istringstream in(text);
  Read r;
  allot::Status s = allot::ReadJobStream(in, format, "jobs", [&](allot::ScenarioJob&& j) {
    r.jobs.push_back(std::move(j));
    return allot::Status::Ok();
  }, options);
  if (!s.ok()) r.error = s.message();
  return r;
}

std::vector<std::string> Mig(const allot::ScenarioJob& j) {
  std::vector<std::string> m = j.mig;
  m.resize(j.spec.groups.size());
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Read direct = ReadAll(text, allot::JobFileFormat::kJsonLines, {.buffer_bytes = 16});
  Read tree = ReadAll(text, allot::JobFileFormat::kJsonLines, {.direct = false});
  if (direct.error != tree.error || direct.jobs.size() != tree.jobs.size()) {
    std::fprintf(stderr, "job_stream: the readers differ: direct %zu jobs, error '%s'; tree %zu jobs, error '%s'\n",
                 direct.jobs.size(), direct.error.c_str(), tree.jobs.size(), tree.error.c_str());
    std::abort();
  }
  for (size_t i = 0; i < direct.jobs.size(); ++i) {
    const allot::ScenarioJob& a = direct.jobs[i];
    const allot::ScenarioJob& b = tree.jobs[i];
    if (!(a.spec == b.spec) || a.tenant != b.tenant || a.gpu_model != b.gpu_model || Mig(a) != Mig(b) || a.line != b.line) {
      std::fprintf(stderr, "job_stream: the readers differ on job %zu (line %d and %d)\n", i, static_cast<int>(a.line),
                   static_cast<int>(b.line));
      std::abort();
    }
  }
  (void)ReadAll(text, allot::JobFileFormat::kCsv, {.buffer_bytes = 16});
  return 0;
}
