#include "daemon/metering_sink.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "metering/rating.h"
#include "metering/state_usage.h"

namespace allot {

std::string NextMonthLabel(const std::string& label) {
  int y = 0, m = 0;
  if (std::sscanf(label.c_str(), "%d-%d", &y, &m) != 2) return "";
  if (++m > 12) {
    m = 1;
    ++y;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d", y, m);
  return buf;
}

std::string MeteringSink::FirstOpenLabel(const ClusterState& state) const {
  if (!state.billing().closed_period().empty()) return NextMonthLabel(state.billing().closed_period());
  int64_t first = -1;
  for (const Job& j : state.jobs()) {
    if (j.first_started_ms >= 0 && (first < 0 || j.first_started_ms < first)) first = j.first_started_ms;
  }
  if (first < 0) return "";
  const QuotaTree& tree = state.tenants();
  std::string label = billing_->PeriodOf("", first).label;
  for (TenantId org : tree.tenant(tree.root()).children) {
    label = std::min(label, billing_->PeriodOf(tree.tenant(org).path, first).label);
  }
  return label;
}

Result<std::vector<LedgerAppended>> MeteringSink::Due(const ClusterState& state, int64_t now_ms) {
  std::vector<LedgerAppended> out;
  if (next_label_.empty()) {
    // Until a job has run there is nothing to close (a scan of the jobs, none of them started).
    next_label_ = FirstOpenLabel(state);
    next_close_ms_ = 0;
    if (next_label_.empty()) return out;
  }
  std::optional<Ledger> ledger;
  for (;;) {
    if (next_close_ms_ != 0 && now_ms < next_close_ms_) break;  // the common case: one compare
    const QuotaTree& tree = state.tenants();
    auto periods = billing_->OrgPeriods(tree, next_label_);
    if (!periods) return Err(periods.error());
    if (next_close_ms_ == 0) {
      auto fallback = ParseMonth(billing_->ZoneOf(""), next_label_);
      if (!fallback) return Err(fallback.error());
      next_close_ms_ = fallback->end_ms;
      for (const OrgPeriod& p : *periods) next_close_ms_ = std::max(next_close_ms_, p.period.end_ms);
    }
    if (now_ms < next_close_ms_) break;
    int64_t from = next_close_ms_, to = 0;
    for (const OrgPeriod& p : *periods) {
      from = std::min(from, p.period.start_ms);
      to = std::max(to, p.period.end_ms);
    }
    auto lines = Rate(RatingInput{tree, state.resource_names(), billing_->card, &state.billing().floor_changes(), &state.reservations()}, *periods,
                      IntervalsFromState(state, from, to, now_ms));
    if (!lines) return Err(lines.error());
    if (!ledger) {
      auto entries = Entries(state);
      if (!entries) return Err(entries.error());
      ledger.emplace(*crypto_, std::move(*entries));
    }
    size_t before = ledger->entries().size();
    for (LedgerLine& l : *lines) ledger->Append(std::move(l));
    auto closed = ledger->Close(next_label_, billing_->card.currency);
    if (!closed) return Err(closed.error());
    LedgerAppended e;
    e.closes = next_label_;
    for (size_t i = before; i < ledger->entries().size(); ++i) e.entries.push_back(EncodeEntry(ledger->entries()[i]));
    out.push_back(std::move(e));
    next_label_ = NextMonthLabel(next_label_);
    next_close_ms_ = 0;
  }
  return out;
}

Result<LedgerAppended> MeteringSink::Credit(const ClusterState& state, const FaultLoss& loss, int64_t at_ms) const {
  auto line = FaultCredit(state.tenants(), state.resource_names(), *billing_, loss, at_ms);
  if (!line) return Err(line.error());
  // A fault just before a month end, credited after the month closed.
  if (std::string was = OntoOpenPeriod(state, *line); !was.empty()) {
    line->note += " (fault in " + was + ", credited after it closed)";
  }
  return Append(state, std::move(*line));
}

Result<LedgerAppended> MeteringSink::Adjustment(const ClusterState& state, const std::string& path, int64_t amount_micros,
                                                const std::string& note, int64_t at_ms) const {
  const QuotaTree& tree = state.tenants();
  TenantId t = tree.Find(path);
  if (path.empty() || !t.valid() || t == tree.root()) {
    return Err(NotFound("tenant: '" + path + "' does not exist; expected a tenant path such as research/nlp"));
  }
  if (amount_micros == 0) return Err(InvalidArgument("amount: 0; expected a correction other than zero, e.g. \"-12.50\""));
  if (note.empty() || note.find_first_of("\t\n\r") != std::string::npos || note.size() > 500) {
    return Err(InvalidArgument("note: '" + note + "'; expected why, one line of at most 500 characters"));
  }
  LedgerLine l;
  l.period = billing_->PeriodOf(tree.tenant(tree.OrgOf(t)).path, at_ms).label;
  OntoOpenPeriod(state, l);
  l.tenant = path;
  l.tenant_id = t;
  l.kind = EntryKind::kAdjustment;
  l.amount = amount_micros;
  l.note = note;
  return Append(state, std::move(l));
}

std::string MeteringSink::OntoOpenPeriod(const ClusterState& state, LedgerLine& line) const {
  const std::string& closed = state.billing().closed_period();
  if (closed.empty() || line.period > closed) return "";
  std::string was = std::move(line.period);
  line.period = NextMonthLabel(closed);
  return was;
}

Result<LedgerAppended> MeteringSink::Append(const ClusterState& state, LedgerLine line) const {
  auto entries = Entries(state);
  if (!entries) return Err(entries.error());
  // The period's amounts, in absolute value, must fit 64 bits with this line: then no total
  // over any part of it (the close, an invoice, a team's share) can wrap.
  int64_t magnitude = line.amount == INT64_MIN ? INT64_MAX : std::abs(line.amount);
  for (const LedgerEntry& e : *entries) {
    if (e.line.kind == EntryKind::kClose || e.line.period != line.period) continue;
    int64_t a = e.line.amount == INT64_MIN ? INT64_MAX : std::abs(e.line.amount);
    if (__builtin_add_overflow(magnitude, a, &magnitude)) {
      return Err(InvalidArgument("amount: " + FormatMicros(line.amount) + " on " + line.period +
                                 " would take the period's ledger past 9223372036854.775807 in absolute amounts; "
                                 "expected a smaller amount"));
    }
  }
  Ledger ledger(*crypto_, std::move(*entries));
  return LedgerAppended{{EncodeEntry(ledger.Append(std::move(line)))}, ""};
}

std::string MeteringSink::LedgerText(const ClusterState& state) const {
  std::string out = LedgerHeader(crypto_->PublicKey()) + "\n";
  for (const std::string& line : state.billing().ledger()) out += line + "\n";
  return out;
}

Result<std::vector<LedgerEntry>> MeteringSink::Entries(const ClusterState& state) const {
  return DecodeLedger(LedgerText(state), nullptr);
}

}  // namespace allot
