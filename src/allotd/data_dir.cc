#include "allotd/data_dir.h"

#include <filesystem>

namespace allot {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::vector<std::string> SignsOfUse(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  const fs::path d(dir);
  for (const char* name : {"admin-token", "ledger-key"}) {
    if (fs::exists(d / name, ec)) found.push_back(name);
  }
  if (fs::is_directory(d / "logs", ec) && !fs::is_empty(d / "logs", ec)) found.push_back("logs/");
  if (!fs::exists(d / "journal.db", ec) && fs::exists(d / "journal.db-wal", ec)) found.push_back("journal.db-wal");
  return found;
}

Status CheckFreshStart(const FreshStart& f) {
  if (f.events > 0) {
    if (!f.init_fresh) return Status::Ok();
    return FailedPrecondition("--init-fresh: the journal " + f.journal + " holds " + std::to_string(f.events) +
                              " events; --init-fresh only starts an empty journal and never discards one (drop it to go on "
                              "with the state it holds)");
  }
  if (f.signs.empty() || f.init_fresh) return Status::Ok();
  std::string found;
  for (const std::string& s : f.signs) found += (found.empty() ? "" : ", ") + s;
  return FailedPrecondition("the journal " + f.journal + (f.journal_missing ? " is missing" : " holds no events") +
                            ", but the data directory " + f.data_dir + " has been used before (found " + found +
                            "): starting would serve an empty state and replace admin-token. Restore the journal from a "
                            "backup (or name the --store it is in); to start an empty journal here on purpose, pass "
                            "--init-fresh");
}

}  // namespace allot
