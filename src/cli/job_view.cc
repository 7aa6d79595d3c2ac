#include "cli/job_view.h"

namespace allot::cli {
namespace {

void PrintEnvironment(std::ostream& out, const Json& e) {
  if (e.contains("image")) out << "image: " << Str(e["image"]) << "\n";
  if (e.contains("mounts")) {
    out << "mounts:\n";
    for (const Json& m : e["mounts"]) {
      out << "  " << Str(m["tenant"]) << ":" << Str(m["volume"]) << " \u2192 " << Str(m["path"])
          << (m.value("read_only", false) ? " (ro)" : " (rw)") << "\n";
    }
  }
  if (e.contains("env")) {
    out << "env:\n";
    for (const auto& [name, value] : e["env"].items()) out << "  " << Shown(name) << "=" << Str(value) << "\n";
  }
  if (e.contains("shm_size")) out << "shm_size: " << Str(e["shm_size"]) << "\n";
}

}  // namespace

void PrintJobView(std::ostream& out, const Json& job) {
  for (const auto& [key, value] : job.items()) {
    if (key == "placement") continue;
    if (key == "environment" && value.is_object()) {
      PrintEnvironment(out, value);
      continue;
    }
    out << Shown(key) << ": " << Str(value) << "\n";
  }
}

}  // namespace allot::cli
