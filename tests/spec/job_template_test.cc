// Job templates in the spec reader (spec/job_template.h): a template's fields read and checked,
// the nearest template visible to a tenant, a job's fields over the template's (env merged name by
// name, a task group key by key with its allocation as one), and the errors a person can act on.
#include <gtest/gtest.h>

#include "spec/job_spec.h"
#include "spec/job_template.h"
#include "spec/scenario.h"

namespace allot {
namespace {

// The catalog of three templates: `render` at vfx, a nearer `render` at vfx/shots, `train` at ml.
TemplateCatalog Catalog() {
  TemplateCatalog c;
  EXPECT_TRUE(c.Add("vfx", "render",
                    "{command: [render.sh], image: 'oci:/srv/images/renderer:2.1', time_limit: 20m, retries: 3, priority: high, "
                    "tasks: {gpus: 1, cpu: 8, memory: 32Gi}, env: {QUALITY: final, THREADS: '8'}}").ok());
  EXPECT_TRUE(c.Add("vfx/shots", "preview", "{command: [preview.sh], tasks: {timeslice: true, memory: 4Gi}, time_limit: 2m}").ok());
  EXPECT_TRUE(c.Add("ml", "train", "{command: [train.py], tasks: {gpus: 8}, topology: nvlink}").ok());
  return c;
}

Result<std::vector<ScenarioJob>> Read(const TemplateCatalog& catalog, const std::string& yaml) {
  return ReadJobBatch(YAML::Load(yaml), "body", &catalog);
}

TEST(JobTemplateTest, AJobTakesItsTemplatesFieldsAndOverridesThemFieldByField) {
  const TemplateCatalog catalog = Catalog();
  auto jobs = Read(catalog, "{name: shot-12, tenant: vfx/shots, template: render, time_limit: 45m, env: {QUALITY: draft, SHOT: '12'}}");
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message();
  const JobSpec& s = jobs->front().spec;
  EXPECT_EQ(s.template_name, "render");
  EXPECT_EQ(s.template_tenant, "vfx") << "found at the ancestor vfx: visible to its subtree";
  EXPECT_EQ(s.command, std::vector<std::string>{"render.sh"});
  EXPECT_EQ(s.environment.image, "oci:/srv/images/renderer:2.1");
  EXPECT_EQ(s.time_limit_ms, 45 * 60 * 1000) << "the job's own time_limit replaces the template's 20m";
  EXPECT_EQ(s.retries, 3);
  EXPECT_EQ(s.priority, kPriorityHigh);
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].gpu, kGpuUnit);
  EXPECT_EQ(s.groups[0].memory, 32 * 1024);
  // env merges name by name, the job's value winning (the environment is kept by name).
  EXPECT_EQ(s.environment.env, (std::vector<std::pair<std::string, std::string>>{{"QUALITY", "draft"}, {"SHOT", "12"}, {"THREADS", "8"}}));
}

TEST(JobTemplateTest, ATaskGroupMergesKeyByKeyAndTheJobsAllocationReplacesTheTemplatesWhole) {
  const TemplateCatalog catalog = Catalog();
  // tasks: {mps: …} replaces the template's gpus: 1 (one allocation), keeps its cpu and memory.
  auto jobs = Read(catalog, "{name: a, tenant: vfx, template: render, tasks: {mps: {percent: 50}, count: 2}}");
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message();
  const TaskGroup& g = jobs->front().spec.groups[0];
  EXPECT_EQ(g.share, ShareKind::kMps);
  EXPECT_EQ(g.percent, 50);
  EXPECT_EQ(g.count, 2);
  EXPECT_EQ(g.cpu, 8 * kMilli);
  EXPECT_EQ(g.memory, 32 * 1024);
  // A list of task groups replaces the template's tasks whole.
  auto list = Read(catalog, "{name: b, tenant: vfx, template: render, tasks: [{gpus: 2}, {gpus: 0, cpu: 1}]}");
  ASSERT_TRUE(list.has_value()) << list.error().message();
  ASSERT_EQ(list->front().spec.groups.size(), 2u);
  EXPECT_EQ(list->front().spec.groups[0].memory, 0) << "nothing of the template's single group is kept";
}

TEST(JobTemplateTest, TheNearestTemplateWinsAndAnotherSubtreesIsNotVisible) {
  TemplateCatalog catalog = Catalog();
  ASSERT_TRUE(catalog.Add("vfx/shots", "render", "{command: [render-shots.sh], tasks: {gpus: 2}}").ok());
  auto near = Read(catalog, "{name: a, tenant: vfx/shots/s1, template: render}");
  ASSERT_TRUE(near.has_value()) << near.error().message();
  EXPECT_EQ(near->front().spec.template_tenant, "vfx/shots");
  EXPECT_EQ(near->front().spec.command, std::vector<std::string>{"render-shots.sh"});
  auto far = Read(catalog, "{name: a, tenant: vfx/assets, template: render}");
  ASSERT_TRUE(far.has_value()) << far.error().message();
  EXPECT_EQ(far->front().spec.template_tenant, "vfx") << "vfx/shots's render is not visible to its sibling";
  // ml's template is in another subtree: vfx/shots cannot name it, and the error lists what it can.
  auto other = Read(catalog, "{name: a, tenant: vfx/shots, template: train}");
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().message(), "body:1: job.template: no template 'train' visible to tenant vfx/shots (its own or an "
                                     "ancestor's); expected one of: preview (vfx/shots), render (vfx/shots)");
  // A prefix of a path is no ancestor: "vf" is not above "vfx".
  EXPECT_EQ(catalog.Find("vfxtra", "render"), nullptr);
}

TEST(JobTemplateTest, AnUnknownTemplateNamesTheFieldAndTheValue) {
  const TemplateCatalog catalog = Catalog();
  auto r = Read(catalog, "[{name: a, tenant: ml, duration: 1m, tasks: {gpus: 1}}, {name: b, tenant: ml/nlp, template: trian}]");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "body:1: jobs[1].template: no template 'trian' visible to tenant ml/nlp (its own or an "
                                 "ancestor's); expected one of: train (ml)");
  auto none = ReadJobBatch(YAML::Load("{name: a, tenant: ml, template: train}"), "body");
  ASSERT_FALSE(none.has_value()) << "no catalog: no template is visible";
  EXPECT_NE(none.error().message().find("job.template: no template 'train' visible to tenant ml"), std::string::npos);
  EXPECT_NE(none.error().message().find("expected one of: none"), std::string::npos);
  auto bad = Read(catalog, "{name: a, tenant: ml, template: 'a b'}");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "body:1: job.template: 'a b' has the character ' '; expected 1 to 63 of A-Z a-z 0-9 . _ -, "
                                   "starting with a letter or digit");
}

TEST(JobTemplateTest, TheMergedJobIsCheckedAsIfWrittenOutInFull) {
  const TemplateCatalog catalog = Catalog();
  // The template's time_limit (20m) is shorter than the job's duration: refused, naming the field.
  auto r = Read(catalog, "{name: a, tenant: vfx, template: render, duration: 1h}");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("job.time_limit: '20m' is shorter than the duration"), std::string::npos) << r.error().message();
  // Fields of the template only a submit may state are still the submit's: `array` works with it.
  auto a = Read(catalog, "{name: r, tenant: vfx, template: render, array: {count: 3, parallel: 1}}");
  ASSERT_TRUE(a.has_value()) << a.error().message();
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[2].spec.template_name, "render") << "every element records the template";
  EXPECT_EQ((*a)[2].spec.time_limit_ms, 20 * 60 * 1000) << "the per-element time limit comes from the template";
}

TEST(JobTemplateTest, ATemplateHoldsOnlyFieldsItMayAndEachReadsAsAJobs) {
  auto read = [](const std::string& yaml) {
    auto t = ReadTemplate(YamlReader("body"), YAML::Load(yaml), "");
    return t ? "ok: " + t->fields : t.error().message();
  };
  EXPECT_EQ(read("{name: render, tenant: vfx, job: {image: '/images/r1', tasks: {gpus: 1}, env: {A: '1'}}}"),
            "ok: {image: /images/r1, tasks: {gpus: 1}, env: {A: 1}}");
  EXPECT_EQ(read("{name: render, tenant: vfx, job: {name: x}}"),
            "body:1: job.name: is not a field a template may hold (each submit states it); expected one of: kind, duration, "
            "time_limit, tasks, topology, priority, min_runtime, checkpoint, grace, command, image, mounts, env, shm_size, "
            "reservation, require, retries, vram");
  EXPECT_NE(read("{name: render, tenant: vfx, job: {time_limit: soon}}").find("body:1: job.time_limit: "), std::string::npos);
  EXPECT_NE(read("{name: render, tenant: vfx, job: {tasks: {gpus: 1, mig: 1g.10gb}}}").find("expected at most one of gpus, mig"),
            std::string::npos);
  EXPECT_EQ(read("{name: render, tenant: vfx}"), "body:1: job: required");
  EXPECT_EQ(read("{name: render, tenant: vfx, job: {}}"),
            "body:1: job: expected a mapping of job fields, e.g. {image: pytorch:2.3, tasks: {gpus: 1}, time_limit: 2h}");
  EXPECT_EQ(read("{name: 'r/1', tenant: vfx, job: {retries: 1}}"),
            "body:1: name: 'r/1' has the character '/'; expected 1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit");
}

TEST(JobTemplateTest, AScenarioDefinesTemplatesForItsJobs) {
  auto sc = ParseScenario(R"(
fleet: [{name: n, cpu: 64, memory: 512Gi, gpus: {model: H100-80GB, count: 8}}]
tenants: [{path: vfx}, {path: vfx/shots}]
templates:
  - {name: render, tenant: vfx, job: {duration: 10m, tasks: {gpus: 1}, retries: 1}}
jobs:
  - {name: a, tenant: vfx/shots, template: render}
  - {name: b, tenant: vfx/shots, template: render, duration: 5m}
)", "t.yaml");
  ASSERT_TRUE(sc.has_value()) << sc.error().message();
  ASSERT_EQ(sc->templates.size(), 1u);
  EXPECT_EQ(sc->jobs[0].spec.duration_ms, 10 * 60 * 1000);
  EXPECT_EQ(sc->jobs[1].spec.duration_ms, 5 * 60 * 1000);
  EXPECT_EQ(sc->jobs[1].spec.retries, 1);
  EXPECT_EQ(sc->jobs[1].line, 8) << "the job's own line, not the merged tree's";
  auto twice = ParseScenario(R"(
templates:
  - {name: r, tenant: vfx, job: {retries: 1}}
  - {name: r, tenant: vfx, job: {retries: 2}}
)", "t.yaml");
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().message(), "t.yaml:4: templates[1].name: 'r' is used twice in tenant vfx; expected template names unique within a tenant");
}

}  // namespace
}  // namespace allot
