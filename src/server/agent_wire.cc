#include "server/agent_wire.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"
#include "server/job_environment_json.h"
#include "server/json_fields.h"

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

// "mig": [MigGpuLayout] at `f`; none when absent.
std::vector<MigGpuLayout> ReadMigLayouts(Fields& f) {
  std::vector<MigGpuLayout> out;
  const Json& mig = f.Array("mig");
  for (size_t i = 0; i < mig.size() && f.ok(); ++i) {
    Fields m(mig[i], f.Path("mig") + "[" + std::to_string(i) + "]");
    MigGpuLayout l;
    l.gpu = static_cast<int>(m.Int("gpu", 0, 0, 63));
    const Json& instances = m.Array("instances");
    for (size_t k = 0; k < instances.size() && m.ok(); ++k) {
      Fields in(instances[k], m.Path("instances") + "[" + std::to_string(k) + "]");
      MigGpuLayout::Instance x{in.Str("profile", true), static_cast<int>(in.Int("start", 0, 0, 7))};
      if (!in.ok()) m.Fail(in.error());
      l.instances.push_back(std::move(x));
    }
    if (!m.ok()) f.Fail(m.error());
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

Json MigLayoutsJson(const std::vector<MigGpuLayout>& layouts) {
  Json out = Json::array();
  for (const MigGpuLayout& l : layouts) {
    Json instances = Json::array();
    for (const MigGpuLayout::Instance& i : l.instances) instances.push_back({{"profile", i.profile}, {"start", i.start}});
    out.push_back({{"gpu", l.gpu}, {"instances", instances}});
  }
  return out;
}

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

Result<Registration> ParseRegistration(const Json& body) {
  Fields f(body, "registration");
  Registration r;
  NodeSpec& s = r.spec;
  s.name = f.Str("node", true);
  s.zone = f.Has("zone") ? f.Str("zone") : "default";
  s.rack = f.Has("rack") ? f.Str("rack") : "default";
  s.nvlink_domain = f.Str("nvlink_domain");
  if (!f.ok()) return Err(f.error());
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

Json RegistrationJson(const NodeSpec& spec, const AgentSession& session, const std::vector<Json>& gpus) {
  Json j = {{"node", spec.name},
            {"address", session.address},
            {"zone", spec.zone},
            {"rack", spec.rack},
            {"nvlink_domain", spec.nvlink_domain},
            {"cpu", FormatMilli(spec.cpu)},
            {"memory", FormatMemoryMiB(spec.memory)},
            {"pool", SharingName(spec.sharing)},
            {"mig_layout", spec.mig_layout},
            {"replicas", spec.replicas},
            {"oversubscription", FormatMilli(spec.oversubscription_milli)},
            {"agent_version", session.agent_version},
            {"driver_version", session.driver_version},
            {"gpus", gpus}};
  return j;
}

Result<Heartbeat> ParseHeartbeat(const Json& body) {
  Fields f(body, "heartbeat");
  Heartbeat hb;
  hb.node = f.Str("node", true);
  const Json& gpus = f.Array("gpus");
  for (size_t i = 0; i < gpus.size() && f.ok(); ++i) {
    Fields g(gpus[i], f.Path("gpus") + "[" + std::to_string(i) + "]");
    GpuTelemetry t;
    t.index = static_cast<int>(g.Int("index", 0, 0, 63));
    t.uuid = g.Str("uuid");
    t.utilization_percent = g.Opt("utilization_percent");
    t.memory_used_mib = g.Opt("memory_used_mib");
    t.power_mw = g.Opt("power_mw");
    t.temperature_c = g.Opt("temperature_c");
    t.ecc_corrected = g.Opt("ecc_corrected");
    t.ecc_uncorrected = g.Opt("ecc_uncorrected");
    t.retired_pages = g.Opt("retired_pages");
    for (const Json& x : g.Array("xids")) {
      if (x.is_number_unsigned()) t.xids.push_back(x.get<uint64_t>());
    }
    if (!g.ok()) f.Fail(g.error());
    hb.gpus.push_back(std::move(t));
  }
  const Json& tasks = f.Array("tasks");
  for (size_t i = 0; i < tasks.size() && f.ok(); ++i) {
    Fields t(tasks[i], f.Path("tasks") + "[" + std::to_string(i) + "]");
    TaskReport r;
    r.job = t.Str("job", true);
    r.task = static_cast<int>(t.Int("task", 0, 0, 1 << 20));
    r.run = static_cast<int>(t.Int("run", 0, 0, 1 << 30));
    r.exited = t.Bool("exited");
    r.pid = static_cast<int>(t.Int("pid", 0, 0, 1 << 30));
    r.exit_code = static_cast<int>(t.Int("exit_code", -1, -1, 255));
    r.signal = static_cast<int>(t.Int("signal", 0, 0, 128));
    r.oom_killed = t.Bool("oom_killed");
    r.time_limit_exceeded = t.Bool("time_limit_exceeded");
    r.preempted = t.Bool("preempted");
    r.reason = t.Str("reason");
    r.started_ms = t.Int("started_ms");
    r.ended_ms = t.Int("ended_ms");
    if (t.ok() && r.exited && r.reason.empty()) t.Fail("reason", "an exited task must say how it ended");
    if (!t.ok()) f.Fail(t.error());
    hb.tasks.push_back(std::move(r));
  }
  const Json& scrubs = f.Array("scrubs");
  for (size_t i = 0; i < scrubs.size() && f.ok(); ++i) {
    Fields s(scrubs[i], f.Path("scrubs") + "[" + std::to_string(i) + "]");
    ScrubReport r;
    r.gpu = static_cast<int>(s.Int("gpu", 0, 0, 63));
    r.uuid = s.Str("uuid");
    r.from = s.Str("from", true);
    r.to = s.Str("to", true);
    r.ok = s.Bool("ok");
    r.detail = s.Str("detail");
    if (!s.ok()) f.Fail(s.error());
    hb.scrubs.push_back(std::move(r));
  }
  if (f.ok()) hb.mig = ReadMigLayouts(f);
  if (f.Has("health") && f.ok()) {
    Fields h(body["health"], f.Path("health"));
    HealthReport report;
    report.check = static_cast<uint64_t>(h.Int("check", 0, 0));
    report.acceptance = h.Bool("acceptance");
    report.at_ms = h.Int("at_ms");
    const Json& checks = h.Array("checks");
    for (size_t i = 0; i < checks.size() && h.ok(); ++i) {
      Fields c(checks[i], h.Path("checks") + "[" + std::to_string(i) + "]");
      HealthCheck hc;
      hc.name = c.Str("name", true);
      hc.ok = c.Bool("ok");
      hc.severity = c.Str("severity");
      hc.detail = c.Str("detail");
      if (c.ok() && !hc.ok && hc.severity != "software" && hc.severity != "hardware") {
        c.Fail("severity", "'" + hc.severity + "': expected software or hardware");
      }
      if (!c.ok()) h.Fail(c.error());
      report.checks.push_back(std::move(hc));
    }
    if (!h.ok()) f.Fail(h.error());
    hb.health = std::move(report);
  }
  if (!f.ok()) return Err(f.error());
  return hb;
}

Json GpuTelemetryJson(const GpuTelemetry& g) {
  Json j = {{"index", g.index}, {"uuid", g.uuid}, {"xids", g.xids}};
  auto put = [&](const char* k, const std::optional<int64_t>& v) {
    if (v) j[k] = *v;
  };
  put("utilization_percent", g.utilization_percent);
  put("memory_used_mib", g.memory_used_mib);
  put("power_mw", g.power_mw);
  put("temperature_c", g.temperature_c);
  put("ecc_corrected", g.ecc_corrected);
  put("ecc_uncorrected", g.ecc_uncorrected);
  put("retired_pages", g.retired_pages);
  return j;
}

Json HeartbeatJson(const Heartbeat& hb) {
  Json gpus = Json::array();
  for (const GpuTelemetry& g : hb.gpus) gpus.push_back(GpuTelemetryJson(g));
  Json tasks = Json::array();
  for (const TaskReport& t : hb.tasks) {
    tasks.push_back({{"job", t.job}, {"task", t.task}, {"run", t.run}, {"exited", t.exited}, {"pid", t.pid},
                     {"exit_code", t.exit_code}, {"signal", t.signal}, {"oom_killed", t.oom_killed},
                     {"time_limit_exceeded", t.time_limit_exceeded}, {"preempted", t.preempted}, {"reason", t.reason},
                     {"started_ms", t.started_ms}, {"ended_ms", t.ended_ms}});
  }
  Json scrubs = Json::array();
  for (const ScrubReport& s : hb.scrubs) {
    scrubs.push_back({{"gpu", s.gpu}, {"uuid", s.uuid}, {"from", s.from}, {"to", s.to}, {"ok", s.ok}, {"detail", s.detail}});
  }
  Json out = {{"node", hb.node}, {"gpus", gpus}, {"tasks", tasks}, {"scrubs", scrubs}};
  if (!hb.mig.empty()) out["mig"] = MigLayoutsJson(hb.mig);
  if (hb.health) {
    Json checks = Json::array();
    for (const HealthCheck& c : hb.health->checks) {
      checks.push_back({{"name", c.name}, {"ok", c.ok}, {"severity", c.severity}, {"detail", c.detail}});
    }
    out["health"] = {{"check", hb.health->check}, {"acceptance", hb.health->acceptance}, {"at_ms", hb.health->at_ms},
                     {"checks", checks}};
  }
  return out;
}

Json DesiredTasks(const ClusterState& st, NodeId node, const AgentRegistry& agents) {
  Json tasks = Json::array();
  for (JobId id : st.JobsOn(node)) {
    const Job& j = st.job(id);
    if (j.spec.command.empty()) continue;  // simulated: runs for its duration, not on the node
    std::string master = st.fleet().node(j.placement[0].node).name;
    if (auto s = agents.Get(master); s && !s->address.empty()) master = s->address;
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
      }
      t.update(EnvironmentJson(j.spec.environment));
      if (j.spec.environment.shm_size_mib > 0) t["shm_size_mib"] = j.spec.environment.shm_size_mib;
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

std::string AssignmentVersion(const Json& desired) {
  // FNV-1a 64 over the answer's bytes: stable across processes, unlike std::hash.
  std::string bytes = desired.dump();
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Result<std::vector<Assignment>> ParseAssignments(const Json& body) {
  Fields f(body, "assignments");
  std::vector<Assignment> out;
  const Json& tasks = f.Array("tasks");
  for (size_t i = 0; i < tasks.size() && f.ok(); ++i) {
    std::string at = f.Path("tasks") + "[" + std::to_string(i) + "]";
    Fields t(tasks[i], at);
    Assignment a;
    a.job = t.Str("job", true);
    a.job_id = static_cast<uint32_t>(t.Int("job_id", 0, 0, UINT32_MAX));
    a.run = static_cast<int>(t.Int("run", 0, 0, 1 << 30));
    a.task = static_cast<int>(t.Int("task", 0, 0, 1 << 20));
    a.world_size = static_cast<int>(t.Int("world_size", 1, 1, 1 << 20));
    a.tenant = t.Str("tenant", true);
    a.command = t.Strings("command");
    for (const Json& g : t.Array("gpus")) {
      if (g.is_number_integer()) a.gpus.push_back(g.get<int>());
    }
    a.share = t.Str("share");
    a.mig_profile = t.Str("mig_profile");
    a.mig_start = static_cast<int>(t.Int("mig_start", 0, 0, 7));
    a.mps_percent = static_cast<int>(t.Int("mps_percent", 0, 0, 100));
    a.mps_memory_mib = t.Int("mps_memory_mib", 0, 0);
    a.cpu_millis = t.Int("cpu_millis", 0, 0);
    a.memory_mib = t.Int("memory_mib", 0, 0);
    a.time_limit_ms = t.Int("time_limit_ms", 0, 0);
    a.started_ms = t.Int("started_ms");
    a.preempt_deadline_ms = t.Int("preempt_deadline_ms", -1);
    a.master_addr = t.Str("master_addr");
    if (t.ok()) t.Fail(ReadAssignmentEnvironment(tasks[i], at, a));
    if (t.ok() && a.command.empty()) t.Fail("command", "empty: only command jobs are assigned to agents");
    if (!t.ok()) f.Fail(t.error());
    out.push_back(std::move(a));
  }
  if (!f.ok()) return Err(f.error());
  return out;
}

Result<std::vector<MigGpuLayout>> ParseDesiredMig(const Json& body) {
  Fields f(body, "assignments");
  std::vector<MigGpuLayout> out = ReadMigLayouts(f);
  if (!f.ok()) return Err(f.error());
  return out;
}

std::string SafeFileName(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out == "." || out == ".." ? "%2E" + out.substr(1) : out;
}

std::filesystem::path LogPath(const std::string& log_dir, const std::string& job, int run, int task) {
  return std::filesystem::path(log_dir) / SafeFileName(job) / ("run-" + std::to_string(run)) /
         ("task-" + std::to_string(task) + ".log");
}

}  // namespace allot
