#include "daemon/acceptance_supervisor.h"

#include "scheduler/acceptance.h"

namespace allot {

AcceptanceSupervisor::AcceptanceSupervisor(Controller& ctl, std::shared_ptr<AgentRegistry> agents, int64_t lead_ms)
    : ctl_(ctl), agents_(std::move(agents)), lead_ms_(lead_ms) {}

AcceptanceSupervisor::~AcceptanceSupervisor() { Stop(); }

void AcceptanceSupervisor::Start() {
  ticks_.Start(std::chrono::seconds(1), [this] { Check(); });
}

void AcceptanceSupervisor::Stop() { ticks_.Stop(); }

std::vector<EventBody> AcceptanceSupervisor::Check() {
  const int64_t now = ctl_.now_ms();
  struct Asked {
    ReservationId reservation;
    int32_t window;
    NodeId node;
    std::string name;
  };
  std::vector<Asked> asked = ctl_.Read([&](const ClusterState& st) {
    std::vector<Asked> out;
    for (const CapacityReservation& r : st.reservations()) {
      const size_t i = r.spec.CurrentWindow(now);
      if (!InAcceptance(r, i, now, lead_ms_)) continue;
      for (const NodeHold& h : r.holds[i]) {
        if (AcceptanceAsked(r, i, h.node, now, lead_ms_)) {
          out.push_back({r.id, static_cast<int32_t>(i), h.node, st.fleet().node(h.node).name});
        }
      }
    }
    return out;
  });
  // What the asked nodes' agents answered (settled runs only).
  std::vector<AcceptanceAnswer> answers;
  for (const Asked& a : asked) {
    auto session = agents_->Get(a.name);
    if (!session) continue;
    for (const AcceptanceReport& rep : session->acceptance) {
      if (rep.reservation_id != a.reservation.value() || rep.window != a.window || rep.state == "running") continue;
      answers.push_back({a.reservation, a.window, a.node, rep.state == "passed", rep.Why()});
    }
  }
  struct Step {
    EventBody event;
    AuditContext audit;
  };
  std::vector<Step> steps = ctl_.Read([&](const ClusterState& st) {
    std::vector<Step> out;
    for (EventBody& e : PlanAcceptance(st, now, lead_ms_, answers)) {
      AuditContext audit{"allotd", Role::kPlatformAdmin, "", "", "", ""};
      std::visit([&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, ReservationNodeAccepted> || std::is_same_v<T, ReservationHoldMoved>) {
          const CapacityReservation& r = st.reservations()[b.id.value()];
          audit.tenant = st.tenants().tenant(r.spec.tenant).path;
          const std::string where = r.spec.name + " windows[" + std::to_string(b.window) + "] ";
          if constexpr (std::is_same_v<T, ReservationNodeAccepted>) {
            audit.action = "reservation.acceptance";
            audit.target = where + st.fleet().node(b.node).name + (b.passed ? " passed" : " failed: " + b.why);
          } else {
            audit.action = "reservation.hold_move";
            audit.target = where + st.fleet().node(b.from).name + " -> " + st.fleet().node(b.to).name + ": " + b.why;
          }
        }
      }, e);
      out.push_back({std::move(e), std::move(audit)});
    }
    return out;
  });
  std::vector<EventBody> done;
  for (Step& s : steps) {
    EventBody copy = s.event;
    if (ctl_.Execute(std::move(s.event), std::move(s.audit))) done.push_back(std::move(copy));
  }
  return done;
}

}  // namespace allot
