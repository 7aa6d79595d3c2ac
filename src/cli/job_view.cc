#include "cli/job_view.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "core/calendar.h"

namespace allot::cli {
namespace {

// The API's instants are Unix seconds; these are the job's (reserved_start: explain's EASY
// backfill hold).
bool IsInstant(const std::string& key) {
  return key == "submitted" || key == "started" || key == "finished" || key == "reserved_start";
}

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

// A job's sizing by workload (docs/sizing.md): per sized task group, the model as written, the
// estimate by term, the allocation chosen and why.
void PrintSizing(std::ostream& out, const Json& sizing) {
  for (const Json& s : sizing) {
    const Json& m = s["model"];
    const Json& e = s["estimate"];
    out << "sizing: tasks[" << Str(s["group"]) << "] " << (m.contains("name") ? Str(m["name"]) + " " : "") << "(" << Str(m["parameters"])
        << " " << Str(m["precision"]) << ", " << Str(m["mode"]) << ", context " << Str(m["context"]) << ", batch " << Str(m["batch"])
        << (m.value("override", false) ? ", override" : "") << ")\n";
    out << "  estimate: " << Str(e["total"]) << " = weights " << Str(e["weights"]) << " + KV cache " << Str(e["kv_cache"])
        << " + training " << Str(e["training"]) << " + overhead " << Str(e["overhead"]) << "\n";
    out << "  allocation: " << Shown(Str(s["allocation"])) << "\n";
    out << "  why: " << Shown(Str(s["why"])) << "\n";
  }
}

std::string Relative(int64_t delta_ms) {
  const int64_t s = std::llabs(delta_ms) / 1000;
  if (s == 0) return "now";
  std::string n = s < 60      ? std::to_string(s) + "s"
                  : s < 3600  ? std::to_string(s / 60) + "m"
                  : s < 86400 ? std::to_string(s / 3600) + "h"
                              : std::to_string(s / 86400) + "d";
  return delta_ms < 0 ? "in " + n : n + " ago";
}

}  // namespace

std::string ShownTime(const Json& v, int64_t now_ms) {
  if (!v.is_string()) return "-";
  auto ms = ParseRfc3339(v.get<std::string>());
  if (!ms) return Shown(v.get<std::string>());
  return FormatRfc3339(*ms) + " (" + Relative(now_ms - *ms) + ")";
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string ShownInstant(double seconds, int64_t now_ms) {
  const int64_t ms = std::llround(seconds * 1000);
  return FormatRfc3339(ms) + " (" + Relative(now_ms - ms) + ")";
}

void PrintJobView(std::ostream& out, const Json& job) {
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (const auto& [key, value] : job.items()) {
    if (key == "placement") continue;
    if (IsInstant(key) && value.is_number()) {
      out << key << ": " << ShownInstant(value.get<double>(), now_ms) << "\n";
      continue;
    }
    if (key == "sizing" && value.is_array()) {
      PrintSizing(out, value);
      continue;
    }
    if (key == "environment" && value.is_object()) {
      PrintEnvironment(out, value);
      continue;
    }
    if (key == "template" && value.is_object()) {  // docs/templates.md
      out << "template: " << Str(value.value("name", Json(""))) << " (tenant " << Str(value.value("tenant", Json(""))) << ")\n";
      continue;
    }
    if (key == "hardened" && value.is_array()) {  // a noisy-neighbour hardening
      out << "hardened:\n";
      for (const Json& line : value) out << "  " << Str(line) << "\n";
      continue;
    }
    if (key == "interference" && value.is_array()) {  // noisy-neighbour responses in force
      out << "interference:\n";
      for (const Json& r : value) {
        out << "  " << Str(r.value("why", Json(""))) << "; since "
            << ShownInstant(r.value("since", 0.0), now_ms) << "\n";
      }
      continue;
    }
    out << Shown(key) << ": " << Str(value) << "\n";
  }
}

void PrintTenantExplanation(const Json& e) {
  for (const Json& line : e["summary"]) std::cout << Str(line) << "\n";
  auto tenant = [](const Json& t) { return t.is_null() ? std::string("(not visible to you)") : Str(t); };
  std::vector<std::vector<std::string>> rows;
  for (const Json& s : e["shares"]) {
    rows.push_back({Str(s["resource"]), Str(s["usage"]), Str(s["guaranteed_usage"]), s.contains("guarantee") ? Str(s["guarantee"]) : "-",
                    s.contains("max") ? Str(s["max"]) : "-", Str(s["capacity"]), Str(s["share"])});
  }
  std::cout << "\n";
  PrintTable({"RESOURCE", "HOLDS", "AS GUARANTEED", "GUARANTEE", "MAX", "FLEET", "SHARE"}, rows);
  rows.clear();
  for (const Json& s : e["siblings"]) {
    rows.push_back({tenant(s["tenant"]) + (s["self"].get<bool>() ? " (this tenant)" : ""),
                    s["dominant_resource"].is_null() ? "-" : Str(s["dominant_resource"]), Str(s["dominant_share"])});
  }
  std::cout << "\n";
  PrintTable({"SERVED IN THIS ORDER", "DOMINANT", "WEIGHTED SHARE"}, rows);
  rows.clear();
  for (const char* side : {"from", "to"}) {
    for (const Json& loan : e[side[0] == 'f' ? "borrowed" : "lent"]) {
      for (const Json& part : loan[side]) {
        std::string who = part.contains("unguaranteed") ? "capacity no tenant is guaranteed" : tenant(part["tenant"]);
        rows.push_back({side[0] == 'f' ? "borrows" : "lends", Str(loan["resource"]), Str(part["amount"]), who});
      }
    }
  }
  if (!rows.empty()) {
    std::cout << "\n";
    PrintTable({"", "RESOURCE", "AMOUNT", "FROM / TO"}, rows);
  }
  rows.clear();
  for (const Json& j : e["reclaim_first"]) {
    std::string gpus = "-";
    for (const auto& [k, v] : j["resources"].items()) {
      if (k.rfind("gpu/", 0) == 0) gpus = Str(v) + " " + k.substr(4);
    }
    rows.push_back({Str(j["job"]), Str(j["tenant"]), gpus, std::to_string(j["priority"].get<int>()),
                    std::to_string(j["rank"].get<int>()) + " of " + std::to_string(j["of"].get<int>()) + " (" + Str(j["order"]) + ")"});
  }
  if (!rows.empty()) {
    std::cout << "\n";
    PrintTable({"RECLAIMED FIRST", "TENANT", "GPUS", "PRIORITY", "IN RECLAIM ORDER"}, rows);
  }
}

}  // namespace allot::cli
