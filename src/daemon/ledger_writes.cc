#include "daemon/ledger_writes.h"

namespace allot {
namespace {
constexpr int kAttempts = 3;
}  // namespace

Result<uint64_t> AppendLedgerEntry(Controller& ctl, const std::function<Result<LedgerAppended>(const ClusterState&)>& make,
                                   std::optional<AuditContext> audit) {
  Status last = Status::Ok();
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto entry = ctl.Read([&](const ClusterState& st) { return make(st); });
    if (!entry) {
      if (audit) ctl.Audit(*audit, entry.error());
      return Err(entry.error());
    }
    auto seq = audit ? ctl.Execute(std::move(*entry), *audit) : ctl.Execute(std::move(*entry));
    if (seq || seq.error().code() != Code::kInvalidArgument) return seq;
    last = seq.error();
  }
  return Err(last);
}

}  // namespace allot
