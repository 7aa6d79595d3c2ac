// The watch stream, GET /v1/events?since=N&wait=S: a long poll over the journaled events the
// caller may see (its tenants' jobs and tenants, the fleet), parked without a thread.
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "core/names.h"
#include "core/quantity.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/auth.h"
#include "state/event_codec.h"

namespace allot {
namespace {

bool AnswerEvents(RouteContext& ctx, uint64_t since, const Principal& who, httplib::Response& res, bool last_look);

// The watch stream: events with a sequence number > since, waiting up to `wait` seconds (at
// most 30) for the first. Only what the caller may see: its tenants' jobs and tenants, the
// fleet (tokens and audit records are not streamed: see /v1/audit). A caller far behind gets
// pages of up to kJournalPage events read back from the journal; `last` is where to go on.
constexpr size_t kJournalPage = 1000;
std::optional<LongPoll> WatchEvents(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  auto since = IntParam(req, "since", 0, INT64_MAX, 0);
  if (!since) {
    ReplyError(res, since.error());
    return std::nullopt;
  }
  auto wait = IntParam(req, "wait", 0, 30, 0);
  if (!wait) {
    ReplyError(res, wait.error());
    return std::nullopt;
  }
  // Parked (holding no thread) until an event comes or the wait ends.
  return LongPoll{"", std::chrono::steady_clock::now() + std::chrono::seconds(*wait),
                  [&ctx, since = static_cast<uint64_t>(*since), who](httplib::Response& res, bool last) {
                    return AnswerEvents(ctx, since, who, res, last);
                  }};
}

// The events after `since` the caller may see, written to `res`; false (nothing written)
// while there are none and this is not the last look.
bool AnswerEvents(RouteContext& ctx, uint64_t since, const Principal& who, httplib::Response& res, bool last_look) {
  uint64_t oldest = 0;
  auto events = ctx.ctl.EventsSince(since, std::chrono::milliseconds(0), &oldest);
  if (since + 1 < oldest) {
    // Further behind than memory keeps (or from before a restart): read a page back from the
    // journal; the caller goes on from `last`.
    auto old = ctx.ctl.JournalEvents(since, kJournalPage);
    if (!old) {
      ReplyError(res, old.error());
      return true;
    }
    events = std::move(*old);
  }
  if (events.empty() && !last_look) return false;
  ctx.ctl.Read([&](const ClusterState& st) {
    Json out = Json::array();
    uint64_t last = since;
    for (const auto& [seq, e] : events) {
      last = seq;
      Json j = {{"seq", seq}, {"time", Seconds(e.time_ms)}, {"type", EventTypeName(e)}};
      TenantId tenant;
      bool fleet = false, sensitive = false;
      auto job_of = [&](JobId id) {
        if (id.valid() && id.value() < st.jobs().size()) {
          j["job"] = st.job(id).spec.name;
          tenant = st.job(id).spec.tenant;
          if (ServiceId svc = st.ServiceOf(id); svc.valid()) j["service"] = st.service(svc).spec.name;
        }
      };
      std::visit([&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, JobSubmitted>) {
          j["job"] = b.spec.name;
          tenant = b.spec.tenant;
        } else if constexpr (std::is_same_v<T, JobPlaced> || std::is_same_v<T, JobRejected> || std::is_same_v<T, JobStopped> ||
                             std::is_same_v<T, JobFinished> || std::is_same_v<T, JobCancelled> ||
                             std::is_same_v<T, JobPreemptionStarted> || std::is_same_v<T, ReservationSet> ||
                             std::is_same_v<T, JobFailed>) {
          job_of(b.job);
        } else if constexpr (std::is_same_v<T, TenantUpserted>) {
          j["tenant"] = b.spec.path;
          tenant = st.tenants().Find(b.spec.path);
        } else if constexpr (std::is_same_v<T, TenantRemoved>) {
          // Gone now: whoever may see its parent may see that it went.
          j["tenant"] = b.path;
          std::string_view parent = ParentPath(b.path);
          tenant = parent.empty() ? TenantId() : st.tenants().Find(parent);
        } else if constexpr (std::is_same_v<T, TenantMoved>) {
          j["tenant"] = b.to;
          j["from"] = b.path;
          tenant = st.tenants().Find(b.to);
        } else if constexpr (std::is_same_v<T, TemplateSaved> || std::is_same_v<T, TemplateRemoved>) {
          // A job template (docs/templates.md): seen by whoever may see its tenant.
          if constexpr (std::is_same_v<T, TemplateSaved>) {
            j["template"] = b.template_.name;
            tenant = b.template_.tenant;
          } else {
            j["template"] = b.name;
            tenant = b.tenant;
          }
        } else if constexpr (std::is_same_v<T, ReservationBooked>) {
          j["reservation"] = b.spec.name;
          tenant = b.spec.tenant;
        } else if constexpr (std::is_same_v<T, ReservationCancelled> || std::is_same_v<T, ReservationEndSet> ||
                             std::is_same_v<T, ReservationShrunk> || std::is_same_v<T, ReservationNodeAccepted> ||
                             std::is_same_v<T, ReservationHoldMoved>) {
          if (b.id.valid() && b.id.value() < st.reservations().size()) {
            j["reservation"] = st.reservations()[b.id.value()].spec.name;
            tenant = st.reservations()[b.id.value()].spec.tenant;
          }
          auto name = [&](NodeId n) { return n.valid() && n.value() < st.fleet().size() ? st.fleet().node(n).name : ""; };
          if constexpr (std::is_same_v<T, ReservationNodeAccepted>) j["node"] = name(b.node);
          if constexpr (std::is_same_v<T, ReservationHoldMoved>) {
            j["node"] = name(b.from);
            j["to"] = name(b.to);
          }
        } else if constexpr (std::is_same_v<T, InterferenceActed> || std::is_same_v<T, InterferenceCleared>) {
          // Filed under the tenant of the job acted on (the neighbour; the victim for a hardening);
          // the other sees it in explain.
          const NodeId node = [&] { if constexpr (std::is_same_v<T, InterferenceActed>) return b.response.node; else return b.node; }();
          if constexpr (std::is_same_v<T, InterferenceActed>) {
            const InterferenceResponse& r = b.response;
            job_of(r.action == InterferenceAction::kHarden ? r.victim : r.neighbour);
            j["gpu"] = r.gpu;
            j["action"] = InterferenceActionName(r.action);
            if (r.action == InterferenceAction::kThrottle) j["percent"] = r.percent;
          } else {
            j["action"] = InterferenceActionName(b.action);
            job_of(b.neighbour);
            j["gpu"] = b.gpu;
          }
          if (node.valid() && node.value() < st.fleet().size()) j["node"] = st.fleet().node(node).name;
          j["why"] = b.why;
        } else if constexpr (std::is_same_v<T, ServiceCreated>) {
          j["service"] = b.spec.name;
          tenant = b.spec.tenant;
        } else if constexpr (std::is_same_v<T, ServiceReplicaAdded> || std::is_same_v<T, ServiceReplicaRestarted> ||
                             std::is_same_v<T, ServiceReplicaRemoved> || std::is_same_v<T, ServiceScaled> ||
                             std::is_same_v<T, ServiceUpdated> || std::is_same_v<T, ServiceDeleted>) {
          // A load balancer follows these: which replica came, went or restarted, and where.
          if (b.service.valid() && b.service.value() < st.services().size()) {
            const Service& svc = st.service(b.service);
            j["service"] = svc.spec.name;
            tenant = svc.spec.tenant;
          }
          if constexpr (std::is_same_v<T, ServiceReplicaAdded>) {
            j["job"] = b.spec.name;
            j["port"] = b.port;
            j["revision"] = b.revision;
          }
          if constexpr (std::is_same_v<T, ServiceReplicaRestarted>) {
            if (b.job.valid() && b.job.value() < st.jobs().size()) j["job"] = st.job(b.job).spec.name;
            j["why"] = b.reason;
          }
          if constexpr (std::is_same_v<T, ServiceReplicaRemoved>) {
            if (b.job.valid() && b.job.value() < st.jobs().size()) j["job"] = st.job(b.job).spec.name;
            j["why"] = b.why;
          }
          if constexpr (std::is_same_v<T, ServiceScaled>) {
            j["replicas"] = b.desired;
            j["why"] = b.why;
          }
          if constexpr (std::is_same_v<T, ServiceUpdated>) j["why"] = b.why;
        } else if constexpr (std::is_same_v<T, NodeAdded> || std::is_same_v<T, NodeRegistered>) {
          j["node"] = b.spec.name;
          fleet = true;
        } else if constexpr (std::is_same_v<T, NodeConditionChanged> || std::is_same_v<T, MigRelayout> ||
                             std::is_same_v<T, NodeFailed> || std::is_same_v<T, MigLayoutReported>) {
          if (b.node.valid() && b.node.value() < st.fleet().size()) j["node"] = st.fleet().node(b.node).name;
          if constexpr (std::is_same_v<T, MigRelayout> || std::is_same_v<T, MigLayoutReported>) j["gpu"] = b.gpu;
          fleet = true;
        } else {
          sensitive = true;  // tokens and audit records: see /v1/audit
        }
      }, e.body);
      bool visible = who.role == Role::kPlatformAdmin || fleet ||
                     (!sensitive && tenant.valid() && Allowed(st.tenants(), who, Action::kRead, tenant));
      if (!visible) continue;
      if (tenant.valid() && !j.contains("tenant")) j["tenant"] = st.tenants().tenant(tenant).path;
      out.push_back(std::move(j));
    }
    Reply(res, 200, {{"events", out}, {"last", last}});
    return 0;
  });
  return true;
}

}  // namespace

void EventRoutes(HttpRouter& http, RouteContext& ctx) {
  http.GetLongPoll("/v1/events", ctx.authed_long_poll([&ctx](const httplib::Request& req, httplib::Response& res, const Principal& who) {
    return WatchEvents(ctx, req, res, who);
  }));
}

}  // namespace allot
