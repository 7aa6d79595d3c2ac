// Jobs from JSON Lines and CSV streams (spec/job_stream.h): good records become the jobs a
// scenario would hold, a bad one stops the stream naming the line, the field, the value and what
// was expected, and the direct reader of flat records agrees with the scenario reader's tree.
#include <gtest/gtest.h>

#include <sstream>

#include "spec/job_stream.h"

namespace allot {
namespace {

struct Read {
  std::vector<ScenarioJob> jobs;
  std::string error;  // empty when every record was read
};

Read ReadText(const std::string& text, JobFileFormat format, JobStreamOptions options = {}) {
  std::istringstream in(text);
  Read r;
  Status s = ReadJobStream(in, format, "jobs", [&](ScenarioJob&& j) {
    r.jobs.push_back(std::move(j));
    return Status::Ok();
  }, options);
  if (!s.ok()) r.error = s.message();
  return r;
}

Read Jsonl(const std::string& text, JobStreamOptions options = {}) { return ReadText(text, JobFileFormat::kJsonLines, options); }
Read Csv(const std::string& text, JobStreamOptions options = {}) { return ReadText(text, JobFileFormat::kCsv, options); }

// The MIG profiles asked, one a group ("" none): the direct reader leaves `mig` empty when
// none is asked, which ResolveJob reads alike.
std::vector<std::string> Mig(const ScenarioJob& j) {
  std::vector<std::string> m = j.mig;
  m.resize(j.spec.groups.size());
  return m;
}

bool SameJob(const ScenarioJob& a, const ScenarioJob& b) {
  return a.spec == b.spec && a.tenant == b.tenant && a.gpu_model == b.gpu_model && Mig(a) == Mig(b) && a.line == b.line;
}

TEST(JobStream, ReadsFlatJsonLinesRecordsWithTheirLines) {
  Read r = Jsonl(
      "{\"name\": \"a\", \"tenant\": \"research/nlp\", \"submit\": \"90s\", \"duration\": \"2h\", \"time_limit\": \"3h\","
      " \"tasks\": {\"count\": 2, \"gpus\": 8, \"cpu\": \"32\", \"memory\": \"256Gi\", \"gpu_model\": \"H100-80GB\"},"
      " \"topology\": \"rack\", \"priority\": \"high\", \"kind\": \"training\", \"min_runtime\": \"10m\","
      " \"checkpoint\": {\"interval\": \"15m\", \"grace\": \"60s\"}}\n"
      "\n"
      "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": 0.46}, \"priority\": -5, \"grace\": \"5s\"}\r\n");
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.jobs.size(), 2u);
  const ScenarioJob& a = r.jobs[0];
  EXPECT_EQ(a.spec.name, "a");
  EXPECT_EQ(a.tenant, "research/nlp");
  EXPECT_EQ(a.line, 1);
  EXPECT_EQ(a.spec.submit_ms, 90000);
  EXPECT_EQ(a.spec.duration_ms, 7200000);
  EXPECT_EQ(a.spec.time_limit_ms, 3 * 3600000);
  ASSERT_EQ(a.spec.groups.size(), 1u);
  EXPECT_EQ(a.spec.groups[0].count, 2);
  EXPECT_EQ(a.spec.groups[0].gpu, 8 * kGpuUnit);
  EXPECT_EQ(a.spec.groups[0].cpu, 32000);
  EXPECT_EQ(a.spec.groups[0].memory, 256 * 1024);
  EXPECT_EQ(a.gpu_model, "H100-80GB");
  EXPECT_EQ(a.spec.topology, Topology::kRack);
  EXPECT_EQ(a.spec.priority, kPriorityHigh);
  EXPECT_EQ(a.spec.kind, JobKind::kTraining);
  EXPECT_EQ(a.spec.min_runtime_ms, 600000);
  EXPECT_EQ(a.spec.checkpoint_interval_ms, 900000);
  EXPECT_EQ(a.spec.grace_ms, 60000);
  const ScenarioJob& b = r.jobs[1];
  EXPECT_EQ(b.line, 3);
  EXPECT_EQ(b.spec.groups[0].gpu, 9660);  // 0.46 GPU in units of 1/21000
  EXPECT_EQ(b.spec.priority, -5);
  EXPECT_EQ(b.spec.grace_ms, 5000);
}

TEST(JobStream, ReadsRecordsBeyondTheFlatFieldsThroughTheScenarioReader) {
  Read r = Jsonl(
      "{\"name\": \"g\", \"tenant\": \"t\", \"duration\": \"1h\", \"repeat\": 2,"
      " \"tasks\": [{\"count\": 1, \"gpus\": 8}, {\"count\": 4, \"cpu\": \"2\"}], \"require\": {\"driver\": \">=550\"}}\n"
      "{\"name\": \"m\", \"tenant\": \"t\", \"duration\": \"1h\", \"tasks\": {\"mig\": \"1g.10gb\"}}\n");
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].spec.name, "g-0");
  EXPECT_EQ(r.jobs[1].spec.name, "g-1");
  EXPECT_EQ(r.jobs[1].line, 1);
  EXPECT_EQ(r.jobs[0].spec.groups.size(), 2u);
  EXPECT_FALSE(r.jobs[0].spec.require.empty());
  EXPECT_EQ(r.jobs[2].line, 2);
  EXPECT_EQ(r.jobs[2].mig, std::vector<std::string>{"1g.10gb"});
}

struct Case {
  const char* name;
  std::string record;
  std::string expected;  // the whole message
};

// Every kind of bad record, each on line 2 after a good one.
const Case kBadJson[] = {
    {"malformed JSON", "{\"name\": \"a\",", "jobs:2: malformed JSON: "},
    {"malformed JSON in a value", "{\"name\": \"a\", \"tenant\": tru, \"duration\": \"1s\", \"tasks\": {}}", "jobs:2: malformed JSON: "},
    {"not an object", "[1, 2]", "jobs:2: expected a JSON object (one job a line)"},
    {"an atom after the object", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}} x",
     "jobs:2: malformed JSON: "},  // simdjson's stage 1 refuses it
    {"an object after the object", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}} {}",
     "jobs:2: text after the JSON object; expected one JSON object a line"},
    {"text after a record of the tree", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": [{}]} {}",
     "jobs:2: text after the JSON object; expected one JSON object a line"},
    {"nested too deep", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"env\": " + std::string(70, '[') +
     std::string(70, ']') + "}", "jobs:2: env"},
    {"duplicate key", "{\"name\": \"b\", \"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}}",
     "jobs:2: name: duplicate key; expected each key once in an object"},
    {"duplicate nested key", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": 1, \"gpus\": 2}}",
     "jobs:2: tasks.gpus: duplicate key; expected each key once in an object"},
    // Refused for the key, before its value is read (a fuzz finding: the direct reader read the
    // value first and called the line malformed).
    {"duplicate key before a bad value", "{\"name\": \"b\", \"name\": tru, \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}}",
     "jobs:2: name: duplicate key; expected each key once in an object"},
    {"duplicate nested key before a bad value", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": 1, \"gpus\": tru}}",
     "jobs:2: tasks.gpus: duplicate key; expected each key once in an object"},
    {"unknown field", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"colour\": \"red\"}",
     "jobs:2: colour: unknown field; expected one of: name, tenant, kind, submit, duration, time_limit, tasks, topology, priority, "
     "min_runtime, checkpoint, grace, repeat, command, image, mounts, env, shm_size, reservation, require"},
    {"no name", "{\"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}}", "jobs:2: name: required"},
    {"no tasks", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\"}", "jobs:2: tasks: required"},
    {"no duration", "{\"name\": \"b\", \"tenant\": \"t\", \"tasks\": {}}",
     "jobs:2: duration: required (the simulator runs each job for its duration)"},
    {"bad name", "{\"name\": \"b c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}}", "jobs:2: name: 'b c' "},
    {"name not a scalar", "{\"name\": null, \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}}",
     "jobs:2: name: expected a scalar value"},
    {"duration without unit", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": 90, \"tasks\": {}}",
     "jobs:2: duration: '90' "},
    {"duration out of range", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"3651d\", \"tasks\": {}}",
     "jobs:2: duration: '3651d' is out of range; expected a duration from 1ms to 3650d, e.g. 90s or 2h"},
    {"time limit below the duration", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"2h\", \"time_limit\": \"1h\", \"tasks\": {}}",
     "jobs:2: time_limit: '1h' is shorter than the duration; expected at least the duration (the simulator runs each job for its duration)"},
    {"negative GPUs", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": -1}}",
     "jobs:2: tasks.gpus: '-1' is not a valid GPU quantity: must not be negative"},
    {"GPUs neither whole nor a share", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": 1.5}}",
     "jobs:2: tasks.gpus: '1.5' is neither whole GPUs nor a share of one; expected an integer or a fraction below 1"},
    {"count zero", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"count\": 0}}",
     "jobs:2: tasks.count: '0' is not valid; expected an integer from 1 to 100000"},
    {"memory without unit", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"memory\": \"64\"}}",
     "jobs:2: tasks.memory: '64' is not a valid memory quantity"},
    {"unknown GPU model", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpu_model\": \"H900\"}}",
     "jobs:2: tasks.gpu_model: unknown GPU model 'H900'"},
    {"bad topology", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"topology\": \"ring\"}",
     "jobs:2: topology: 'ring' is not valid; expected none, nvlink, rack or zone"},
    {"bad priority", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"priority\": \"urgent\"}",
     "jobs:2: priority: 'urgent' is not valid; expected low, normal, high or an integer from -1000000 to 1000000"},
    {"bad kind", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"kind\": \"game\"}",
     "jobs:2: kind: 'game' is not valid; expected batch, training, inference or interactive"},
    {"grace past a day", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"grace\": \"2d\"}",
     "jobs:2: grace: '2d' is out of range; expected a duration from 0s to 1d, e.g. 30s"},
    {"checkpoint without interval", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"checkpoint\": {\"grace\": \"1s\"}}",
     "jobs:2: checkpoint.interval: required"},
    {"tasks a string", "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": \"x\"}",
     "jobs:2: tasks: expected a mapping"},
};

TEST(JobStream, RefusesEveryKindOfBadJsonRecordNamingLineFieldValueAndExpectation) {
  const std::string good = "{\"name\": \"a\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": 1}}\n";
  for (const Case& c : kBadJson) {
    SCOPED_TRACE(c.name);
    Read r = Jsonl(good + c.record + "\n" + good);
    EXPECT_EQ(r.jobs.size(), 1u) << "the stream stops at the bad record";
    EXPECT_EQ(r.error.substr(0, c.expected.size()), c.expected) << r.error;
  }
}

TEST(JobStream, DirectReaderAgreesWithTheScenarioReadersTree) {
  std::vector<std::string> records = {
      "{\"name\": \"a\", \"tenant\": \"research/nlp\", \"submit\": \"1.5s\", \"duration\": \"2h\", \"tasks\": {\"count\": 2, "
      "\"gpus\": 8, \"cpu\": 0.5, \"memory\": \"1.5Gi\"}, \"topology\": \"nvlink\", \"priority\": 7, \"kind\": \"inference\", "
      "\"reservation\": \"r1\", \"checkpoint\": {\"interval\": \"15m\"}, \"grace\": \"10s\", \"min_runtime\": \"0s\"}",
      "{\"name\": \"b\", \"tenant\": \"t\", \"duration\": \"1ms\", \"tasks\": {}}",
      "{\"name\": true, \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": 0}}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": 0.0001}}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": 65}}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"gpus\": \"1e3\"}}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"cpu\": \"20000\"}}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {\"count\": 99999999999999999999}}",
      "{\"name\": \"c\", \"tenant\": \"a//b\", \"duration\": \"1s\", \"tasks\": {}}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"submit\": \"-1s\", \"tasks\": {}}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"reservation\": \"R R\"}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"priority\": 1000001}",
      "{\"name\": \"c\", \"tenant\": \"t\", \"duration\": \"1s\", \"tasks\": {}, \"checkpoint\": {\"interval\": \"0s\"}}",
      "{\"tenant\": \"t\", \"tasks\": {}}",
      "{\"name\": \"c\", \"duration\": \"bad\", \"tasks\": {}}",
  };
  for (const std::string& rec : records) {
    SCOPED_TRACE(rec);
    Read direct = Jsonl(rec + "\n");
    Read tree = Jsonl(rec + "\n", {.direct = false});
    EXPECT_EQ(direct.error, tree.error);
    ASSERT_EQ(direct.jobs.size(), tree.jobs.size());
    for (size_t i = 0; i < direct.jobs.size(); ++i) EXPECT_TRUE(SameJob(direct.jobs[i], tree.jobs[i]));
  }
}

TEST(JobStream, ReadsRecordsSplitAcrossTheBufferBoundary) {
  std::string text;
  for (int i = 0; i < 50; ++i) {
    text += "{\"name\": \"job-" + std::to_string(i) + "\", \"tenant\": \"team" + std::to_string(i % 7) +
            "\", \"submit\": \"" + std::to_string(i) + "s\", \"duration\": \"1h\", \"tasks\": {\"gpus\": " + std::to_string(1 + i % 8) + "}}\n";
  }
  text.pop_back();  // the last record without a line break
  Read whole = Jsonl(text);
  ASSERT_EQ(whole.error, "");
  ASSERT_EQ(whole.jobs.size(), 50u);
  for (size_t buffer : {16, 17, 64, 100, 333}) {
    SCOPED_TRACE(buffer);
    Read small = Jsonl(text, {.buffer_bytes = buffer});
    ASSERT_EQ(small.error, "");
    ASSERT_EQ(small.jobs.size(), whole.jobs.size());
    for (size_t i = 0; i < whole.jobs.size(); ++i) EXPECT_TRUE(SameJob(small.jobs[i], whole.jobs[i])) << i;
  }
}

TEST(JobStream, ReadsCsvRowsByTheHeadersFieldPaths) {
  Read r = Csv(
      "\xEF\xBB\xBFname,tenant,submit,duration,tasks.count,tasks.gpus,tasks.cpu,tasks.memory,priority,checkpoint.interval,grace\r\n"
      "a,research/nlp,90s,2h,2,8,32,256Gi,high,15m,60s\r\n"
      "\r\n"
      "\"b\",t,,1s,,0.5,,,,,\n"
      "c,t,0s,1s,,,\"4\",,,,\n");
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].line, 2);
  EXPECT_EQ(r.jobs[0].spec.groups[0].count, 2);
  EXPECT_EQ(r.jobs[0].spec.checkpoint_interval_ms, 900000);
  EXPECT_EQ(r.jobs[0].spec.grace_ms, 60000);
  EXPECT_EQ(r.jobs[1].line, 4);
  EXPECT_EQ(r.jobs[1].spec.submit_ms, 0);  // an empty cell: the field is left out
  EXPECT_EQ(r.jobs[1].spec.groups[0].gpu, kGpuUnit / 2);
  EXPECT_EQ(r.jobs[2].spec.groups[0].cpu, 4000);
  // The same jobs as JSON Lines.
  Read j = Jsonl(
      "{\"name\": \"a\", \"tenant\": \"research/nlp\", \"submit\": \"90s\", \"duration\": \"2h\", \"tasks\": {\"count\": 2, \"gpus\": 8, "
      "\"cpu\": 32, \"memory\": \"256Gi\"}, \"priority\": \"high\", \"checkpoint\": {\"interval\": \"15m\"}, \"grace\": \"60s\"}\n");
  ASSERT_EQ(j.error, "");
  j.jobs[0].line = 2;
  EXPECT_TRUE(SameJob(j.jobs[0], r.jobs[0]));
}

// Quoted cells with "" are unescaped into the row's scratch; adding one must not move those before
// it (a fuzz finding: kept in a vector, a third such cell left the first two's views dangling).
TEST(JobStream, ReadsEveryEscapedCellOfARowAfterMoreAreAdded) {
  // The name is checked first, after the row's three escaped cells were split.
  Read r = Csv(
      "name,tenant,duration,tasks.gpus\n"
      "\"a\"\"1\",\"b\"\"2\",\"c\"\"3\",1\n");
  EXPECT_EQ(r.error, "jobs:2: name: 'a\"1' has the character '\"'; expected 1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit");
  Read t = Csv(
      "tenant,name,tasks.gpus,duration\n"
      "\"b\"\"2\",\"x\"\"y\",\"z\"\"w\",\"c\"\"3\"\n");
  EXPECT_EQ(t.error.substr(0, 37), "jobs:2: name: 'x\"y' has the character") << t.error;
}

TEST(JobStream, RefusesBadCsvNamingLineColumnValueAndExpectation) {
  const std::string header = "name,tenant,duration,tasks.gpus\n";
  const Case cases[] = {
      {"empty file", "", "jobs:1: empty file; expected a header row naming the columns (name, tenant, submit"},
      {"unknown column", "name,tenant,colour\n", "jobs:1: header: column 3 'colour' is not a field of a flat job; expected one of: name, tenant,"},
      {"column twice", "name,tenant,name\n", "jobs:1: header: column 'name' is named twice; expected each once"},
      {"too few cells", header + "a,t,1s,1\nb,t,1s\n", "jobs:3: 3 cells; expected 4 as in the header"},
      {"unclosed quote", header + "\"a,t,1s,1\n", "jobs:2: cell 1: a quote is not closed; expected \"…\" on one line"},
      {"text after a quote", header + "\"a\"x,t,1s,1\n", "jobs:2: cell 1: text after a closing quote; expected a comma"},
      {"no task cell", header + "a,t,1s,\n", "jobs:2: tasks: required"},
      {"bad value", header + "a,t,1s,1\nb,t,soon,1\n", "jobs:3: duration: 'soon' "},
      {"bad GPUs", header + "a,t,1s,-2\n", "jobs:2: tasks.gpus: '-2' is not a valid GPU quantity: must not be negative"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Read r = Csv(c.record);
    EXPECT_EQ(r.error.substr(0, c.expected.size()), c.expected) << r.error;
  }
}

TEST(JobStream, KnowsTheFormatByExtension) {
  EXPECT_EQ(JobFileFormatOf("a/jobs.jsonl"), JobFileFormat::kJsonLines);
  EXPECT_EQ(JobFileFormatOf("jobs.ndjson"), JobFileFormat::kJsonLines);
  EXPECT_EQ(JobFileFormatOf("jobs.csv"), JobFileFormat::kCsv);
  EXPECT_EQ(JobFileFormatOf("jobs.json"), std::nullopt);
  EXPECT_EQ(ReadJobFile("/nonexistent/jobs.jsonl", [](ScenarioJob&&) { return Status::Ok(); }).message(),
            "/nonexistent/jobs.jsonl: cannot open the jobs file");
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

// A scenario's flat YAML items read directly (ReadFlatYamlJob) and by ReadJob: the same job, or
// the same message with the same line (fields on lines of their own too).
TEST(JobStream, DirectReaderOfYamlItemsAgreesWithReadJob) {
  const std::string items[] = {
      "{name: a, tenant: research/nlp, submit: 1.5s, duration: 2h, tasks: {count: 2, gpus: 8, cpu: 0.5, memory: 1.5Gi, "
      "gpu_model: H100-80GB}, topology: nvlink, priority: 7, kind: inference, reservation: r1, checkpoint: {interval: 15m, "
      "grace: 1m}, grace: 10s, min_runtime: 0s, time_limit: 3h}",
      "name: b\ntenant: t\nduration: 1h\ntasks:\n  gpus: 0.25\n  cpu: lots\n",
      "name: b\ntenant: t\nduration: 1h\ncheckpoint:\n  grace: 1s\ntasks: {}\n",
      "name: b\ntenant: t\n\nduration: 1h\ntime_limit: 30m\ntasks: {}\n",
      "{name: 'b c', tenant: t, duration: 1s, tasks: {}}",
      "{name: b, tenant: 'a//b', duration: 1s, tasks: {}}",
      "{name: b, tenant: t, duration: 1s, tasks: {gpus: -1}}",
      "{name: b, tenant: t, duration: 1s, tasks: {gpus: 1.5}}",
      "{name: b, tenant: t, duration: 1s, tasks: {gpus: 0.0001}}",
      "{name: b, tenant: t, duration: 1s, tasks: {gpus: 65}}",
      "{name: b, tenant: t, duration: 1s, tasks: {count: 0}}",
      "{name: b, tenant: t, duration: 1s, tasks: {gpu_model: H900}}",
      "{name: b, tenant: t, duration: soon, tasks: {}}",
      "{name: b, tenant: t, duration: 3651d, tasks: {}}",
      "{name: b, tenant: t, duration: 1s, submit: -1s, tasks: {}}",
      "{name: b, tenant: t, duration: 1s, tasks: {}, topology: ring}",
      "{name: b, tenant: t, duration: 1s, tasks: {}, priority: urgent}",
      "{name: b, tenant: t, duration: 1s, tasks: {}, kind: game}",
      "{name: b, tenant: t, duration: 1s, tasks: {}, grace: 2d}",
      "{name: b, tenant: t, duration: 1s, tasks: {}, reservation: 'R R'}",
      "{tenant: t, tasks: {}}",
      "{name: b, duration: 1s, tasks: {}}",
      "{name: b, tenant: t, tasks: {}}",
      "{name: b, tenant: t, duration: 1s}",
  };
  for (const std::string& text : items) {
    SCOPED_TRACE(text);
    YAML::Node n = YAML::Load(text);
    auto direct = ReadFlatYamlJob(n, "s.yaml", "jobs[4]", 0);
    ASSERT_TRUE(direct.has_value()) << "a flat item";
    YamlReader rd("s.yaml");
    auto tree = ReadJob(rd, n, "jobs[4]", /*simulated=*/true);
    ASSERT_EQ(direct->has_value(), tree.has_value());
    if (!tree) {
      EXPECT_EQ(direct->error().message(), tree.error().message());
      continue;
    }
    ScenarioJob want = tree->front();
    EXPECT_TRUE(SameJob(**direct, want));
  }
  // Not flat: left to ReadJob.
  for (const char* text : {"{name: b, tenant: t, duration: 1s, tasks: [{gpus: 1}]}", "{name: b, tenant: t, duration: 1s, tasks: {mig: 1g.10gb}}",
                           "{name: b, tenant: t, duration: 1s, tasks: {}, repeat: 2}", "{name: b, tenant: t, duration: ~, tasks: {}}",
                           "{name: b, tenant: t, duration: 1s, tasks: {}, colour: red}"}) {
    EXPECT_FALSE(ReadFlatYamlJob(YAML::Load(text), "s.yaml", "jobs[0]", 0).has_value()) << text;
  }
}

}  // namespace
}  // namespace allot
