#include "server/job_environment_json.h"

#include "server/json_fields.h"

namespace allot {

Json EnvironmentJson(const JobEnvironment& e) {
  Json out = Json::object();
  if (!e.image.empty()) out["image"] = e.image;
  if (!e.mounts.empty()) {
    Json mounts = Json::array();
    for (const VolumeMount& m : e.mounts) {
      mounts.push_back({{"tenant", m.tenant}, {"volume", m.volume}, {"path", m.path}, {"read_only", m.read_only}});
    }
    out["mounts"] = std::move(mounts);
  }
  if (!e.env.empty()) {
    Json env = Json::object();
    for (const auto& [name, value] : e.env) env[name] = value;
    out["env"] = std::move(env);
  }
  return out;
}

Status ReadAssignmentEnvironment(const Json& task, const std::string& path, Assignment& a) {
  JsonFields t(task, path);
  a.image = t.Str("image");
  const Json& mounts = t.Array("mounts");
  for (size_t i = 0; i < mounts.size() && t.ok(); ++i) {
    JsonFields m(mounts[i], t.Path("mounts") + "[" + std::to_string(i) + "]");
    Assignment::Mount mount{m.Str("tenant", true), m.Str("volume", true), m.Str("path", true), m.Bool("read_only")};
    if (!m.ok()) return m.error();
    a.mounts.push_back(std::move(mount));
  }
  if (t.Has("env")) {
    const Json& env = task["env"];
    if (!env.is_object()) t.Fail("env", "expected an object of NAME: value");
    for (auto it = env.begin(); t.ok() && env.is_object() && it != env.end(); ++it) {
      if (!it.value().is_string()) t.Fail("env", it.key() + ": expected a string");
      else a.env.emplace_back(it.key(), it.value().get<std::string>());
    }
  }
  a.shm_size_mib = t.Int("shm_size_mib", 0, 0);
  return t.error();
}

}  // namespace allot
