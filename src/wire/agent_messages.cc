#include "wire/agent_messages.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "core/quantity.h"
#include "wire/json_fields.h"

namespace allot {
namespace {

using Fields = JsonFields;

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

std::string HealthReport::Failures() const {
  std::string out;
  for (const HealthCheck& c : checks) {
    if (c.ok) continue;
    if (!out.empty()) out += "; ";
    out += c.name + ": " + c.detail;
  }
  return out;
}

Json MigLayoutsJson(const std::vector<MigGpuLayout>& layouts) {
  Json out = Json::array();
  for (const MigGpuLayout& l : layouts) {
    Json instances = Json::array();
    for (const MigGpuLayout::Instance& i : l.instances) instances.push_back({{"profile", i.profile}, {"start", i.start}});
    out.push_back({{"gpu", l.gpu}, {"instances", instances}});
  }
  return out;
}

Json RegistrationJson(const NodeSpec& spec, const AgentIdentity& session, const std::vector<Json>& gpus) {
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
  Json labels = Json::object();
  for (const auto& [name, value] : spec.labels) labels[name] = value;
  j["labels"] = std::move(labels);
  if (session.isolation_gaps) j["isolation"] = {{"gaps", *session.isolation_gaps}};
  return j;
}

Result<Heartbeat> ParseHeartbeat(const Json& body) {
  Fields f(body, "heartbeat");
  Heartbeat hb;
  hb.node = f.Str("node", true);
  const Json& gpus = f.Array("gpus");
  for (size_t i = 0; i < gpus.size() && f.ok(); ++i) {
    Fields g(gpus[i], f, "gpus", i);
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
    const Json& activity = g.Array("tasks");
    for (size_t k = 0; k < activity.size() && g.ok(); ++k) {
      Fields a(activity[k], g, "tasks", k);
      TaskGpuActivity ta;
      ta.job_id = a.Int("job_id", -1, 0, INT64_MAX);
      ta.task = static_cast<int>(a.Int("task", 0, 0, 1 << 20));
      ta.run = static_cast<int>(a.Int("run", 0, 0, 1 << 30));
      if (a.Has("sm_percent")) ta.sm_percent = a.Int("sm_percent", 0, 0, 100);
      if (a.Has("memory_percent")) ta.memory_percent = a.Int("memory_percent", 0, 0, 100);
      if (a.Has("p99_us")) ta.p99_us = a.Int("p99_us", 0, 0, int64_t{3600} * 1000000);
      ta.bad_latency_lines = a.Int("bad_latency_lines", 0, 0, INT64_MAX);
      if (!a.Has("job_id")) a.Fail("job_id", "missing");
      if (!a.ok()) g.Fail(a.error());
      t.tasks.push_back(ta);
    }
    if (!g.ok()) f.Fail(g.error());
    hb.gpus.push_back(std::move(t));
  }
  const Json& tasks = f.Array("tasks");
  for (size_t i = 0; i < tasks.size() && f.ok(); ++i) {
    Fields t(tasks[i], f, "tasks", i);
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
    r.job_id = t.Int("job_id", -1, -1, UINT32_MAX);
    if (t.ok() && r.exited && r.reason.empty()) t.Fail("reason", "an exited task must say how it ended");
    if (!t.ok()) f.Fail(t.error());
    hb.tasks.push_back(std::move(r));
  }
  const Json& loads = f.Array("loads");
  for (size_t i = 0; i < loads.size() && f.ok(); ++i) {
    Fields l(loads[i], f, "loads", i);
    TaskLoad x;
    x.job_id = l.Int("job_id", -1, 0, UINT32_MAX);
    x.task = static_cast<int>(l.Int("task", 0, 0, 1 << 20));
    x.run = static_cast<int>(l.Int("run", 0, 0, 1 << 30));
    x.load_milli = l.Int("load_milli", 0, 0, int64_t{1'000'000'000} * 1000);
    if (!l.Has("job_id")) l.Fail("job_id", "missing");
    if (!l.ok()) f.Fail(l.error());
    hb.loads.push_back(x);
  }
  const Json& scrubs = f.Array("scrubs");
  for (size_t i = 0; i < scrubs.size() && f.ok(); ++i) {
    Fields s(scrubs[i], f, "scrubs", i);
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
  if (f.ok()) {
    auto clusters = ParseClusterReports(body);
    if (!clusters) return Err(clusters.error());
    hb.clusters = std::move(*clusters);
  }
  if (f.ok()) {
    auto acceptance = ParseAcceptanceReports(body);
    if (!acceptance) return Err(acceptance.error());
    hb.acceptance = std::move(*acceptance);
  }
  if (f.Has("health") && f.ok()) {
    Fields h(body["health"], f.Path("health"));
    HealthReport report;
    report.check = static_cast<uint64_t>(h.Int("check", 0, 0));
    report.acceptance = h.Bool("acceptance");
    report.at_ms = h.Int("at_ms");
    const Json& checks = h.Array("checks");
    for (size_t i = 0; i < checks.size() && h.ok(); ++i) {
      Fields c(checks[i], h, "checks", i);
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
  if (!g.tasks.empty()) {
    Json tasks = Json::array();
    for (const TaskGpuActivity& t : g.tasks) {
      Json a = {{"job_id", t.job_id}, {"task", t.task}, {"run", t.run}};
      if (t.sm_percent) a["sm_percent"] = *t.sm_percent;
      if (t.memory_percent) a["memory_percent"] = *t.memory_percent;
      if (t.p99_us) a["p99_us"] = *t.p99_us;
      if (t.bad_latency_lines > 0) a["bad_latency_lines"] = t.bad_latency_lines;
      tasks.push_back(std::move(a));
    }
    j["tasks"] = std::move(tasks);
  }
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
    if (t.job_id >= 0) tasks.back()["job_id"] = t.job_id;
  }
  Json scrubs = Json::array();
  for (const ScrubReport& s : hb.scrubs) {
    scrubs.push_back({{"gpu", s.gpu}, {"uuid", s.uuid}, {"from", s.from}, {"to", s.to}, {"ok", s.ok}, {"detail", s.detail}});
  }
  Json out = {{"node", hb.node}, {"gpus", gpus}, {"tasks", tasks}, {"scrubs", scrubs}};
  if (!hb.loads.empty()) {
    Json loads = Json::array();
    for (const TaskLoad& l : hb.loads) {
      loads.push_back({{"job_id", l.job_id}, {"task", l.task}, {"run", l.run}, {"load_milli", l.load_milli}});
    }
    out["loads"] = std::move(loads);
  }
  if (!hb.mig.empty()) out["mig"] = MigLayoutsJson(hb.mig);
  if (!hb.clusters.empty()) out["clusters"] = ClusterReportsJson(hb.clusters);
  if (!hb.acceptance.empty()) out["acceptance"] = AcceptanceReportsJson(hb.acceptance);
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

TaskReport ReportOn(const Assignment& a) {
  TaskReport r;
  r.job = a.job;
  r.job_id = a.job_id;
  r.task = a.task;
  r.run = a.run;
  return r;
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
    if (std::string share = t.Str("share"); !share.empty()) {
      if (auto kind = ParseShareKind(share)) {
        a.share = *kind;
      } else {
        t.Fail("share", "'" + share + "' is not a share kind; expected whole, mig, mps or timeslice");
      }
    }
    a.mig_profile = t.Str("mig_profile");
    a.mig_start = static_cast<int>(t.Int("mig_start", 0, 0, 7));
    a.mps_percent = static_cast<int>(t.Int("mps_percent", 0, 0, 100));
    a.mps_memory_mib = t.Int("mps_memory_mib", 0, 0);
    a.mps_throttle_percent = static_cast<int>(t.Int("mps_throttle_percent", 0, 0, 100));
    a.cpu_millis = t.Int("cpu_millis", 0, 0);
    a.memory_mib = t.Int("memory_mib", 0, 0);
    a.time_limit_ms = t.Int("time_limit_ms", 0, 0);
    a.vram_mib = t.Int("vram_mib", 0, 0);
    a.started_ms = t.Int("started_ms");
    a.preempt_deadline_ms = t.Int("preempt_deadline_ms", -1);
    a.master_addr = t.Str("master_addr");
    a.array_index = static_cast<int32_t>(t.Int("array_index", -1, -1, INT32_MAX));
    a.frame = t.Int("frame", -1, -1);
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
