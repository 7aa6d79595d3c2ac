// Writes the 30-day scale workload (bench/scale-30d.yaml's generate: block, sim/generate.h) as a
// trace on disk, so that loading it can be measured: DIR/scenario.yaml holds the fleet (6,250
// named nodes) and the tenants (10 orgs, 300 teams), and the jobs either inline (yaml) or in
// DIR/jobs.jsonl or DIR/jobs.csv, which the scenario names in `jobs_file:`.
//
//   trace_gen DIR yaml|jsonl|csv [JOBS_PER_DAY (30000)] [DAYS (30)]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/generate.h"
#include "sim/trace_writer.h"

using namespace allot;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: trace_gen DIR yaml|jsonl|csv [JOBS_PER_DAY] [DAYS]\n");
    return 2;
  }
  const std::string dir = argv[1], format = argv[2];
  GenerateSpec g;
  g.seed = 42;
  g.nodes = 6250;
  g.orgs = 10;
  g.teams = 300;
  g.jobs_per_day = argc > 3 ? std::atoll(argv[3]) : 30000;
  const int64_t days = argc > 4 ? std::atoll(argv[4]) : 30;
  g.days_ms = days * 86400000;
  if (g.jobs_per_day <= 0 || days <= 0) {
    std::fprintf(stderr, "trace_gen: JOBS_PER_DAY and DAYS: expected whole numbers above 0\n");
    return 2;
  }
  TraceFormat f;
  std::string jobs_file;
  if (format == "yaml") {
    f = TraceFormat::kYaml;
  } else if (format == "jsonl") {
    f = TraceFormat::kJsonLines;
    jobs_file = "jobs.jsonl";
  } else if (format == "csv") {
    f = TraceFormat::kCsv;
    jobs_file = "jobs.csv";
  } else {
    std::fprintf(stderr, "trace_gen: format '%s': expected yaml, jsonl or csv\n", format.c_str());
    return 2;
  }
  Scenario sc;
  Generate(g, sc);
  std::filesystem::create_directories(dir);
  std::ofstream scenario(dir + "/scenario.yaml");
  scenario << "description: the 30-day scale workload (seed 42, " << sc.jobs.size() << " jobs) written by bench/load/trace_gen\n";
  if (Status s = WriteFleetAndTenants(sc, scenario); !s.ok()) {
    std::fprintf(stderr, "trace_gen: %s\n", s.message().c_str());
    return 1;
  }
  std::ofstream jobs_out;
  if (!jobs_file.empty()) {
    scenario << "jobs_file: " << jobs_file << "\n";
    jobs_out.open(dir + "/" + jobs_file);
  } else {
    scenario << "jobs:\n";
  }
  std::ostream& out = jobs_file.empty() ? static_cast<std::ostream&>(scenario) : jobs_out;
  TraceWriter w(f, out);
  w.Begin();
  for (const ScenarioJob& j : sc.jobs) {
    if (Status s = w.Write(j); !s.ok()) {
      std::fprintf(stderr, "trace_gen: %s\n", s.message().c_str());
      return 1;
    }
  }
  scenario.close();
  if (jobs_out.is_open()) jobs_out.close();
  if (!scenario || (!jobs_file.empty() && !jobs_out)) {
    std::fprintf(stderr, "trace_gen: cannot write %s\n", dir.c_str());
    return 1;
  }
  std::printf("trace_gen: %zu jobs, %zu nodes, %zu tenants in %s/scenario.yaml%s%s\n", sc.jobs.size(), sc.nodes.size(),
              sc.tenants.size(), dir.c_str(), jobs_file.empty() ? "" : " + ", jobs_file.c_str());
  return 0;
}
