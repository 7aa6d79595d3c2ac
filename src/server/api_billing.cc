#include "server/api_billing.h"

#include <nlohmann/json.hpp>

#include "billing/invoice_json.h"
#include "daemon/ledger_writes.h"
#include "metering/budget_gate.h"
#include "metering/invoice.h"
#include "metering/ledger.h"
#include "metering/rating.h"
#include "metering/state_usage.h"
#include "server/api_bodies.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/body_reader.h"

namespace allot {
namespace {

Status NoRateCard() {
  return FailedPrecondition("billing: allotd runs without a rate card; start it with --rates FILE (or rates: in its config)");
}

void Invoices(Controller& ctl, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const MeteringSink* m = ctl.metering();
  if (m == nullptr) return ReplyError(res, NoRateCard());
  std::string org_path = req.has_param("org") ? req.get_param_value("org") : "";
  std::string period = req.has_param("period") ? req.get_param_value("period") : "";
  std::string format = req.has_param("format") ? req.get_param_value("format") : "json";
  if (format != "json" && format != "csv") {
    return ReplyError(res, InvalidArgument("format: '" + format + "' is not valid; expected json or csv"));
  }
  ctl.ReadView([&](const Controller::View& v) {
    const QuotaTree& tree = v.state.tenants();
    // The org: given, else the caller's scope's.
    TenantId org = org_path.empty() ? tree.OrgOf(who.scope) : tree.Find(org_path);
    if (!org.valid() || org == tree.root()) {
      ReplyError(res, org_path.empty() ? InvalidArgument("org: expected an org (a top-level tenant), e.g. ?org=research")
                                       : NotFound("org '" + org_path + "' does not exist"));
      return 0;
    }
    if (tree.tenant(org).depth != 1) {
      ReplyError(res, InvalidArgument("org: '" + org_path + "' is not an org; expected a top-level tenant"));
      return 0;
    }
    // The caller sees its subtree: the whole org, or the part of it its scope covers.
    TenantId seen = InSubtree(tree, who.scope, org) ? who.scope : org;
    if (!Allowed(tree, who, Action::kRead, seen) || (!InSubtree(tree, org, who.scope) && !InSubtree(tree, who.scope, org))) {
      ReplyError(res, NotFound("org '" + org_path + "' does not exist"));
      return 0;
    }
    const BillingSetup& b = m->billing();
    const std::string& path = tree.tenant(org).path;
    if (period.empty()) period = b.PeriodOf(path, v.now_ms).label;
    auto p = ParseMonth(b.ZoneOf(path), period);
    if (!p) {
      ReplyError(res, InvalidArgument("period: " + p.error().message()));
      return 0;
    }
    auto entries = m->Entries(v.state);
    if (!entries) {
      ReplyError(res, Internal("ledger: " + entries.error().message()));
      return 0;
    }
    const std::string& closed = v.state.billing().closed_period();
    bool is_closed = !closed.empty() && period <= closed;
    if (!is_closed) {
      // A draft: the usage so far priced as the close will price it (lines after any credits).
      auto lines = Rate(RatingInput{tree, v.state.resource_names(), b.card, &v.state.billing().floor_changes(), &v.state.reservations()}, {{org, *p, b.card.ModeOf(path)}},
                        IntervalsFromState(v.state, p->start_ms, p->end_ms, v.now_ms));
      if (!lines) {
        ReplyError(res, lines.error());
        return 0;
      }
      for (LedgerLine& l : *lines) entries->push_back(LedgerEntry{0, std::move(l), "", "", ""});
    }
    auto built = BuildInvoice(*entries, tree.tenant(seen).path, period, b.card.currency);
    if (!built) {
      ReplyError(res, built.error());
      return 0;
    }
    Invoice& inv = *built;
    inv.org = path;
    if (format == "csv") {
      res.status = 200;
      res.set_content(InvoiceCsv(inv), "text/csv");
      return 0;
    }
    Json j = Json::parse(InvoiceJson(inv));
    j["status"] = is_closed ? "closed" : "open";
    if (seen != org) j["scope"] = tree.tenant(seen).path;
    Reply(res, 200, j);
    return 0;
  });
}

void LedgerText(Controller& ctl, httplib::Response& res, const Principal& who) {
  const MeteringSink* m = ctl.metering();
  if (m == nullptr) return ReplyError(res, NoRateCard());
  bool whole_tree = who.scope == TenantId(0);
  if (!(who.role == Role::kPlatformAdmin || (who.role == Role::kAuditor && whole_tree))) {
    return ReplyError(res, Status(Code::kPermissionDenied, std::string("a ") + RoleName(who.role) +
                                                                (whole_tree ? "" : " scoped below the root") +
                                                                " may not read the ledger; expected a platform-admin or an "
                                                                "auditor over the whole tree"));
  }
  std::string text = ctl.Read([&](const ClusterState& st) { return m->LedgerText(st); });
  res.status = 200;
  res.set_content(text, "text/plain");
}

Json CapJson(int64_t v, bool money, const std::string& currency) {
  if (v == kNoCap) return nullptr;
  return money ? Json{{"amount_micros", v}, {"amount", FormatMicros(v)}, {"currency", currency}}
               : Json(static_cast<double>(v) / 1000.0);
}

void ListBudgets(Controller& ctl, httplib::Response& res, const Principal& who) {
  const MeteringSink* m = ctl.metering();
  ctl.ReadView([&](const Controller::View& v) {
    const QuotaTree& tree = v.state.tenants();
    std::string currency = m ? m->billing().card.currency : "";
    std::vector<BudgetStatus> status = m ? BudgetsAt(v.state, m->billing(), v.now_ms) : std::vector<BudgetStatus>{};
    Json rows = Json::array();
    for (const auto& [t, budget] : v.state.billing().budgets()) {
      if (tree.tenant(t).removed || !Allowed(tree, who, Action::kRead, t)) continue;
      Json row = {{"tenant", tree.tenant(t).path}, {"spend", CapJson(budget.spend_micros, true, currency)},
                  {"gpu_hours", CapJson(budget.gpu_hours_milli, false, currency)}};
      for (const BudgetStatus& s : status) {
        if (s.tenant != t) continue;
        row["period"] = s.period.label;
        row["spent"] = {{"amount_micros", s.spent_micros}, {"amount", FormatMicros(s.spent_micros)}, {"currency", currency}};
        row["gpu_hours_used"] = static_cast<double>(s.gpu_hours_milli) / 1000.0;
        row["accounting"] = AccountingName(s.accounting);
      }
      rows.push_back(row);
    }
    Json warnings = Json::array();
    for (const BudgetWarning& w : v.state.billing().warnings()) {
      if (!Allowed(tree, who, Action::kRead, w.tenant)) continue;
      warnings.push_back({{"time", Seconds(w.time_ms)}, {"tenant", tree.tenant(w.tenant).path}, {"period", w.period},
                          {"what", w.what}, {"percent", w.percent}, {"message", w.message}});
    }
    Reply(res, 200, {{"budgets", rows}, {"warnings", warnings}});
    return 0;
  });
}

void SetBudget(Controller& ctl, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string rid = req.get_header_value("X-Request-Id");
  if (rid.empty() || rid.size() > 64) rid = "budget";
  AuditContext audit{who.name, who.role, "", "budget.set", "", rid};
  BudgetBody body;
  Status parsed = ParseBudgetBody(req.body, body);
  const std::string& path = body.tenant;
  audit.tenant = audit.target = path;
  if (!parsed.ok()) return ReplyError(res, ctl.Audit(audit, parsed));
  Status may = ctl.Read([&](const ClusterState& st) {
    const QuotaTree& tree = st.tenants();
    TenantId t = tree.Find(path);
    if (path.empty() || !t.valid() || t == tree.root() || !Allowed(tree, who, Action::kRead, t)) {
      return NotFound("tenant: '" + path + "' does not exist; expected a tenant path such as research/nlp");
    }
    TenantId parent = tree.tenant(t).parent;
    bool ok = who.role == Role::kPlatformAdmin || (parent != tree.root() && Allowed(tree, who, Action::kManage, parent));
    if (!ok) {
      return MayNot(who, "set the budget of '" + path + "'; expected a manager of its parent (a platform-admin for an org)");
    }
    return Status::Ok();
  });
  if (!may.ok()) return ReplyError(res, ctl.Audit(audit, may));
  auto r = ctl.Execute(BudgetSet{path, body.spend_micros, body.gpu_hours_milli}, audit);
  if (!r) return ReplyError(res, r.error());
  std::string currency = ctl.metering() ? ctl.metering()->billing().card.currency : "";
  Reply(res, 200, {{"tenant", path}, {"spend", CapJson(body.spend_micros, true, currency)}, {"gpu_hours", CapJson(body.gpu_hours_milli, false, currency)}});
}

// POST /v1/ledger/adjustments {"tenant", "amount", "note"}: a platform-admin's correction on
// the first open month's invoice (closed months are never edited), audited as ledger.adjust.
void Adjust(Controller& ctl, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string rid = req.get_header_value("X-Request-Id");
  if (rid.empty() || rid.size() > 64) rid = "ledger-adjust";
  AuditContext audit{who.name, who.role, "", "ledger.adjust", "", rid};
  const MeteringSink* m = ctl.metering();
  if (m == nullptr) return ReplyError(res, ctl.Audit(audit, NoRateCard()));
  AdjustmentBody body;
  Status read = ParseAdjustmentBody(req.body, body);
  const std::string &path = body.tenant, &note = body.note;
  audit.tenant = audit.target = path;
  if (who.role != Role::kPlatformAdmin || who.scope != TenantId(0)) {
    return ReplyError(res, ctl.Audit(audit, MayNot(who, "adjust the ledger; expected a platform-admin")));
  }
  if (!read.ok()) return ReplyError(res, ctl.Audit(audit, read));
  const int64_t amount = body.amount_micros;
  int64_t now = ctl.now_ms();
  std::string made;  // the entry as last computed
  auto seq = AppendLedgerEntry(
      ctl,
      [&](const ClusterState& st) {
        auto e = m->Adjustment(st, path, amount, note, now);
        if (e) made = e->entries.front();
        return e;
      },
      audit);
  if (!seq) return ReplyError(res, seq.error());
  auto entry = DecodeLedger(LedgerHeader(m->crypto().PublicKey()) + "\n" + made + "\n", nullptr);
  if (!entry || entry->empty()) return ReplyError(res, Internal("ledger.adjust: the entry written does not decode"));
  const LedgerEntry& e = entry->front();
  const std::string& currency = m->billing().card.currency;
  Reply(res, 201, {{"seq", e.seq}, {"period", e.line.period}, {"tenant", e.line.tenant}, {"kind", "adjustment"},
                   {"amount", {{"amount_micros", amount}, {"amount", FormatMicros(amount)}, {"currency", currency}}},
                   {"note", e.line.note}, {"hash", e.hash}});
}

}  // namespace

void BillingRoutes(HttpRouter& http, RouteContext& ctx) {
  Controller& ctl = ctx.ctl;
  http.Get("/v1/invoices", ctx.authed([&ctl](const httplib::Request& req, httplib::Response& res, const Principal& who) {
    Invoices(ctl, req, res, who);
  }));
  http.Get("/v1/ledger", ctx.authed([&ctl](const httplib::Request&, httplib::Response& res, const Principal& who) {
    LedgerText(ctl, res, who);
  }));
  http.Post("/v1/ledger/adjustments", ctx.authed([&ctl](const httplib::Request& req, httplib::Response& res, const Principal& who) {
    Adjust(ctl, req, res, who);
  }));
  http.Get("/v1/budgets", ctx.authed([&ctl](const httplib::Request&, httplib::Response& res, const Principal& who) {
    ListBudgets(ctl, res, who);
  }));
  http.Post("/v1/budgets", ctx.authed([&ctl](const httplib::Request& req, httplib::Response& res, const Principal& who) {
    SetBudget(ctl, req, res, who);
  }));
}

std::optional<std::vector<int64_t>> WindowCost(const Controller& ctl, const ClusterState& state, int64_t from_ms,
                                               int64_t to_ms, int64_t now_ms) {
  const MeteringSink* m = ctl.metering();
  if (m == nullptr) return std::nullopt;
  const QuotaTree& tree = state.tenants();
  std::vector<OrgPeriod> periods;
  for (TenantId org : tree.tenant(tree.root()).children) {
    periods.push_back({org, Period{"window", from_ms, to_ms}, m->billing().card.ModeOf(tree.tenant(org).path)});
  }
  auto lines = Rate(RatingInput{tree, state.resource_names(), m->billing().card, &state.billing().floor_changes(), &state.reservations()}, periods,
                    IntervalsFromState(state, from_ms, to_ms, now_ms));
  if (!lines) return std::nullopt;
  return CostBySubtree(tree, *lines);
}

}  // namespace allot
