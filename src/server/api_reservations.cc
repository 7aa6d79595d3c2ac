// Reservations over the REST API (issue 16): book (POST /v1/reservations), list, show, cancel
// (DELETE), move a window's end (PATCH); availability and the calendar are in
// server/api_availability.cc. Roles as for jobs: a tenant's members book for it; a reservation of
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
#include "spec/field_limits.h"
#include "server/body_reader.h"
#include "server/acceptance_wire.h"
#include "server/cluster_wire.h"
#include "server/job_lookup.h"
#include "spec/reservation_spec.h"

namespace allot {
namespace {

// How far ahead an earliest start is looked for, from the asked time.
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
    out["orchestrator"] = OrchestratorName(s.orchestrator);
  } else {
    out["gpus"] = s.gpus;
  }
  if (s.drain_before_ms >= 0) out["drain_before"] = FormatDuration(s.drain_before_ms);
  if (!s.require.empty()) out["require"] = FormatRequirements(s.require);
  if (r.state == ReservationState::kCancelled) out["cancelled"] = FormatRfc3339(r.cancelled_ms);
  if (!r.shrinks.empty()) {
    Json shrinks = Json::array();
    const char* unit = s.nodes > 0 ? "nodes" : "gpus";
    for (size_t i = 0; i < r.shrinks.size(); ++i) {
      const ReservationShrink& x = r.shrinks[i];
      const int32_t after = i + 1 < r.shrinks.size() ? r.shrinks[i + 1].count_before : (s.nodes > 0 ? s.nodes : s.gpus);
      shrinks.push_back({{"at", FormatRfc3339(x.at_ms)}, {"from_window", x.first_window},
                         {std::string(unit) + "_before", x.count_before}, {std::string(unit) + "_after", after}});
    }
    out["shrinks"] = shrinks;
  }
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
    uint32_t r = ClusterState::ReservationOf(b).value();
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
    ReservationPlan plan = PlanReservation(st, *spec);
    if (plan.shortfall) {
      const size_t i = plan.refused_window;
      const Window& w = spec->windows[i];
      auto earliest = st.book().EarliestStart(st.fleet(), st.resource_names(), st.AskOf(*spec), w.start_ms, w.duration_ms(),
                                              w.start_ms + kReservationSearchHorizonMs);
      extra = {{"window", i}, {"colliding", Colliding(st, who, plan.shortfall->colliding)}};
      std::string when = " and no window of the same length fits within a year";
      if (earliest) {
        extra["earliest_start"] = FormatRfc3339(*earliest);
        when = "; the earliest window of the same length that fits starts at " + FormatRfc3339(*earliest);
      }
      return FailedPrecondition("windows[" + std::to_string(i) + "] (" + FormatRfc3339(w.start_ms) + " to " +
                                FormatRfc3339(w.end_ms) + "): " + plan.shortfall->reason + when);
    }
    booking = std::move(plan.booking);
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
  const int64_t now = ctx.ctl.now_ms();
  ctx.ctl.Read([&](const ClusterState& st) {
    auto id = LookupReservation(st, who, req);
    if (!id) return ReplyError(res, id.error());
    const CapacityReservation& r = st.reservations()[id->value()];
    Json out = ReservationJson(st, r);
    // Now: its current window (open, or the next), what its jobs hold on it and what other work
    // holds on its capacity (lent).
    if (r.state == ReservationState::kConfirmed) {
      const size_t i = r.spec.CurrentWindow(now);
      if (i < r.spec.windows.size()) {
        std::set<JobId> jobs;
        int64_t gpus = 0;
        for (const NodeHold& h : r.holds[i]) {
          for (JobId j : st.JobsOn(h.node)) {
            if (r.Holds(st.job(j))) jobs.insert(j);
          }
          gpus += st.GpusInReservationOn(r.id, h.node);
        }
        out["now"] = {{"window", i}, {"open", r.spec.windows[i].start_ms <= now}, {"jobs", jobs.size()},
                      {"gpus_in_use", gpus}, {"lent_gpus", st.LentGpus(r.id, i)}};
      }
    }
    // Acceptance of the booked nodes (scheduler/acceptance.h): the current window's, and any
    // window's that has records.
    if (r.state == ReservationState::kConfirmed) {
      const size_t current = r.spec.CurrentWindow(now);
      for (size_t i = 0; i < r.spec.windows.size(); ++i) {
        const bool recorded = std::any_of(r.acceptance.begin(), r.acceptance.end(),
                                          [&](const AcceptanceRecord& a) { return static_cast<size_t>(a.window) == i; });
        if (i != current && !recorded) continue;
        Json acceptance = AcceptanceJson(st, r, i);
        if (!acceptance.empty()) out["windows"][i]["acceptance"] = std::move(acceptance);
      }
    }
    // A dedicated cluster's login details, as the booked nodes' agents report them.
    if (r.spec.nodes > 0 && r.state == ReservationState::kConfirmed && ctx.agents) {
      Json access = ClusterAccessJson(st, r, now, *ctx.agents);
      if (!access.empty()) out["access"] = std::move(access);
    }
    Reply(res, 200, out);
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
// window not yet over): extend (only where its holds stay free) or shorten. Or {"gpus": N} /
// {"nodes": N} (as it was booked): shrink every window not yet over to N (ReservationShrunk).
void Change(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "reservation.change", std::string(req.matches[1]), ctx.request_id(req, res));
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "");
  if (!tree) return ctx.refuse(res, audit, tree.error());
  const YamlReader rd("body");
  if (!tree->IsMap()) {
    return ctx.refuse(res, audit, InvalidArgument("body: expected {\"end\"}, {\"duration\"}, {\"gpus\"} or {\"nodes\"}"));
  }
  if (Status s = rd.Fields(*tree, "", {"end", "duration", "window", "gpus", "nodes"}); !s.ok()) return ctx.refuse(res, audit, s);
  const YAML::Node& body = *tree;
  const int asked = static_cast<int>(static_cast<bool>(body["end"])) + static_cast<bool>(body["duration"]) +
                    static_cast<bool>(body["gpus"]) + static_cast<bool>(body["nodes"]);
  if (asked != 1) return ctx.refuse(res, audit, InvalidArgument("body: give one of end, duration, gpus or nodes"));
  auto id = ForChange(ctx, req, who, audit);
  if (!id) return ctx.refuse(res, audit, id.error());
  const int64_t now = ctx.ctl.now_ms();
  if (body["gpus"] || body["nodes"]) {
    const char* field = body["gpus"] ? "gpus" : "nodes";
    if (body["window"]) return ctx.refuse(res, audit, InvalidArgument("window: a shrink applies to every window not yet over; give no window"));
    auto n = rd.Integer(body[field], field, 1, 100'000);
    if (!n) return ctx.refuse(res, audit, n.error());
    Status kind = ctx.ctl.Read([&](const ClusterState& st) -> Status {
      const bool by_node = st.reservations()[id->value()].spec.nodes > 0;
      if (by_node == (std::string(field) == "nodes")) return Status::Ok();
      return InvalidArgument(std::string(field) + ": the reservation was booked by " + (by_node ? "nodes" : "GPUs") +
                             "; expected " + (by_node ? "nodes" : "gpus"));
    });
    if (!kind.ok()) return ctx.refuse(res, audit, kind);
    auto r = ctx.ctl.Execute(ReservationShrunk{*id, static_cast<int32_t>(*n)}, audit);
    if (!r) return ReplyError(res, r.error());
    ctx.ctl.Read([&](const ClusterState& st) {
      Reply(res, 200, ReservationJson(st, st.reservations()[id->value()]));
      return 0;
    });
    return;
  }
  ReservationEndSet change{*id, -1, 0};
  Status read = ctx.ctl.Read([&](const ClusterState& st) -> Status {
    const std::vector<Window>& windows = st.reservations()[id->value()].spec.windows;
    if (body["window"]) {
      auto i = rd.Integer(body["window"], "window", 0, static_cast<int64_t>(windows.size()) - 1);
      if (!i) return i.error();
      change.window = static_cast<int32_t>(*i);
    } else {
      const size_t current = st.reservations()[id->value()].spec.CurrentWindow(now);
      if (current == windows.size()) return FailedPrecondition("every window of the reservation is over");
      change.window = static_cast<int32_t>(current);
    }
    const Window& w = windows[static_cast<size_t>(change.window)];
    if (body["end"]) {
      auto s = rd.Scalar(body["end"], "end");
      if (!s) return s.error();
      auto t = ParseRfc3339(*s);
      if (!t) return InvalidArgument("body: end: '" + EscapeText(*s) + "' is not a time; expected RFC 3339 with an offset");
      change.end_ms = *t;
    } else {
      auto d = rd.Bounded(body["duration"], "duration", ParseDurationMs, 1000, kMaxDurationMs, "a duration from 1s to 3650d");
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

}  // namespace

void ReservationRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Post("/v1/reservations", ctx.Handle(Book));
  http.Get("/v1/reservations", ctx.Handle(List));
  http.Get(R"(/v1/reservations/([^/]+))", ctx.Handle(Show));
  http.Delete(R"(/v1/reservations/([^/]+))", ctx.Handle(Cancel));
  http.Patch(R"(/v1/reservations/([^/]+))", ctx.Handle(Change));
}

}  // namespace allot
