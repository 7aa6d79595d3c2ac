#include "metering/ledger.h"

#include <map>

#include "core/resources.h"
#include "core/strings.h"

namespace allot {
namespace {

constexpr int64_t kHourMs = 3600 * 1000;
constexpr const char* kHeader = "allot-ledger 1";
constexpr const char* kNoPrev = "-";

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out;
}

bool Unescape(std::string_view s, std::string& out) {
  out.clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) return false;
    if (s[i] == 't') out += '\t';
    else if (s[i] == 'n') out += '\n';
    else if (s[i] == '\\') out += '\\';
    else return false;
  }
  return true;
}

template <class E, size_t N>
bool ParseName(std::string_view s, const std::array<E, N>& values, const char* (*name)(E), E& out) {
  for (E v : values) {
    if (s == name(v)) {
      out = v;
      return true;
    }
  }
  return false;
}

constexpr std::array<EntryKind, 6> kKinds = {EntryKind::kFloor, EntryKind::kUsage, EntryKind::kCredit,
                                             EntryKind::kAdjustment, EntryKind::kClose, EntryKind::kReservation};
constexpr std::array<UsageClass, 4> kClasses = {UsageClass::kGuaranteed, UsageClass::kBurstable,
                                                UsageClass::kBestEffort, UsageClass::kReserved};
constexpr std::array<Topology, 4> kTopologies = {Topology::kNone, Topology::kNvlink, Topology::kRack, Topology::kZone};

std::string Describe(const LedgerEntry& e) {
  std::string d = "entry " + std::to_string(e.seq) + " (" + EntryKindName(e.line.kind);
  if (!e.line.tenant.empty()) d += " " + e.line.tenant;
  if (!e.line.resource.empty()) d += " " + e.line.resource;
  return d + " " + e.line.period + ")";
}

}  // namespace

const char* EntryKindName(EntryKind k) {
  switch (k) {
    case EntryKind::kFloor: return "floor";
    case EntryKind::kUsage: return "usage";
    case EntryKind::kCredit: return "credit";
    case EntryKind::kAdjustment: return "adjustment";
    case EntryKind::kClose: return "close";
    case EntryKind::kReservation: return "reservation";
  }
  return "usage";
}

Result<int64_t> PriceLine(std::string_view resource, __int128 quantity, int64_t unit_price, int64_t burst_ppm,
                          int64_t topology_ppm) {
  int64_t unit;
  if (resource.starts_with("gpu/")) unit = kGpuUnit;
  else if (resource == "cpu") unit = kMilli;
  else if (resource == "memory") unit = 1024;
  else return Err(InvalidArgument("resource: '" + std::string(resource) + "' is not priced; expected gpu/<model>, cpu or memory"));
  if (quantity < 0 || unit_price < 0 || burst_ppm < 0 || topology_ppm < 0) {
    return Err(InvalidArgument("quantity, price and premiums must not be negative"));
  }
  bool overflow = false;
  __int128 p;
  overflow |= __builtin_mul_overflow(static_cast<__int128>(unit_price), static_cast<__int128>(burst_ppm), &p);
  overflow |= __builtin_mul_overflow(p, static_cast<__int128>(topology_ppm), &p);
  int64_t v = overflow ? 0 : MulDivRoundHalfUp(quantity, p,
                                static_cast<__int128>(unit) * kHourMs, static_cast<__int128>(kPpm) * kPpm, &overflow);
  if (overflow) {
    return Err(InvalidArgument("amount of " + Int128ToString(quantity) + " " + std::string(resource) +
                               "·ms at " + FormatMicros(unit_price) + " does not fit in 64-bit micro-units"));
  }
  return v;
}

std::string CanonicalFields(const LedgerEntry& e) {
  const LedgerLine& l = e.line;
  std::string out = std::to_string(e.seq);
  for (const std::string& f :
       {Escape(l.period), Escape(l.tenant), std::string(EntryKindName(l.kind)), Escape(l.resource),
        std::string(UsageClassName(l.usage_class)), std::string(TopologyName(l.topology)), Int128ToString(l.quantity),
        std::to_string(l.unit_price), std::to_string(l.burst_ppm), std::to_string(l.topology_ppm),
        std::to_string(l.amount), Escape(l.note), e.signature.empty() ? std::string("-") : e.signature}) {
    out += '\t';
    out += f;
  }
  return out;
}

std::string CloseMessage(const std::string& period, int64_t seq, const std::string& prev_hash) {
  return "allot-ledger close " + period + " " + std::to_string(seq) + " " + prev_hash;
}

const std::string& Ledger::head() const {
  static const std::string kNone = kNoPrev;
  return entries_.empty() ? kNone : entries_.back().hash;
}

const LedgerEntry& Ledger::Append(LedgerLine line) {
  ALLOT_CHECK(line.kind != EntryKind::kClose);
  LedgerEntry e;
  e.seq = static_cast<int64_t>(entries_.size()) + 1;
  e.line = std::move(line);
  e.prev_hash = head();
  e.hash = crypto_.Hash(e.prev_hash + "\n" + CanonicalFields(e));
  entries_.push_back(std::move(e));
  return entries_.back();
}

Result<const LedgerEntry*> Ledger::Close(const std::string& period, const std::string& currency) {
  LedgerEntry e;
  e.seq = static_cast<int64_t>(entries_.size()) + 1;
  e.line.period = period;
  e.line.kind = EntryKind::kClose;
  e.line.note = currency;
  for (const LedgerEntry& x : entries_) {
    if (x.line.kind == EntryKind::kClose || x.line.period != period) continue;
    e.line.quantity += 1;
    auto sum = AddMicros(e.line.amount, x.line.amount, "close of " + period);
    if (!sum) return Err(sum.error());
    e.line.amount = *sum;
  }
  e.prev_hash = head();
  auto sig = crypto_.Sign(CloseMessage(period, e.seq, e.prev_hash));
  if (!sig) return Err(sig.error());
  e.signature = *sig;
  e.hash = crypto_.Hash(e.prev_hash + "\n" + CanonicalFields(e));
  entries_.push_back(std::move(e));
  return &entries_.back();
}

std::string EncodeEntry(const LedgerEntry& e) { return CanonicalFields(e) + "\t" + e.prev_hash + "\t" + e.hash; }
std::string LedgerHeader(const std::string& public_key_hex) { return std::string(kHeader) + "\tpublic_key=" + public_key_hex; }

std::string Ledger::Encode() const {
  std::string out = LedgerHeader(crypto_.PublicKey()) + "\n";
  for (const LedgerEntry& e : entries_) out += EncodeEntry(e) + "\n";
  return out;
}

Result<std::vector<LedgerEntry>> DecodeLedger(std::string_view text, std::string* public_key) {
  std::vector<LedgerEntry> out;
  std::vector<std::string> lines = Split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty() || !lines[0].starts_with(std::string(kHeader) + "\t")) {
    return Err(InvalidArgument("line 1: expected the header '" + std::string(kHeader) + "<TAB>public_key=<hex>'"));
  }
  std::string_view hint = std::string_view(lines[0]).substr(std::string(kHeader).size() + 1);
  if (!hint.starts_with("public_key=")) return Err(InvalidArgument("line 1: expected public_key=<hex> after the version"));
  if (public_key) *public_key = std::string(hint.substr(11));
  for (size_t n = 1; n < lines.size(); ++n) {
    auto bad = [&](const std::string& field, const std::string& value, const std::string& expected) {
      return Err(InvalidArgument("line " + std::to_string(n + 1) + ": " + field + ": '" + value + "' is not valid; expected " + expected));
    };
    std::vector<std::string> f = Split(lines[n], '\t');
    if (f.size() != 16) return bad("fields", std::to_string(f.size()) + " fields", "16 tab-separated fields");
    LedgerEntry e;
    LedgerLine& l = e.line;
    __int128 seq;
    if (!ParseInt128(f[0], seq) || seq < 1 || seq > INT64_MAX) return bad("seq", f[0], "a positive integer");
    e.seq = static_cast<int64_t>(seq);
    if (!Unescape(f[1], l.period)) return bad("period", f[1], "escaped text");
    if (!Unescape(f[2], l.tenant)) return bad("tenant", f[2], "escaped text");
    if (!ParseName(f[3], kKinds, EntryKindName, l.kind)) return bad("kind", f[3], "floor, usage, credit, adjustment, close or reservation");
    if (!Unescape(f[4], l.resource)) return bad("resource", f[4], "escaped text");
    if (!ParseName(f[5], kClasses, UsageClassName, l.usage_class)) return bad("class", f[5], "guaranteed, burstable, best-effort or reserved");
    if (!ParseName(f[6], kTopologies, TopologyName, l.topology)) return bad("topology", f[6], "none, nvlink, rack or zone");
    if (!ParseInt128(f[7], l.quantity)) return bad("quantity", f[7], "an integer");
    int64_t* ints[] = {&l.unit_price, &l.burst_ppm, &l.topology_ppm, &l.amount};
    const char* names[] = {"unit_price", "burst_ppm", "topology_ppm", "amount"};
    for (int k = 0; k < 4; ++k) {
      __int128 v;
      if (!ParseInt128(f[8 + k], v) || v > INT64_MAX || v < INT64_MIN) return bad(names[k], f[8 + k], "a 64-bit integer");
      *ints[k] = static_cast<int64_t>(v);
    }
    if (!Unescape(f[12], l.note)) return bad("note", f[12], "escaped text");
    e.signature = f[13] == "-" ? "" : f[13];
    e.prev_hash = f[14];
    e.hash = f[15];
    out.push_back(std::move(e));
  }
  return out;
}

Result<LedgerSummary> VerifyLedger(const std::vector<LedgerEntry>& entries, const LedgerCrypto& crypto,
                                   std::string_view public_key_hex) {
  LedgerSummary s;
  std::string prev = kNoPrev;
  std::map<std::string, std::pair<int64_t, int64_t>> period_sums;  // period → (entries, amount)
  for (size_t i = 0; i < entries.size(); ++i) {
    const LedgerEntry& e = entries[i];
    const LedgerLine& l = e.line;
    auto fail = [&](const std::string& why) { return Err(FailedPrecondition(Describe(e) + ": " + why)); };
    int64_t want = static_cast<int64_t>(i) + 1;
    if (e.seq != want) {
      return fail("seq " + std::to_string(e.seq) + " where " + std::to_string(want) +
                  " was expected: an entry was removed, inserted or reordered");
    }
    if (e.prev_hash != prev) return fail("prev_hash does not match the hash of entry " + std::to_string(want - 1) + ": the chain is broken");
    if (crypto.Hash(prev + "\n" + CanonicalFields(e)) != e.hash) return fail("hash does not match the entry's fields: it was edited");
    if (l.kind == EntryKind::kFloor || l.kind == EntryKind::kUsage || l.kind == EntryKind::kReservation) {
      auto amount = PriceLine(l.resource, l.quantity, l.unit_price, l.burst_ppm, l.topology_ppm);
      if (!amount) return fail(amount.error().message());
      if (*amount != l.amount) {
        return fail("amount " + std::to_string(l.amount) + " does not equal quantity × unit_price × premiums = " +
                    std::to_string(*amount));
      }
    }
    if (l.kind == EntryKind::kClose) {
      auto [count, sum] = period_sums[l.period];
      if (l.quantity != count || l.amount != sum) {
        return fail("closes " + Int128ToString(l.quantity) + " entries totalling " + std::to_string(l.amount) +
                    " where the period has " + std::to_string(count) + " totalling " + std::to_string(sum));
      }
      if (!crypto.Verify(CloseMessage(l.period, e.seq, e.prev_hash), e.signature, public_key_hex)) {
        return fail("signature does not verify with public key " + std::string(public_key_hex));
      }
      ++s.closes;
      s.unsealed = 0;
    } else {
      auto& [count, sum] = period_sums[l.period];
      count += 1;
      auto total = AddMicros(sum, l.amount, "the period's total");
      if (!total) return fail(total.error().message());
      sum = *total;
      ++s.unsealed;
    }
    prev = e.hash;
  }
  s.entries = static_cast<int64_t>(entries.size());
  s.head = prev;
  return s;
}

}  // namespace allot
