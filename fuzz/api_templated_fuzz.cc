// What reads a template or names one (docs/templates.md), as allotd reads it, resolved against the
// small cluster of fuzz_state.h. The first byte picks the Content-Type (odd → YAML, even → JSON)
// and, in its next two bits, the route:
//   0: POST /v1/services: ReadServiceObject with a catalogue of two templates, then ResolveService;
//   1: POST /v1/jobs: ReadJobBatch with the same catalogue (a job, an array or a pipeline naming a
//      template), then ResolveJob on each job;
//   2: POST /v1/templates: ReadTemplate (a YAML::Exception is the API's 400, as in Create), then
//      the template added to a catalogue and applied to a job of its tenant that names it, with
//      that job read and resolved as a submit would be.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_state.h"
#include "server/body_reader.h"
#include "spec/job_spec.h"
#include "spec/job_template.h"
#include "spec/service_reader.h"

namespace {

using namespace allot;

// research's and research/nlp's templates, as TemplatesNamedBy builds them from the state.
const TemplateCatalog& Catalogue() {
  static const TemplateCatalog* catalog = [] {
    auto* c = new TemplateCatalog();
    Status a = c->Add("research", "base", "{image: pytorch:2.4, time_limit: 2h, env: {A: '1'}, tasks: {gpus: 1, cpu: 4}}");
    Status b = c->Add("research/nlp", "serve", "{class: inference, tasks: {mps: 25, memory: 16Gi}, env: {B: '2'}}");
    if (!a.ok() || !b.ok()) {
      std::fprintf(stderr, "api_templated_fuzz.cc: the fixture templates do not parse\n");
      std::abort();
    }
    return c;
  }();
  return *catalog;
}

void ServiceBody(const YAML::Node& tree, const ClusterState& state) {
  auto svc = ReadServiceObject(tree, "body", &Catalogue());
  if (svc) (void)ResolveService(*svc, state, "service.");
}

void JobsBody(const YAML::Node& tree, const ClusterState& state, const TemplateCatalog& catalog) {
  auto jobs = ReadJobBatch(tree, "body", &catalog);
  if (!jobs) return;
  for (ScenarioJob& job : *jobs) (void)ResolveJob(job, state, "job.");
}

void TemplateBody(const YAML::Node& tree, const ClusterState& state) {
  if (!tree.IsMap()) return;
  const YamlReader rd("body");
  Result<TemplateDef> def = Err(InvalidArgument(""));
  try {
    def = ReadTemplate(rd, tree, "");
  } catch (const YAML::Exception&) {
    return;
  }
  if (!def) return;
  TemplateCatalog catalog;
  if (!catalog.Add(def->tenant, def->name, def->fields).ok()) return;
  YAML::Node job;
  job["name"] = "templated";
  job["tenant"] = def->tenant;
  job["template"] = def->name;
  JobsBody(job, state, catalog);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ClusterState& state = fuzz::FixtureState();
  const char* type = data[0] & 1 ? "application/yaml" : "application/json";
  auto tree = ReadBody(type, std::string(reinterpret_cast<const char*>(data + 1), size - 1), "");
  if (!tree) return 0;
  switch ((data[0] >> 1) & 3) {
    case 0: ServiceBody(*tree, state); break;
    case 1: JobsBody(*tree, state, Catalogue()); break;
    default: TemplateBody(*tree, state); break;
  }
  return 0;
}
