#include "server/agent_wire.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "core/names.h"
#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"
#include "server/body_reader.h"
#include "server/job_environment_json.h"
#include "wire/heartbeat_reader.h"
#include "wire/json_fields.h"

namespace allot {
namespace {

using Fields = JsonFields;

// The connected parts of the NVLink graph as GPU index lists; none when one part holds all.
std::vector<std::vector<int>> NvlinkGroups(const std::vector<std::vector<int>>& peers) {
  int n = static_cast<int>(peers.size());
  std::vector<int> part(n, -1);
  std::vector<std::vector<int>> groups;
  for (int s = 0; s < n; ++s) {
    if (part[s] >= 0) continue;
    std::vector<int> stack{s}, members;
    part[s] = static_cast<int>(groups.size());
    while (!stack.empty()) {
      int g = stack.back();
      stack.pop_back();
      members.push_back(g);
      for (int p : peers[g]) {
        if (p >= 0 && p < n && part[p] < 0) {
          part[p] = part[s];
          stack.push_back(p);
        }
      }
    }
    std::sort(members.begin(), members.end());
    groups.push_back(std::move(members));
  }
  if (groups.size() <= 1) return {};
  return groups;
}

}  // namespace

MigGpuLayout MigLayoutWire(const MigGeometry& geo, int gpu, const MigLayout& layout) {
  MigGpuLayout out{gpu, {}};
  for (const MigInstance& i : layout) {
    out.instances.push_back({i.profile < geo.profiles.size() ? std::string(geo.profiles[i.profile].name) : "", i.start});
  }
  std::sort(out.instances.begin(), out.instances.end(),
            [](const auto& a, const auto& b) { return std::tie(a.start, a.profile) < std::tie(b.start, b.profile); });
  return out;
}

Result<MigLayout> MigLayoutFromWire(const MigGeometry& geo, const MigGpuLayout& wire) {
  MigLayout out;
  for (const MigGpuLayout::Instance& i : wire.instances) {
    int p = geo.Find(i.profile);
    if (p < 0) {
      return Err(InvalidArgument("mig: GPU " + std::to_string(wire.gpu) + ": profile '" + i.profile + "' is not one of " +
                                 std::string(geo.model) + "'s"));
    }
    out.push_back({static_cast<uint8_t>(p), static_cast<uint8_t>(i.start)});
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<Heartbeat> ReadHeartbeatBody(const std::string& body) {
  if (std::optional<Heartbeat> plain = ReadPlainHeartbeat(body)) return std::move(*plain);
  auto tree = ParseStrictJson(body);
  if (!tree) return Err(tree.error());
  return ParseHeartbeat(*tree);
}

Result<Registration> ParseRegistration(const Json& body) {
  Fields f(body, "registration");
  Registration r;
  NodeSpec& s = r.spec;
  s.name = f.Str("node", true);
  s.zone = f.Has("zone") ? f.Str("zone") : "default";
  s.rack = f.Has("rack") ? f.Str("rack") : "default";
  s.nvlink_domain = f.Str("nvlink_domain");
  if (!f.ok()) return Err(f.error());
  if (Status ok = CheckName("registration.node", s.name); !ok.ok()) return Err(ok);
  if (auto cpu = ParseMilli(f.Str("cpu", true)); cpu && *cpu > 0) {
    s.cpu = *cpu;
  } else {
    f.Fail("cpu", "'" + f.Str("cpu") + "': expected a number of cores greater than 0");
  }
  if (auto mem = ParseMemoryMiB(f.Str("memory", true)); mem && *mem > 0) {
    s.memory = *mem;
  } else {
    f.Fail("memory", "'" + f.Str("memory") + "': expected a size such as 512Gi");
  }
  std::string pool = f.Has("pool") ? f.Str("pool") : "exclusive";
  if (auto sh = ParseSharing(pool)) {
    s.sharing = *sh;
  } else {
    f.Fail("pool", "'" + pool + "': expected exclusive, mig, mps or timeslice");
  }
  s.mig_layout = f.Strings("mig_layout");
  s.replicas = static_cast<int>(f.Int("replicas", 4, 1, 64));
  if (f.Has("oversubscription")) {
    auto o = ParseMilli(f.Str("oversubscription"));
    if (o && *o >= 1000) {
      s.oversubscription_milli = *o;
    } else {
      f.Fail("oversubscription", "'" + f.Str("oversubscription") + "': expected a factor of at least 1");
    }
  }
  r.session.node = s.name;
  r.session.address = f.Has("address") ? f.Str("address") : s.name;
  r.session.agent_version = f.Str("agent_version");
  r.session.driver_version = f.Str("driver_version");
  if (f.Has("isolation")) {
    Fields iso(body["isolation"], "registration.isolation");
    if (!iso.Has("gaps")) iso.Fail("gaps", "missing; expected [at most 16 strings], like [\"cpu limit\"]");
    std::vector<std::string> gaps = iso.Strings("gaps");
    if (gaps.size() > 16) iso.Fail("gaps", std::to_string(gaps.size()) + " gaps: expected at most 16");
    for (const std::string& g : gaps) {
      if (g.empty() || g.size() > 64) iso.Fail("gaps", "expected strings of 1 to 64 characters, like \"cpu limit\"");
    }
    if (iso.ok()) r.session.isolation_gaps = std::move(gaps);
    f.Fail(iso.error());
  }
  // Labels (an older agent sends none: its driver version becomes the `driver` label).
  if (f.Has("labels")) {
    const Json& labels = body["labels"];
    if (!labels.is_object()) {
      f.Fail("labels", "expected an object of label names to string values");
    } else {
      for (const auto& [name, value] : labels.items()) {
        if (!value.is_string()) {
          f.Fail("labels", "'" + EscapeText(name) + "': expected a string value");
          break;
        }
        s.labels.emplace_back(name, value.get<std::string>());
      }
    }
  } else if (CheckLabelValue("driver", r.session.driver_version).ok()) {
    s.labels.emplace_back("driver", r.session.driver_version);
  }
  SortLabels(s.labels);
  if (f.ok()) {
    if (Status ok = CheckLabels("registration.labels", s.labels); !ok.ok()) return Err(ok);
  }
  const Json& gpus = f.Array("gpus");
  if (gpus.size() > static_cast<size_t>(kMaxGpusPerNode)) f.Fail("gpus", std::to_string(gpus.size()) + " GPUs: at most 64 per node");
  std::vector<std::vector<int>> peers;
  for (size_t i = 0; i < gpus.size() && f.ok(); ++i) {
    Fields g(gpus[i], f.Path("gpus") + "[" + std::to_string(i) + "]");
    std::string uuid = g.Str("uuid", true);
    std::string model = g.Str("model", true);
    if (g.ok() && model.empty()) g.Fail("model", "empty: allot does not know this GPU");
    if (g.ok() && !s.gpu_model.empty() && model != s.gpu_model) {
      g.Fail("model", "'" + model + "': every GPU of a node must be one model; GPU 0 is '" + s.gpu_model + "'");
    }
    if (g.ok() && FindGpuModel(model) == nullptr) g.Fail("model", "'" + model + "' is not in allot's GPU catalog");
    std::vector<int> p;
    for (const Json& v : g.Array("nvlink_peers")) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= static_cast<int64_t>(gpus.size())) {
        g.Fail("nvlink_peers", "expected GPU indices from 0 to " + std::to_string(gpus.size() - 1));
        break;
      }
      p.push_back(v.get<int>());
    }
    if (!g.ok()) return Err(g.error());
    s.gpu_model = model;
    r.session.gpu_uuids.push_back(uuid);
    peers.push_back(std::move(p));
  }
  if (!f.ok()) return Err(f.error());
  s.gpu_count = static_cast<int>(gpus.size());
  if (s.gpu_count == 0 && s.sharing != Sharing::kExclusive) {
    return Err(InvalidArgument("registration.pool: '" + pool + "' needs GPUs; this node reports none"));
  }
  // Peers are symmetric: a link one side reports, the other has.
  for (int g = 0; g < s.gpu_count; ++g) {
    for (int p : peers[g]) {
      if (std::find(peers[p].begin(), peers[p].end(), g) == peers[p].end()) peers[p].push_back(g);
    }
  }
  s.gpu_groups = NvlinkGroups(peers);
  return r;
}

Json DesiredTasks(const ClusterState& st, NodeId node, const AgentRegistry& agents) {
  Json tasks = Json::array();
  for (JobId id : st.JobsOn(node)) {
    const Job& j = st.job(id);
    if (j.spec.command.empty()) continue;  // simulated: runs for its duration, not on the node
    std::string master = st.fleet().node(j.placement[0].node).name;
    if (std::string address = agents.Address(master); !address.empty()) master = std::move(address);
    int64_t time_limit = j.spec.time_limit_ms;
    for (size_t k = 0; k < j.placement.size(); ++k) {
      const TaskPlacement& p = j.placement[k];
      if (p.node != node) continue;
      Json gpus = Json::array();
      for (int g = 0; g < 64; ++g) {
        if (p.gpu_mask >> g & 1) gpus.push_back(g);
      }
      Json t = {{"job", j.spec.name},
                {"job_id", id.value()},
                {"run", CurrentRun(j)},
                {"task", k},
                {"world_size", j.placement.size()},
                {"tenant", st.tenants().tenant(j.spec.tenant).path},
                {"command", j.spec.command},
                {"gpus", gpus},
                {"share", ShareKindName(p.share.kind)},
                {"cpu_millis", p.cpu},
                {"memory_mib", p.memory},
                {"time_limit_ms", time_limit},
                {"started_ms", j.last_started_ms},
                {"preempt_deadline_ms", j.state == JobState::kPreempting ? j.preempt_deadline_ms : -1},
                {"master_addr", master}};
      if (p.share.kind == ShareKind::kMig) {
        const MigGeometry* geo = FindMigGeometry(st.resource_names().Name(j.spec.gpu_resource).substr(4));
        t["mig_profile"] = geo && p.share.mig.profile < geo->profiles.size() ? geo->profiles[p.share.mig.profile].name : "";
        t["mig_start"] = p.share.mig.start;
      } else if (p.share.kind == ShareKind::kMps) {
        t["mps_percent"] = p.share.percent;
        t["mps_memory_mib"] = p.share.memory;
        // A noisy neighbour's throttle (state/interference.h); in the version digest, so it wakes the poll.
        if (int32_t throttle = st.ThrottleOf(node, id, static_cast<int32_t>(k), CurrentRun(j)); throttle > 0) {
          t["mps_throttle_percent"] = throttle;
        }
      }
      t.update(EnvironmentJson(j.spec.environment));
      if (j.spec.environment.shm_size_mib > 0) t["shm_size_mib"] = j.spec.environment.shm_size_mib;
      // The stated GPU memory: an MPS share's limit already; a time-slice share's, checked by the agent.
      if (j.spec.vram_mib > 0) t["vram_mib"] = j.spec.vram_mib;
      if (!j.spec.array.empty()) {
        t["array_index"] = j.spec.array.index;
        if (j.spec.array.frame >= 0) t["frame"] = j.spec.array.frame;
      }
      tasks.push_back(std::move(t));
    }
  }
  const Node& n = st.fleet().node(node);
  Json out = {{"node", n.name}, {"condition", NodeConditionName(n.condition)}, {"tasks", tasks}};
  if (n.pool.sharing == Sharing::kMig && n.pool.mig) {
    std::vector<MigGpuLayout> mig;
    for (int g = 0; g < n.gpu_count; ++g) mig.push_back(MigLayoutWire(*n.pool.mig, g, st.fleet().shares(node)[g].Layout()));
    out["mig"] = MigLayoutsJson(mig);  // in the version digest: a re-layout wakes the long poll
  }
  return out;
}

JobId ReportedJob(const ClusterState& st, NodeId here, const std::string& name, int64_t job_id, int task) {
  auto on_here = [&](JobId id) {
    const Job& j = st.job(id);
    return here.valid() && task >= 0 && task < static_cast<int>(j.placement.size()) && j.placement[task].node == here;
  };
  if (job_id >= 0) {
    if (job_id >= static_cast<int64_t>(st.jobs().size())) return JobId();
    JobId id(static_cast<uint32_t>(job_id));
    return st.job(id).spec.name == name && on_here(id) ? id : JobId();
  }
  JobId found;
  for (JobId id : st.JobsNamed(name)) {
    if (!on_here(id)) continue;
    if (found.valid()) return JobId();  // ambiguous: the agent must say which
    found = id;
  }
  return found;
}

std::filesystem::path LogPath(const std::string& log_dir, const ClusterState& st, JobId job, int run, int task) {
  const std::filesystem::path file = std::filesystem::path("run-" + std::to_string(run)) / ("task-" + std::to_string(task) + ".log");
  const std::string& name = st.job(job).spec.name;
  const std::vector<JobId>& named = st.JobsNamed(name);
  if (!named.empty() && named.front() == job) {
    std::filesystem::path legacy = std::filesystem::path(log_dir) / SafeFileName(name) / file;
    std::error_code ec;
    if (std::filesystem::exists(legacy, ec)) return legacy;
  }
  return std::filesystem::path(log_dir) / ("job=" + std::to_string(job.value())) / file;
}

}  // namespace allot
