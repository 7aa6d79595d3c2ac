// Reservations over the REST API (issue 16): book (POST /v1/reservations), list, show, cancel
// (DELETE), move a window's end (PATCH), and live availability with the earliest start
// (GET /v1/availability). Roles as for jobs: a tenant's members book for it; a reservation of
// a tenant the caller cannot see does not exist for it. Times are RFC 3339.
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
#include "server/body_reader.h"
#include "server/job_lookup.h"
#include "spec/reservation_spec.h"

namespace allot {
namespace {

constexpr int64_t kDayMs = 24 * 3600 * 1000;
// How far ahead an earliest start is looked for, from the asked time.
constexpr int64_t kSearchHorizonMs = 366 * kDayMs;
// How far in the past a window may start when booked (a clock a little behind the caller's).
constexpr int64_t kPastSlackMs = 60 * 1000;

std::string ModelName(const ClusterState& st, ResourceId r) { return st.resource_names().Name(r).substr(4); }

Json ReservationJson(const ClusterState& st, const CapacityReservation& r) {
  const ReservationSpec& s = r.spec;
  Json windows = Json::array();
  for (size_t i = 0; i < s.windows.size(); ++i) {
    Json holds = Json::array();
    for (const NodeHold& h : r.holds[i]) holds.push_back({{"node", st.fleet().node(h.node).name}, {"gpus", h.gpus}});
    windows.push_back({{"start", FormatRfc3339(s.windows[i].start_ms)}, {"end", FormatRfc3339(s.windows[i].end_ms)},
                       {"holds", holds}});
  }
  Json out = {{"name", s.name},
              {"tenant", st.tenants().tenant(s.tenant).path},
              {"model", ModelName(st, s.gpu_resource)},
              {"topology", TopologyName(s.topology)},
              {"state", ReservationStateName(r.state)},
              {"booked", FormatRfc3339(r.booked_ms)},
              {"windows", windows}};
  if (s.nodes > 0) {
    out["nodes"] = s.nodes;
  } else {
    out["gpus"] = s.gpus;
  }
  if (s.drain_before_ms >= 0) out["drain_before"] = FormatDuration(s.drain_before_ms);
  if (r.state == ReservationState::kCancelled) out["cancelled"] = FormatRfc3339(r.cancelled_ms);
  return out;
}

// /v1/reservations/{name}[?tenant=PATH], among the confirmed reservations the caller may see:
// one answer for a missing one and a hidden one, 409 when the name is in several visible tenants.
Result<ReservationId> LookupReservation(const ClusterState& st, const Principal& who, const httplib::Request& req) {
  const std::string name = req.matches[1];
  const QuotaTree& tree = st.tenants();
  if (auto tenant = TenantParam(req)) {
    Status missing = NotFound("reservation '" + EscapeText(name) + "' does not exist in tenant '" + EscapeText(*tenant) + "'");
    TenantId t = tree.Find(*tenant);
    if (!t.valid() || !Allowed(tree, who, Action::kRead, t)) return Err(missing);
    ReservationId id = st.FindReservation(t, name);
    return id.valid() ? Result<ReservationId>(id) : Err(missing);
  }
  std::vector<ReservationId> visible;
  for (const CapacityReservation& r : st.reservations()) {
    if (r.state == ReservationState::kConfirmed && r.spec.name == name && Allowed(tree, who, Action::kRead, r.spec.tenant)) {
      visible.push_back(r.id);
    }
  }
  if (visible.empty()) return Err(NotFound("reservation '" + EscapeText(name) + "' does not exist"));
  if (visible.size() == 1) return visible[0];
  std::string list;
  for (ReservationId id : visible) list += (list.empty() ? "" : ", ") + tree.tenant(st.reservations()[id.value()].spec.tenant).path;
  return Err(Conflict("reservation '" + EscapeText(name) + "' exists in " + std::to_string(visible.size()) + " tenants (" +
                      list + "); expected ?tenant=PATH to say which"));
}

// The names of the bookings `ids` a caller may see; the others are counted, not named.
Json Colliding(const ClusterState& st, const Principal& who, const std::vector<BookingId>& ids) {
  std::set<uint32_t> seen;
  Json names = Json::array();
  int hidden = 0;
  for (BookingId b : ids) {
    uint32_t r = b.value() / static_cast<uint32_t>(kMaxReservationWindows);
    if (r >= st.reservations().size() || !seen.insert(r).second) continue;
    const CapacityReservation& x = st.reservations()[r];
    if (Allowed(st.tenants(), who, Action::kRead, x.spec.tenant)) {
      names.push_back(st.tenants().tenant(x.spec.tenant).path + "/" + x.spec.name);
    } else {
      ++hidden;
    }
  }
  return {{"visible", names}, {"others", hidden}};
}

// Adds `extra` to the error object a refusal wrote.
void AddToError(httplib::Response& res, const Json& extra) {
  Json body = Json::parse(res.body, nullptr, false);
  if (!body.is_object() || !body.contains("error")) return;
  for (const auto& [k, v] : extra.items()) body["error"][k] = v;
  res.set_content(body.dump(), "application/json");
}

void Book(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "reservation.book", "", ctx.request_id(req, res));
  if (req.body.empty()) return ctx.refuse(res, audit, InvalidArgument("body: expected a reservation as JSON"));
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "reservation");
  if (!tree) return ctx.refuse(res, audit, tree.error());
  auto ask = ReadReservationObject(*tree, "body");
  if (!ask) return ctx.refuse(res, audit, ask.error());
  audit.target = ask->name;
  audit.tenant = ask->tenant;
  const int64_t now = ctx.ctl.now_ms();
  Json extra;
  std::optional<ReservationBooked> booking;
  Status planned = ctx.ctl.Read([&](const ClusterState& st) -> Status {
    TenantId t = st.tenants().Find(ask->tenant);
    if (!t.valid() || !Allowed(st.tenants(), who, Action::kRead, t)) {
      return InvalidArgument("tenant: unknown tenant '" + EscapeText(ask->tenant) + "'");
    }
    if (!Allowed(st.tenants(), who, Action::kSubmit, t)) return MayNot(who, "book reservations");
    auto spec = ResolveReservation(*ask, st, "");
    if (!spec) return spec.error();
    if (spec->windows.front().start_ms < now - kPastSlackMs) {
      return InvalidArgument("start: " + FormatRfc3339(spec->windows.front().start_ms) + " is in the past; expected " +
                             FormatRfc3339(now) + " or later");
    }
    if (st.FindReservation(t, spec->name).valid()) {
      return Conflict("reservation '" + spec->name + "' already exists in tenant '" + ask->tenant + "'");
    }
    // Every window must fit, each with its topology, beside every confirmed reservation.
    ReservationBooked b{*spec, {}};
    const CapacityAsk need = spec->Ask();
    for (size_t i = 0; i < spec->windows.size(); ++i) {
      const Window& w = spec->windows[i];
      auto fit = st.book().Find(st.fleet(), st.resource_names(), need, w);
      if (!fit.ok()) {
        auto earliest = st.book().EarliestStart(st.fleet(), st.resource_names(), need, w.start_ms, w.duration_ms(),
                                                w.start_ms + kSearchHorizonMs);
        extra = {{"window", i}, {"colliding", Colliding(st, who, fit.shortfall->colliding)}};
        std::string when = " and no window of the same length fits within a year";
        if (earliest) {
          extra["earliest_start"] = FormatRfc3339(*earliest);
          when = "; the earliest window of the same length that fits starts at " + FormatRfc3339(*earliest);
        }
        return FailedPrecondition("windows[" + std::to_string(i) + "] (" + FormatRfc3339(w.start_ms) + " to " +
                                  FormatRfc3339(w.end_ms) + "): " + fit.shortfall->reason + when);
      }
      b.holds.push_back(std::move(fit.holds));
    }
    booking = std::move(b);
    return Status::Ok();
  });
  if (!planned.ok()) {
    ctx.refuse(res, audit, planned);
    if (!extra.is_null()) AddToError(res, extra);
    return;
  }
  const std::string name = booking->spec.name;
  const TenantId tenant = booking->spec.tenant;
  // The book is checked again as the event applies: a booking that landed in between refuses
  // this one (409) rather than double-booking.
  auto r = ctx.ctl.Execute(std::move(*booking), audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.Read([&](const ClusterState& st) {
    Reply(res, 201, ReservationJson(st, st.reservations()[st.FindReservation(tenant, name).value()]));
    return 0;
  });
}

void List(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const bool all = req.has_param("all") && req.get_param_value("all") == "true";
  ctx.ctl.Read([&](const ClusterState& st) {
    Json out = Json::array();
    for (const CapacityReservation& r : st.reservations()) {
      if (!all && r.state != ReservationState::kConfirmed) continue;
      if (Allowed(st.tenants(), who, Action::kRead, r.spec.tenant)) out.push_back(ReservationJson(st, r));
    }
    Reply(res, 200, {{"reservations", out}});
    return 0;
  });
}

void Show(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  ctx.ctl.Read([&](const ClusterState& st) {
    auto id = LookupReservation(st, who, req);
    if (!id) return ReplyError(res, id.error());
    Reply(res, 200, ReservationJson(st, st.reservations()[id->value()]));
  });
}

// Resolves the reservation and checks the caller may change it (kSubmit on its tenant).
Result<ReservationId> ForChange(RouteContext& ctx, const httplib::Request& req, const Principal& who, AuditContext& audit) {
  return ctx.ctl.Read([&](const ClusterState& st) -> Result<ReservationId> {
    auto id = LookupReservation(st, who, req);
    if (!id) return id;
    const ReservationSpec& s = st.reservations()[id->value()].spec;
    audit.tenant = st.tenants().tenant(s.tenant).path;
    if (!Allowed(st.tenants(), who, Action::kSubmit, s.tenant)) return Err(MayNot(who, "change reservations"));
    return id;
  });
}

void Cancel(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "reservation.cancel", std::string(req.matches[1]), ctx.request_id(req, res));
  auto id = ForChange(ctx, req, who, audit);
  if (!id) return ctx.refuse(res, audit, id.error());
  auto r = ctx.ctl.Execute(ReservationCancelled{*id}, audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.Read([&](const ClusterState& st) {
    Reply(res, 200, ReservationJson(st, st.reservations()[id->value()]));
    return 0;
  });
}

// PATCH {"end": RFC3339} or {"duration": "8h"}, optionally {"window": i} (default: the first
// window not yet over): extend (only where its holds stay free) or shorten.
void Change(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "reservation.change", std::string(req.matches[1]), ctx.request_id(req, res));
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "");
  if (!tree) return ctx.refuse(res, audit, tree.error());
  const YamlReader rd("body");
  if (!tree->IsMap()) return ctx.refuse(res, audit, InvalidArgument("body: expected {\"end\"} or {\"duration\"}"));
  if (Status s = rd.Fields(*tree, "", {"end", "duration", "window"}); !s.ok()) return ctx.refuse(res, audit, s);
  const YAML::Node& body = *tree;
  if (static_cast<bool>(body["end"]) == static_cast<bool>(body["duration"])) {
    return ctx.refuse(res, audit, InvalidArgument("body: give end or duration, one of them"));
  }
  auto id = ForChange(ctx, req, who, audit);
  if (!id) return ctx.refuse(res, audit, id.error());
  const int64_t now = ctx.ctl.now_ms();
  ReservationEndSet change{*id, -1, 0};
  Status read = ctx.ctl.Read([&](const ClusterState& st) -> Status {
    const std::vector<Window>& windows = st.reservations()[id->value()].spec.windows;
    if (body["window"]) {
      auto i = rd.Integer(body["window"], "window", 0, static_cast<int64_t>(windows.size()) - 1);
      if (!i) return i.error();
      change.window = static_cast<int32_t>(*i);
    } else {
      for (size_t i = 0; i < windows.size() && change.window < 0; ++i) {
        if (windows[i].end_ms > now) change.window = static_cast<int32_t>(i);
      }
      if (change.window < 0) return FailedPrecondition("every window of the reservation is over");
    }
    const Window& w = windows[static_cast<size_t>(change.window)];
    if (body["end"]) {
      auto s = rd.Scalar(body["end"], "end");
      if (!s) return s.error();
      auto t = ParseRfc3339(*s);
      if (!t) return InvalidArgument("body: end: '" + EscapeText(*s) + "' is not a time; expected RFC 3339 with an offset");
      change.end_ms = *t;
    } else {
      auto d = rd.Bounded(body["duration"], "duration", ParseDurationMs, 1000, 3650 * kDayMs, "a duration from 1s to 3650d");
      if (!d) return d.error();
      change.end_ms = w.start_ms + *d;
    }
    if (change.end_ms < now) return InvalidArgument("end: " + FormatRfc3339(change.end_ms) + " is in the past");
    return Status::Ok();
  });
  if (!read.ok()) return ctx.refuse(res, audit, read);
  auto r = ctx.ctl.Execute(change, audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.Read([&](const ClusterState& st) {
    Reply(res, 200, ReservationJson(st, st.reservations()[id->value()]));
    return 0;
  });
}

// GET /v1/availability?model=M&gpus=N|nodes=N[&topology=…][&duration=D][&at=T]: GPUs of M free
// now (not held by jobs, not booked now) per zone and rack, and the earliest start of the ask
// for D: after the running jobs' expected ends and the confirmed reservations.
void Availability(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const std::string model = req.has_param("model") ? req.get_param_value("model") : "";
  auto gpus = IntParam(req, "gpus", 1, 100'000, 0);
  if (!gpus) return ReplyError(res, gpus.error());
  auto nodes = IntParam(req, "nodes", 1, 10'000, 0);
  if (!nodes) return ReplyError(res, nodes.error());
  if ((*gpus > 0) == (*nodes > 0)) return ReplyError(res, InvalidArgument("gpus: give gpus=N or nodes=N, one of them"));
  std::string duration_text = req.has_param("duration") ? req.get_param_value("duration") : "1h";
  auto duration = ParseDurationMs(duration_text);
  if (!duration || *duration < 1000 || *duration > 3650 * kDayMs) {
    return ReplyError(res, InvalidArgument("duration: '" + EscapeText(duration_text) + "' is not valid; expected a duration from 1s to 3650d, such as 8h"));
  }
  const int64_t now = ctx.ctl.now_ms();
  int64_t at = now;
  if (req.has_param("at")) {
    auto t = ParseRfc3339(req.get_param_value("at"));
    if (!t) return ReplyError(res, InvalidArgument("at: '" + EscapeText(req.get_param_value("at")) + "' is not a time; expected RFC 3339 with an offset"));
    at = std::max(now, *t);
  }
  Topology topology = Topology::kNone;
  if (req.has_param("topology")) {
    const std::string t = req.get_param_value("topology");
    if (t == "nvlink") topology = Topology::kNvlink;
    else if (t == "rack") topology = Topology::kRack;
    else if (t == "zone") topology = Topology::kZone;
    else if (t != "none") return ReplyError(res, InvalidArgument("topology: '" + EscapeText(t) + "' is not valid; expected none, nvlink, rack or zone"));
  }
  ctx.ctl.Read([&](const ClusterState& st) {
    const ResourceId gpu = st.resource_names().Find("gpu/" + model);
    if (model.empty() || gpu == ResourceNames::kInvalid) {
      return ReplyError(res, InvalidArgument("model: '" + EscapeText(model) + "' is not a GPU model of the fleet"));
    }
    ReservationSpec shape;
    shape.gpu_resource = gpu;
    shape.gpus = static_cast<int32_t>(*gpus);
    shape.nodes = static_cast<int32_t>(*nodes);
    shape.topology = topology;
    const CapacityAsk ask = shape.Ask();
    // Free now, per zone and rack: idle whole GPUs of ready nodes, less what is booked now.
    std::map<std::string, int64_t> zones, racks;
    int64_t free_now = 0, idle_nodes = 0;
    for (const Node& n : st.fleet().nodes()) {
      if (n.gpu_resource != gpu || n.shared() || !n.schedulable()) continue;
      int64_t f = std::max<int64_t>(0, n.free.gpus() - st.book().BookedOn(n.id, {now, now + 1}));
      free_now += f;
      zones[st.fleet().domains(DomainKind::kZone)[n.zone].name] += f;
      racks[st.fleet().domains(DomainKind::kRack)[n.rack].name] += f;
      idle_nodes += f == n.gpu_count;
    }
    // The book with every running job's GPUs held until its expected end.
    ReservationBook with_jobs = st.book();
    std::map<BookingId, JobId> job_of;
    uint32_t next = UINT32_MAX - 1;
    for (JobId j : st.active()) {
      const Job& job = st.job(j);
      std::map<NodeId, int32_t> held;
      for (const TaskPlacement& p : job.placement) {
        if (p.share.kind == ShareKind::kWhole && st.fleet().node(p.node).gpu_resource == gpu) held[p.node] += std::popcount(p.gpu_mask);
      }
      if (held.empty()) continue;
      std::vector<NodeHold> holds;
      for (const auto& [n, g] : held) holds.push_back({n, g});
      int64_t end = std::max(job.expected_end_ms, now + 1);
      if (end > now + kSearchHorizonMs * 2 || end <= now) end = now + kSearchHorizonMs * 2;  // no expected end: held
      BookingId id(next--);
      with_jobs.AddBusy(st.fleet(), id, {now, end}, std::move(holds));
      job_of[id] = j;
    }
    Json out = {{"model", model}, {"at", FormatRfc3339(at)}, {"duration", FormatDuration(*duration)},
                {"free_now", {{"gpus", free_now}, {"idle_nodes", idle_nodes}, {"zones", zones}, {"racks", racks}}},
                {"considers", {"running jobs' expected ends (their time limits)", "confirmed reservations"}},
                {"not_yet_considered", "jobs queued ahead in the tenant's order"}};
    auto start = with_jobs.EarliestStart(st.fleet(), st.resource_names(), ask, at, *duration, at + kSearchHorizonMs);
    if (!start) {
      // The fleet itself, with nothing booked or running, when it is too small; else now's shortfall.
      auto never = ReservationBook().Find(st.fleet(), st.resource_names(), ask, {at, at + *duration});
      auto fit = with_jobs.Find(st.fleet(), st.resource_names(), ask, {at, at + *duration});
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
      auto fit = with_jobs.Find(st.fleet(), st.resource_names(), ask, {*start, *start + *duration});
      std::set<BookingId> seen;
      for (const NodeHold& h : fit.holds) {
        for (BookingId b : with_jobs.BookingsOn(h.node, {at, *start})) {
          if (!seen.insert(b).second || waited.size() >= 20) continue;
          // Named only when the caller may see its tenant.
          const auto* booked = with_jobs.Get(b);
          Json item = {{"ends", FormatRfc3339(booked->window.end_ms)}};
          TenantId owner;
          std::string name;
          if (auto it = job_of.find(b); it != job_of.end()) {
            item["kind"] = "job";
            owner = st.job(it->second).spec.tenant;
            name = st.job(it->second).spec.name;
          } else {
            item["kind"] = "reservation";
            const CapacityReservation& r = st.reservations()[b.value() / static_cast<uint32_t>(kMaxReservationWindows)];
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

}  // namespace

void ReservationRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Post("/v1/reservations", ctx.Handle(Book));
  http.Get("/v1/reservations", ctx.Handle(List));
  http.Get(R"(/v1/reservations/([^/]+))", ctx.Handle(Show));
  http.Delete(R"(/v1/reservations/([^/]+))", ctx.Handle(Cancel));
  http.Patch(R"(/v1/reservations/([^/]+))", ctx.Handle(Change));
  http.Get("/v1/availability", ctx.Handle(Availability));
}

}  // namespace allot
