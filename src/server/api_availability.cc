// Live availability and the capacity calendar (issue 16): what is free now, the earliest start
// of an ask, and free, reserved and in-use GPUs of a model over time. Both read the reservation
// book with every running job's whole GPUs added as busy until its expected end.
#include <httplib.h>

#include <algorithm>
#include <bit>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/calendar.h"
#include "core/names.h"
#include "core/quantity.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/auth.h"
#include "spec/field_limits.h"
#include "spec/reservation_spec.h"
#include "state/reservation.h"

namespace allot {
namespace {

// How far ahead an earliest start is looked for, from the asked time.
constexpr int64_t kMaxCalendarSteps = 1000;

// The most queued jobs ahead an availability answer places before the asked capacity.
constexpr size_t kMaxQueuedAhead = 32;

// Each running job's whole GPUs of `gpu` busy from `now` to its expected end (held for good when
// it has none), per node, beside the state's book (not a copy of it); keyed by ids from the top
// of the range, which `job_of` maps back to the job and its busy window. Queued jobs ahead are
// added later, where they would start.
struct JobBusy {
  JobId job;
  Window window;
  bool queued = false;
};
struct RunningJobs {
  ReservationBook::BusyByNode busy;
  std::map<BookingId, JobBusy> job_of;
};
RunningJobs RunningJobsOf(const ClusterState& st, ResourceId gpu, int64_t now) {
  RunningJobs out;
  uint32_t next = UINT32_MAX - 1;
  for (JobId j : st.active()) {
    const Job& job = st.job(j);
    if (job.spec.gpu_resource != gpu) continue;
    int64_t end = job.expected_end_ms;
    if (end <= now || end > now + 2 * kReservationSearchHorizonMs) end = now + 2 * kReservationSearchHorizonMs;  // no expected end: held
    const BookingId id(next--);
    bool any = false;
    for (const TaskPlacement& p : job.placement) {
      if (p.share.kind != ShareKind::kWhole || p.gpu_mask == 0) continue;
      out.busy.Add(p.node, {{now, end}, std::popcount(p.gpu_mask), id});
      any = true;
    }
    if (any) out.job_of[id] = {j, {now, end}, false};
  }
  out.busy.Seal(st.fleet().size());
  return out;
}

// The tenant's own pending whole-GPU jobs of `gpu` (not in a reservation), in queue order: each
// placed, in turn, at its earliest start beside what is busy so far, for its time limit (else its
// duration), and added as busy there. At most kMaxQueuedAhead; a job with no known run time
// holds its GPUs from its start for good. Returns how many were placed.
size_t AddQueuedAhead(const ClusterState& st, TenantId tenant, ResourceId gpu, int64_t now, RunningJobs& jobs) {
  std::vector<const Job*> queued;
  for (JobId id : st.pending()) {
    const Job& j = st.job(id);
    if (j.spec.tenant != tenant || j.spec.gpu_resource != gpu || j.has_shares || !j.spec.reservation.empty() ||
        j.demand.gpu <= 0) {
      continue;
    }
    queued.push_back(&j);
  }
  std::sort(queued.begin(), queued.end(), [](const Job* a, const Job* b) {
    return a->queued_ms != b->queued_ms ? a->queued_ms < b->queued_ms : a->id < b->id;
  });
  if (queued.size() > kMaxQueuedAhead) queued.resize(kMaxQueuedAhead);
  uint32_t next = UINT32_MAX / 2;
  size_t placed = 0;
  for (const Job* j : queued) {
    CapacityAsk ask{gpu, static_cast<int32_t>(j->demand.gpu / kGpuUnit), 0, std::nullopt};
    if (j->spec.topology != Topology::kNone) ask.within = DomainKindOf(j->spec.topology);
    ask.require = j->spec.require;
    ask.confined_only = st.Untrusted(j->spec.tenant);  // where the pass may place it
    const int64_t run = std::min(j->estimated_remaining_ms(), 2 * kReservationSearchHorizonMs);
    auto start = st.book().EarliestStart(st.fleet(), st.resource_names(), ask, now, std::max<int64_t>(run, 1),
                                         now + kReservationSearchHorizonMs, &jobs.busy);
    if (!start) continue;
    auto fit = st.book().Find(st.fleet(), st.resource_names(), ask, {*start, *start + std::max<int64_t>(run, 1)}, BookingId(),
                              &jobs.busy);
    if (!fit.ok()) continue;
    const BookingId id(next--);
    const Window w{*start, *start + std::max<int64_t>(run, 1)};
    for (const NodeHold& h : fit.holds) jobs.busy.Add(h.node, {w, h.gpus, id});
    jobs.busy.Seal(st.fleet().size());
    jobs.job_of[id] = {j->id, w, true};
    ++placed;
  }
  return placed;
}

// GET /v1/availability?model=M&gpus=N|nodes=N[&topology=…][&duration=D][&at=T][&require=R]: GPUs of M free
// now (not held by jobs, not booked now) per zone and rack, and the earliest start of the ask
// for D: after the running jobs' expected ends and the confirmed reservations. R ("driver>=550,cuda>=9.0")
// counts only the nodes whose labels satisfy it.
void Availability(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const std::string model = req.has_param("model") ? req.get_param_value("model") : "";
  auto gpus = IntParam(req, "gpus", 1, 100'000, 0);
  if (!gpus) return ReplyError(res, gpus.error());
  auto nodes = IntParam(req, "nodes", 1, 10'000, 0);
  if (!nodes) return ReplyError(res, nodes.error());
  if ((*gpus > 0) == (*nodes > 0)) return ReplyError(res, InvalidArgument("gpus: give gpus=N or nodes=N, one of them"));
  std::string duration_text = req.has_param("duration") ? req.get_param_value("duration") : "1h";
  auto duration = ParseDurationMs(duration_text);
  if (!duration || *duration < 1000 || *duration > kMaxDurationMs) {
    return ReplyError(res, InvalidArgument("duration: '" + EscapeText(duration_text) + "' is not valid; expected a duration from 1s to 3650d, such as 8h"));
  }
  const int64_t now = ctx.ctl.now_ms();
  auto asked = TimeParam(req, "at", now);
  if (!asked) return ReplyError(res, asked.error());
  const int64_t at = std::max(now, *asked);
  const std::string tenant_path = req.has_param("tenant") ? req.get_param_value("tenant") : "";
  const std::string topology_text = req.has_param("topology") ? req.get_param_value("topology") : "none";
  const std::optional<Topology> topology = ParseTopology(topology_text);
  if (!topology) {
    return ReplyError(res, InvalidArgument("topology: '" + EscapeText(topology_text) + "' is not valid; expected none, nvlink, rack or zone"));
  }
  // require=driver>=550,cuda>=9.0: only nodes whose labels satisfy it (fleet/labels.h).
  auto require = ParseRequirementList("require", req.has_param("require") ? req.get_param_value("require") : "");
  if (!require) return ReplyError(res, require.error());
  ctx.ctl.Read([&](const ClusterState& st) {
    const ResourceId gpu = st.resource_names().Find("gpu/" + model);
    if (model.empty() || gpu == ResourceNames::kInvalid) {
      return ReplyError(res, InvalidArgument("model: '" + EscapeText(model) + "' is not a GPU model of the fleet"));
    }
    ReservationSpec shape;
    shape.require = *require;
    shape.gpu_resource = gpu;
    shape.gpus = static_cast<int32_t>(*gpus);
    shape.nodes = static_cast<int32_t>(*nodes);
    shape.topology = *topology;
    // An untrusted tenant's capacity lies only on nodes whose agent confines tasks in every way.
    const TenantId named = tenant_path.empty() ? TenantId() : st.tenants().Find(tenant_path);
    CapacityAsk ask = shape.Ask();
    ask.confined_only = named.valid() && named != st.tenants().root() && st.Untrusted(named);
    const Bitset& partial = st.fleet().partial_isolation();
    // Free now, per zone and rack: idle whole GPUs of ready nodes, less what is booked now.
    std::map<std::string, int64_t> zones, racks;
    int64_t free_now = 0, idle_nodes = 0, not_offered = 0;
    for (const Node& n : st.fleet().nodes()) {
      if (n.gpu_resource != gpu || n.shared() || !n.schedulable()) continue;
      if (!Satisfies(st.fleet().labels(n.id), *require)) continue;
      if (ask.confined_only && partial.Test(n.id.value())) {
        ++not_offered;
        continue;
      }
      int64_t f = std::max<int64_t>(0, n.free.gpus() - st.book().BookedOn(n.id, {now, now + 1}));
      free_now += f;
      zones[st.fleet().domains(DomainKind::kZone)[n.zone].name] += f;
      racks[st.fleet().domains(DomainKind::kRack)[n.rack].name] += f;
      idle_nodes += f == n.gpu_count;
    }
    RunningJobs jobs = RunningJobsOf(st, gpu, now);
    const ReservationBook& book = st.book();
    // Jobs queued ahead in the tenant's order, when a tenant is named (one the caller may see).
    size_t queued = 0;
    if (!tenant_path.empty()) {
      const TenantId t = named;
      if (!t.valid() || t == st.tenants().root() || !Allowed(st.tenants(), who, Action::kRead, t)) {
        return ReplyError(res, NotFound("tenant: '" + EscapeText(tenant_path) + "' does not exist"));
      }
      queued = AddQueuedAhead(st, t, gpu, now, jobs);
    }
    Json considers = {"running jobs' expected ends (their time limits)", "confirmed reservations"};
    if (!tenant_path.empty()) {
      considers.push_back("the first " + std::to_string(queued) + " job" + (queued == 1 ? "" : "s") + " queued ahead in " +
                          tenant_path + "'s order (at most " + std::to_string(kMaxQueuedAhead) +
                          "), each where it would start");
    }
    Json out = {{"model", model}, {"at", FormatRfc3339(at)}, {"duration", FormatDuration(*duration)},
                {"free_now", {{"gpus", free_now}, {"idle_nodes", idle_nodes}, {"zones", zones}, {"racks", racks}}},
                {"considers", considers}};
    if (!require->empty()) out["require"] = FormatRequirements(*require);
    if (const int64_t n = not_offered; n > 0) {
      out["not_offered"] = std::to_string(n) + " node" + (n == 1 ? "" : "s") +
                           " whose agent cannot confine tasks in every way (isolation=partial): the tenant is untrusted";
    }
    if (tenant_path.empty()) out["not_considered"] = "jobs queued ahead: give tenant=PATH to count that tenant's queue";
    auto start = book.EarliestStart(st.fleet(), st.resource_names(), ask, at, *duration, at + kReservationSearchHorizonMs, &jobs.busy);
    if (!start) {
      // The fleet itself, with nothing booked or running, when it is too small; else now's shortfall.
      auto never = ReservationBook().Find(st.fleet(), st.resource_names(), ask, {at, at + *duration});
      auto fit = book.Find(st.fleet(), st.resource_names(), ask, {at, at + *duration}, BookingId(), &jobs.busy);
      out["earliest_start"] = nullptr;
      out["why"] = "no window of " + FormatDuration(*duration) + " fits within a year: " +
                   (!never.ok() ? never.shortfall->reason + ", with nothing booked or running"
                                : fit.shortfall ? fit.shortfall->reason : std::string("bookings and running jobs fill it"));
      Reply(res, 200, out);
      return;
    }
    out["earliest_start"] = FormatRfc3339(*start);
    // What it waited for: what holds GPUs on the chosen nodes between `at` and the start.
    Json waited = Json::array();
    if (*start > at) {
      auto fit = book.Find(st.fleet(), st.resource_names(), ask, {*start, *start + *duration}, BookingId(), &jobs.busy);
      std::set<BookingId> seen;
      for (const NodeHold& h : fit.holds) {
        for (BookingId b : book.BookingsOn(h.node, {at, *start}, &jobs.busy)) {
          if (!seen.insert(b).second || waited.size() >= 20) continue;
          // Named only when the caller may see its tenant.
          TenantId owner;
          std::string name;
          Json item;
          if (auto it = jobs.job_of.find(b); it != jobs.job_of.end()) {
            item = {{"ends", FormatRfc3339(it->second.window.end_ms)}, {"kind", it->second.queued ? "queued job" : "job"}};
            owner = st.job(it->second.job).spec.tenant;
            name = st.job(it->second.job).spec.name;
          } else {
            item = {{"ends", FormatRfc3339(book.Get(b)->window.end_ms)}, {"kind", "reservation"}};
            const CapacityReservation& r = st.reservations()[ClusterState::ReservationOf(b).value()];
            owner = r.spec.tenant;
            name = r.spec.name;
          }
          if (Allowed(st.tenants(), who, Action::kRead, owner)) {
            item["name"] = name;
            item["tenant"] = st.tenants().tenant(owner).path;
          }
          waited.push_back(item);
        }
      }
    }
    out["waited_for"] = waited;
    Reply(res, 200, out);
  });
}


// GET /v1/calendar?model=M[&from=T][&to=T][&step=D]: per step, the GPUs of M free (on ready
// whole-GPU nodes, less what is booked and what running jobs hold at the step's busiest), reserved
// and in use by running jobs (until their expected ends). Default: now to 7 days on, hourly; at
// most 1000 steps.
void Calendar(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal&) {
  const std::string model = req.has_param("model") ? req.get_param_value("model") : "";
  const int64_t now = ctx.ctl.now_ms();
  auto from = TimeParam(req, "from", now);
  if (!from) return ReplyError(res, from.error());
  auto to = TimeParam(req, "to", *from + 7 * kDayMs);
  if (!to) return ReplyError(res, to.error());
  std::string step_text = req.has_param("step") ? req.get_param_value("step") : "1h";
  auto step = ParseDurationMs(step_text);
  if (!step || *step < 60'000 || *step > 366 * kDayMs) {
    return ReplyError(res, InvalidArgument("step: '" + EscapeText(step_text) + "' is not valid; expected a duration from 1m to 366d, such as 1h"));
  }
  if (*to <= *from) return ReplyError(res, InvalidArgument("to: not after from; expected a later time"));
  if ((*to - *from + *step - 1) / *step > kMaxCalendarSteps) {
    return ReplyError(res, InvalidArgument("step: " + FormatDuration(*step) + " from " + FormatRfc3339(*from) + " to " +
                                           FormatRfc3339(*to) + " is more than " + std::to_string(kMaxCalendarSteps) +
                                           " steps; expected a longer step or a shorter span"));
  }
  ctx.ctl.Read([&](const ClusterState& st) {
    const ResourceId gpu = st.resource_names().Find("gpu/" + model);
    if (model.empty() || gpu == ResourceNames::kInvalid) {
      return ReplyError(res, InvalidArgument("model: '" + EscapeText(model) + "' is not a GPU model of the fleet"));
    }
    const RunningJobs jobs = RunningJobsOf(st, gpu, now);
    std::vector<NodeId> nodes;
    int64_t capacity = 0;
    for (const Node& n : st.fleet().nodes()) {
      if (!ReservationBook::Offered(n, gpu)) continue;
      nodes.push_back(n.id);
      capacity += n.gpu_count;
    }
    Json steps = Json::array();
    for (int64_t t = *from; t < *to; t += *step) {
      const Window w{t, std::min(t + *step, *to)};
      int64_t free = 0, reserved = 0, in_use = 0;
      for (NodeId id : nodes) {
        const int32_t count = st.fleet().node(id).gpu_count;
        reserved += std::min(count, st.book().BookedOn(id, w));
        free += std::max(0, count - st.book().BookedOn(id, w, BookingId(), &jobs.busy));
        for (const ReservationBook::Busy& b : jobs.busy.On(id)) {
          if (b.window.Overlaps(w)) in_use += b.gpus;
        }
      }
      steps.push_back({{"start", FormatRfc3339(w.start_ms)}, {"free", free}, {"reserved", reserved}, {"in_use", in_use}});
    }
    Reply(res, 200, {{"model", model}, {"from", FormatRfc3339(*from)}, {"to", FormatRfc3339(*to)},
                     {"step", FormatDuration(*step)}, {"capacity", capacity}, {"steps", steps}});
  });
}

}  // namespace

void AvailabilityRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Get("/v1/availability", ctx.Handle(Availability));
  http.Get("/v1/calendar", ctx.Handle(Calendar));
}

}  // namespace allot
