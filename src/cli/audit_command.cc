#include "cli/audit_command.h"

#include <filesystem>
#include <iostream>

#include "cli/sim_command.h"
#include "server/auth.h"
#include "state/audit.h"
#include "store/open_journal.h"

namespace allot::cli {
namespace {

// Walks the journal's audit records: each must name the previous record's hash and hash to
// its own. `store` and `data` as allotd's --store and --data (SQLite or PostgreSQL). Returns 0
// when the chain holds, 1 when it breaks (saying where and how), 2 when the journal cannot be
// read.
int Verify(const std::string& store, const std::string& data) {
  if (store.empty() || store == "sqlite") {
    // OpenJournal would create an empty one: a journal that is not there is an error here.
    std::string db = (std::filesystem::path(data) / "journal.db").string();
    if (!std::filesystem::exists(db)) {
      std::cerr << "allot audit verify: " << db << " does not exist\n";
      return 2;
    }
  }
  auto journal = OpenJournal(store, data);
  if (!journal) {
    std::cerr << "allot audit verify: " << journal.error().message() << "\n";
    return 2;
  }
  std::string last;
  uint64_t records = 0;
  std::string broken;
  Status s = (*journal)->Replay(0, [&](uint64_t seq, const Event& e) {
    const auto* a = std::get_if<AuditRecorded>(&e.body);
    if (!a) return Status::Ok();
    const AuditRecord& r = a->record;
    std::string where = "record " + std::to_string(records + 1) + " (journal event " + std::to_string(seq) + ")";
    if (r.prev_hash != last) {
      broken = where + ": it names the previous hash " + r.prev_hash + " but the record before has " + last +
               " (a record was removed, inserted or reordered)";
      return FailedPrecondition(broken);
    }
    if (Blake2bHex(Canonical(r)) != r.hash) {
      broken = where + ": its hash does not match its content (the record was edited)";
      return FailedPrecondition(broken);
    }
    last = r.hash;
    ++records;
    return Status::Ok();
  });
  if (!s.ok()) {
    std::cout << "audit log BROKEN at " << (broken.empty() ? s.message() : broken) << "\n";
    return 1;
  }
  std::cout << "audit log intact: " << records << " records; head " << (last.empty() ? "(empty)" : last) << "\n";
  return 0;
}

}  // namespace

void AddAuditCommand(CLI::App& app) {
  CLI::App* audit = app.add_subcommand("audit", "The audit log");
  audit->require_subcommand(1);
  CLI::App* verify = audit->add_subcommand("verify", "Recompute the audit log's hash chain from allotd's journal (detects any edit)");
  auto data = std::make_shared<std::string>("./allot-data");
  auto store = std::make_shared<std::string>("sqlite");
  verify->add_option("--data", *data, "allotd's data directory (its SQLite journal)")->capture_default_str();
  verify->add_option("--store", *store, "allotd's --store: sqlite, or a PostgreSQL URL or conninfo")->capture_default_str();
  verify->footer("Examples: allot audit verify --data ./allot-data\n"
                 "          allot audit verify --store postgresql://allot@db1/allot");
  verify->callback([data, store] { SetExitCode(Verify(*store, *data)); });
}

}  // namespace allot::cli
