#include "spec/model_reader.h"

#include "spec/model_catalog.h"
#include "spec/model_estimate.h"

namespace allot {

Result<ModelWorkload> ReadModel(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  TRY_STATUS(rd.Fields(n, path, {"name", "parameters", "precision", "context", "batch", "layers", "hidden", "mode", "override"}));
  ModelWorkload m;
  if (const YAML::Node name = n["name"]) {
    TRY_ASSIGN(m.name, rd.Scalar(name, path + ".name"));
    const CatalogModel* c = FindCatalogModel(m.name);
    if (!c) {
      return Err(rd.Error(name, path + ".name", "'" + m.name + "' is not in the model catalogue; expected one of " + CatalogNames() +
                                                    ", or the model's parameters (and layers, hidden) instead of a name"));
    }
    for (const char* shape : {"parameters", "layers", "hidden"}) {
      if (n[shape]) {
        return Err(rd.Error(n[shape], path + "." + shape, "'" + n[shape].Scalar() + "' beside name '" + m.name +
                                                              "', whose catalogue entry sets it; expected either name or the shape, not both"));
      }
    }
    m.parameters = c->parameters;
    m.layers = c->layers;
    m.hidden = c->hidden;
    m.context = c->context;
  } else {
    if (!n["parameters"]) {
      return Err(rd.Error(n, path + ".parameters", "required; expected a count such as 7B, or name: one of " + CatalogNames()));
    }
    std::string p;
    TRY_ASSIGN(p, rd.Scalar(n["parameters"], path + ".parameters"));
    auto count = ParseParameterCount(p);
    if (!count) return Err(rd.Error(n["parameters"], path + ".parameters", count.error().message()));
    m.parameters = *count;
    if (!!n["layers"] != !!n["hidden"]) {
      const char* given = n["layers"] ? "layers" : "hidden";
      const char* missing = n["layers"] ? "hidden" : "layers";
      return Err(rd.Error(n[given], path + "." + missing, std::string("required with ") + given +
                                                          " (the KV cache needs both); expected both or neither"));
    }
    if (n["layers"]) TRY_ASSIGN(m.layers, rd.Integer(n["layers"], path + ".layers", 1, 1000));
    if (n["hidden"]) TRY_ASSIGN(m.hidden, rd.Integer(n["hidden"], path + ".hidden", 1, 262144));
    m.context = kDefaultModelContext;
  }
  if (n["context"]) TRY_ASSIGN(m.context, rd.Integer(n["context"], path + ".context", 1, 16777216));
  if (n["batch"]) TRY_ASSIGN(m.batch, rd.Integer(n["batch"], path + ".batch", 1, 65536));
  if (const YAML::Node p = n["precision"]) {
    std::string t;
    TRY_ASSIGN(t, rd.Scalar(p, path + ".precision"));
    auto precision = ParseModelPrecision(t);
    if (!precision) return Err(rd.Error(p, path + ".precision", "'" + t + "' is not valid; expected fp16, bf16, fp8, int8 or int4"));
    m.precision = *precision;
  }
  if (const YAML::Node md = n["mode"]) {
    std::string t;
    TRY_ASSIGN(t, rd.Scalar(md, path + ".mode"));
    auto mode = ParseModelMode(t);
    if (!mode) return Err(rd.Error(md, path + ".mode", "'" + t + "' is not valid; expected inference, finetune or lora"));
    m.mode = *mode;
  }
  if (m.mode == ModelMode::kFinetune && (m.precision == ModelPrecision::kInt8 || m.precision == ModelPrecision::kInt4)) {
    return Err(rd.Error(n["precision"], path + ".precision", std::string("'") + ModelPrecisionName(m.precision) +
                                                                 "' with mode finetune: quantised integer weights take no gradient; "
                                                                 "expected fp16, bf16 or fp8 (or mode: lora for adapters on them)"));
  }
  if (const YAML::Node o = n["override"]) {
    std::string t;
    TRY_ASSIGN(t, rd.Scalar(o, path + ".override"));
    if (t != "true" && t != "false") return Err(rd.Error(o, path + ".override", "'" + t + "' is not valid; expected true or false"));
    m.override = t == "true";
  }
  const int64_t total = EstimateMemory(m).total_mib();
  if (total >= kMaxSizingEstimateMiB) {
    return Err(rd.Error(n, path, "an estimate of 1Pi or more of GPU memory per task; "
                                 "expected a model, context and batch that need less"));
  }
  return m;
}

}  // namespace allot
