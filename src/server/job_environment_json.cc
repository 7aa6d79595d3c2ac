#include "server/job_environment_json.h"

#include "wire/json_fields.h"

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

}  // namespace allot
