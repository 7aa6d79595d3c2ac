// The same jobs written as a scenario's YAML list, a JSON Lines file and a CSV file (the bench's
// trace writer) give the same report as the generated scenario they came from; jobs_file errors
// name the jobs file and line; the YAML list read a piece at a time reads as the whole.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "sim/generate.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/trace_writer.h"
#include "spec/scenario.h"

namespace allot {
namespace {

namespace fs = std::filesystem;

class TraceFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("allot-trace-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static GenerateSpec Small() {
    GenerateSpec g;
    g.seed = 7;
    g.nodes = 24;
    g.nodes_per_rack = 8;
    g.orgs = 2;
    g.teams = 5;
    g.jobs_per_day = 1500;  // past one YAML piece (1,024 jobs)
    g.load_permille = 1100;
    return g;
  }

  // Writes the generated scenario with its jobs in `format`; returns the scenario's path.
  std::string Write(const Scenario& sc, TraceFormat format) {
    const char* ext = format == TraceFormat::kYaml ? "yaml" : format == TraceFormat::kCsv ? "csv" : "jsonl";
    std::string path = (dir_ / (std::string("scenario-") + ext + ".yaml")).string();
    std::ofstream out(path);
    EXPECT_TRUE(WriteFleetAndTenants(sc, out).ok());
    std::ofstream jobs;
    if (format == TraceFormat::kYaml) {
      out << "jobs:\n";
    } else {
      out << "jobs_file: jobs." << ext << "\n";
      jobs.open(dir_ / (std::string("jobs.") + ext));
    }
    TraceWriter w(format, format == TraceFormat::kYaml ? out : jobs);
    w.Begin();
    for (const ScenarioJob& j : sc.jobs) EXPECT_TRUE(w.Write(j).ok());
    return path;
  }

  static std::string Report(const Result<SimRun>& run) {
    if (!run) return "error: " + run.error().message();
    return ReportJson(*run, {.timing = false});
  }

  fs::path dir_;
};

TEST_F(TraceFormats, YamlJsonLinesAndCsvGiveTheGeneratedScenariosReport) {
  Scenario generated;
  Generate(Small(), generated);
  ASSERT_GT(generated.jobs.size(), 1024u);
  Scenario from_generator;
  from_generator.generate = Small();
  std::string want = Report(RunScenario(std::move(from_generator), {}, std::nullopt));
  ASSERT_EQ(want.rfind("error", 0), std::string::npos) << want;
  for (TraceFormat f : {TraceFormat::kYaml, TraceFormat::kJsonLines, TraceFormat::kCsv}) {
    SCOPED_TRACE(static_cast<int>(f));
    std::string path = Write(generated, f);
    EXPECT_EQ(Report(RunScenarioFile(path, {}, std::nullopt)), want);
  }
  // --jobs: the JSON Lines file beside a scenario of only the fleet and tenants.
  std::ofstream bare(dir_ / "bare.yaml");
  ASSERT_TRUE(WriteFleetAndTenants(generated, bare).ok());
  bare.close();
  SimOptions o;
  o.jobs_file = (dir_ / "jobs.jsonl").string();
  EXPECT_EQ(Report(RunScenarioFile((dir_ / "bare.yaml").string(), o, std::nullopt)), want);
  // --load-only: the state built, nothing run.
  o.load_only = true;
  auto loaded = RunScenarioFile((dir_ / "bare.yaml").string(), o, std::nullopt);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->result.jobs_loaded, static_cast<int64_t>(generated.jobs.size()));
  EXPECT_EQ(loaded->result.passes, 0);
  EXPECT_TRUE(loaded->state.jobs().empty());
}

TEST_F(TraceFormats, YamlJobsReadAPieceAtATimeReadAsTheWholeDocument) {
  Scenario generated;
  Generate(Small(), generated);
  std::string block = Write(generated, TraceFormat::kYaml);
  // The same list as one flow sequence, which is never cut: read whole.
  std::ifstream in(block);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  size_t at = text.find("jobs:\n");
  ASSERT_NE(at, std::string::npos);
  std::string flow = text.substr(0, at) + "jobs: [\n";
  std::istringstream lines(text.substr(at + 6));
  for (std::string line; std::getline(lines, line);) flow += line.substr(4) + ",\n";
  flow += "]\n";
  auto cut = ParseScenario(text, "block.yaml");
  auto whole = ParseScenario(flow, "flow.yaml");
  ASSERT_TRUE(cut.has_value()) << cut.error().message();
  ASSERT_TRUE(whole.has_value()) << whole.error().message();
  ASSERT_EQ(cut->jobs.size(), whole->jobs.size());
  for (size_t i = 0; i < cut->jobs.size(); ++i) {
    ASSERT_EQ(cut->jobs[i].spec, whole->jobs[i].spec) << i;
    ASSERT_EQ(cut->jobs[i].line, whole->jobs[i].line) << i;  // each job on its own line in both
  }
  // An error in a late piece names its line in the file.
  size_t late = at;
  for (int n = 0; n < 1100; ++n) late = text.find("\n  - ", late + 1);
  std::string bad = text;
  size_t gpus = bad.find("\"gpus\": \"", late);
  bad.replace(gpus, 9, "\"gpus\": \"-");
  const int line = 1 + static_cast<int>(std::count(bad.begin(), bad.begin() + static_cast<std::ptrdiff_t>(gpus), '\n'));
  auto refused = ParseScenario(bad, "bad.yaml");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message().substr(0, 40),
            ("bad.yaml:" + std::to_string(line) + ": jobs[1099].tasks.gpus: '-").substr(0, 40));
}

TEST_F(TraceFormats, JobsFileErrorsNameTheFileAndLine) {
  const std::string head =
      "fleet:\n  - {prefix: h-, count: 2, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}\n"
      "tenants: [{path: t}]\n";
  auto run = [&](const std::string& scenario, const std::string& jobs_name, const std::string& jobs) {
    std::ofstream(dir_ / "s.yaml") << scenario;
    if (!jobs_name.empty()) std::ofstream(dir_ / jobs_name) << jobs;
    auto r = RunScenarioFile((dir_ / "s.yaml").string(), {}, std::nullopt);
    return r ? std::string() : r.error().message();
  };
  const std::string jsonl = (dir_ / "jobs.jsonl").string();
  EXPECT_EQ(run(head + "jobs_file: jobs.txt\n", "", ""),
            (dir_ / "s.yaml").string() + ":4: jobs_file: 'jobs.txt' is neither JSON Lines nor CSV; expected a name ending in "
                                         ".jsonl, .ndjson or .csv");
  EXPECT_EQ(run(head + "jobs_file: missing.jsonl\n", "", ""), (dir_ / "missing.jsonl").string() + ": cannot open the jobs file");
  EXPECT_EQ(run(head + "jobs_file: jobs.jsonl\n", "jobs.jsonl",
                "{\"name\": \"a\", \"tenant\": \"t\", \"duration\": \"1h\", \"tasks\": {\"gpus\": 1}}\n"
                "{\"name\": \"b\", \"tenant\": \"nobody\", \"duration\": \"1h\", \"tasks\": {\"gpus\": 1}}\n"),
            jsonl + ":2: tenant: unknown tenant 'nobody'; expected a path listed under tenants");
  EXPECT_EQ(run(head + "jobs:\n  - {name: a, tenant: t, duration: 1h, tasks: {gpus: 1}}\njobs_file: jobs.jsonl\n", "jobs.jsonl",
                "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1h\", \"tasks\": {\"gpus\": 1}}\n"
                "{\"name\": \"a\", \"tenant\": \"t\", \"duration\": \"1h\", \"tasks\": {\"gpus\": 1}}\n"),
            jsonl + ":2: name: 'a' is used twice in tenant t; expected job names unique within a tenant");
  EXPECT_EQ(run(head + "jobs_file: jobs.jsonl\n", "jobs.jsonl",
                "{\"name\": \"a\", \"tenant\": \"t\", \"duration\": \"1h\", \"tasks\": {\"gpus\": 1, \"gpu_model\": \"A100-80GB\"}}\n"),
            jsonl + ":1: tasks.gpu_model: no node in the fleet has GPU model 'A100-80GB'");
  // Nothing is simulated from a bad file: the first bad record refuses the run.
  EXPECT_EQ(run(head + "jobs_file: jobs.jsonl\n", "jobs.jsonl", "{\"name\": \"a\", \"tenant\": \"t\", \"duration\": \"1h\", \"tasks\": {\"gpus\": 1}}\n"),
            "");
}

// A JSON Lines record names the scenario's templates as its `jobs:` do; an unknown one is named
// with the file and line, as every other record error. A CSV row does in its `template` column.
TEST_F(TraceFormats, JsonLinesRecordsNameTheScenariosTemplates) {
  const std::string scenario =
      "fleet:\n  - {prefix: h-, count: 2, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}\n"
      "tenants: [{path: t}, {path: t/a}]\n"
      "templates:\n  - {name: base, tenant: t, job: {duration: 2h, priority: high, tasks: {gpus: 2, cpu: 8}}}\n"
      "jobs_file: jobs.jsonl\n";
  std::ofstream(dir_ / "s.yaml") << scenario;
  std::ofstream(dir_ / "jobs.jsonl") << "{\"name\": \"a\", \"tenant\": \"t/a\", \"template\": \"base\"}\n"
                                        "{\"name\": \"b\", \"tenant\": \"t\", \"template\": \"base\", \"duration\": \"30m\", \"tasks\": {\"gpus\": 1}}\n";
  auto sc = LoadScenario((dir_ / "s.yaml").string());
  ASSERT_TRUE(sc) << sc.error().message();
  ASSERT_TRUE(ReadScenarioJobsFile(*sc).ok());
  ASSERT_EQ(sc->jobs.size(), 2u);
  const JobSpec& a = sc->jobs[0].spec;
  EXPECT_EQ(a.template_name, "base");
  EXPECT_EQ(a.duration_ms, 2 * 3600 * 1000) << "a's fields are the template's (found at its ancestor t)";
  EXPECT_EQ(a.groups[0].gpu, 2 * kGpuUnit);
  EXPECT_EQ(a.groups[0].cpu, 8 * 1000);
  const JobSpec& b = sc->jobs[1].spec;
  EXPECT_EQ(b.duration_ms, 30 * 60 * 1000) << "the record's own fields win";
  EXPECT_EQ(b.groups[0].gpu, kGpuUnit);
  EXPECT_EQ(b.groups[0].cpu, 8 * 1000) << "the single task group merges key by key";
  EXPECT_EQ(sc->jobs[1].line, 2);

  std::ofstream(dir_ / "jobs.jsonl") << "{\"name\": \"a\", \"tenant\": \"t\", \"template\": \"base\"}\n"
                                        "{\"name\": \"b\", \"tenant\": \"t\", \"template\": \"nope\"}\n";
  auto again = LoadScenario((dir_ / "s.yaml").string());
  ASSERT_TRUE(again) << again.error().message();
  Status s = ReadScenarioJobsFile(*again);
  EXPECT_EQ(s.message(), (dir_ / "jobs.jsonl").string() + ":2: template: no template 'nope' visible to tenant t (its own or an ancestor's); "
                           "expected one of: base (t)");
}

// A CSV `template` column: a row naming one takes the template's fields under its own cells (an
// empty cell leaves the template's); a row with the cell empty is a flat job as before; an
// unknown name is refused with the file and line.
TEST_F(TraceFormats, CsvRowsNameTheScenariosTemplatesInATemplateColumn) {
  const std::string scenario =
      "fleet:\n  - {prefix: h-, count: 2, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}\n"
      "tenants: [{path: t}, {path: t/a}]\n"
      "templates:\n  - {name: base, tenant: t, job: {duration: 2h, priority: high, tasks: {gpus: 2, cpu: 8}}}\n"
      "jobs_file: jobs.csv\n";
  std::ofstream(dir_ / "s.yaml") << scenario;
  std::ofstream(dir_ / "jobs.csv") << "name,tenant,template,duration,tasks.gpus\n"
                                      "a,t/a,base,,\n"
                                      "b,t,base,30m,1\n"
                                      "c,t,,1h,4\n";
  auto sc = LoadScenario((dir_ / "s.yaml").string());
  ASSERT_TRUE(sc) << sc.error().message();
  ASSERT_TRUE(ReadScenarioJobsFile(*sc).ok());
  ASSERT_EQ(sc->jobs.size(), 3u);
  const JobSpec& a = sc->jobs[0].spec;
  EXPECT_EQ(a.template_name, "base");
  EXPECT_EQ(a.duration_ms, 2 * 3600 * 1000) << "empty cells leave the template's fields";
  EXPECT_EQ(a.groups[0].gpu, 2 * kGpuUnit);
  EXPECT_EQ(sc->jobs[0].line, 2);
  const JobSpec& b = sc->jobs[1].spec;
  EXPECT_EQ(b.duration_ms, 30 * 60 * 1000) << "the row's own cells win";
  EXPECT_EQ(b.groups[0].gpu, kGpuUnit);
  EXPECT_EQ(b.groups[0].cpu, 8 * 1000) << "the single task group merges key by key";
  const JobSpec& c = sc->jobs[2].spec;
  EXPECT_EQ(c.template_name, "");
  EXPECT_EQ(c.groups[0].gpu, 4 * kGpuUnit);
  EXPECT_EQ(sc->jobs[2].line, 4);

  std::ofstream(dir_ / "jobs.csv") << "name,tenant,template\na,t,base\nb,t,nope\n";
  auto again = LoadScenario((dir_ / "s.yaml").string());
  ASSERT_TRUE(again) << again.error().message();
  Status s = ReadScenarioJobsFile(*again);
  EXPECT_EQ(s.message(), (dir_ / "jobs.csv").string() + ":3: template: no template 'nope' visible to tenant t (its own or an ancestor's); "
                           "expected one of: base (t)");
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The binary: --jobs and --load-only print what was loaded; a bad jobs file exits 2 naming the
// line and field, before anything is simulated; --openb-replay prints the replay's figures.
TEST(SimCommand, ReadsJobsFromAFileLoadsOnlyAndReplaysOpenb) {
  const std::string dir = ::testing::TempDir();
  const std::string scenario = dir + "allot-trace-bare.yaml", jobs = dir + "allot-trace-jobs.csv", out = dir + "allot-trace.out",
                    err = dir + "allot-trace.err";
  std::ofstream(scenario) << "fleet:\n  - {prefix: h-, count: 2, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}\n"
                             "tenants: [{path: t}]\n";
  std::ofstream(jobs) << "name,tenant,duration,tasks.gpus\na,t,1h,8\nb,t,2h,4\n";
  auto run = [&](const std::string& args) {
    int rc = std::system((std::string(ALLOT_BINARY) + " sim " + args + " >" + out + " 2>" + err).c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  EXPECT_EQ(run(scenario + " --jobs " + jobs + " --load-only"), 0);
  EXPECT_EQ(Slurp(out).substr(0, 37), "loaded 2 jobs, 2 nodes, 1 tenants in ") << Slurp(out);
  std::ofstream(jobs) << "name,tenant,duration,tasks.gpus\na,t,1h,8\nb,t,2h,eight\n";
  EXPECT_EQ(run(scenario + " --jobs " + jobs), 2);
  EXPECT_EQ(Slurp(err).rfind("allot sim: " + jobs + ":3: tasks.gpus: 'eight' ", 0), 0u) << Slurp(err);
  EXPECT_EQ(Slurp(out), "");  // nothing simulated, nothing reported
  EXPECT_EQ(run("--openb-replay " + std::string(ALLOT_SOURCE_DIR) + "/tests/data/openb"), 0);
  EXPECT_NE(Slurp(out).find("openb replay: 8152 pods (1 dropped, 0 without a deletion time); 1213 nodes, 6212 GPUs of G2, 345 of them MPS pools"),
            std::string::npos)
      << Slurp(out);
  EXPECT_NE(Slurp(out).find("placed 8151 of 8151; never placed 0; rejected 0"), std::string::npos) << Slurp(out);
}

}  // namespace
}  // namespace allot
