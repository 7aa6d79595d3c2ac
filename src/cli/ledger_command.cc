#include "cli/ledger_command.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "billing/invoice_json.h"
#include "billing/sodium_crypto.h"
#include "cli/client.h"
#include "cli/sim_command.h"
#include "metering/invoice.h"
#include "metering/ledger.h"

namespace allot::cli {
namespace {

struct LedgerArgs {
  std::string file;
  std::string public_key;
  std::string org;
  std::string period;
  bool csv = false;
  bool live = false;  // verify: the ledger of the allotd of `conn`
  Conn conn;
  // adjust
  std::string tenant;
  std::string amount;
  std::string note;
};

Result<std::vector<LedgerEntry>> Read(const std::string& file, std::string* hint) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Err(NotFound(file + ": cannot open the ledger"));
  std::stringstream text;
  text << in.rdbuf();
  auto entries = DecodeLedger(text.str(), hint);
  if (!entries) return Err(InvalidArgument(file + ": " + entries.error().message()));
  return entries;
}

// 0: intact; 1: tampered (saying which entry and how); 2: unreadable.
int Verify(LedgerArgs& a) {
  std::string hint;
  Result<std::vector<LedgerEntry>> entries = Err(InvalidArgument("give a ledger FILE or --live"));
  if (a.live == !a.file.empty()) {
    std::cerr << "allot ledger verify: give a ledger FILE or --live (a running allotd's), not both\n";
    return 2;
  }
  if (a.live) {
    Resolve(a.conn);
    Reply r = Call(a.conn, "GET", "/v1/ledger");
    if (int rc = Check(r); rc != 0) return rc == 1 ? 2 : rc;
    entries = DecodeLedger(r.raw, &hint);
  } else {
    entries = Read(a.file, &hint);
  }
  if (!entries) {
    std::cerr << "allot ledger verify: " << entries.error().message() << "\n";
    return 2;
  }
  std::string key = a.public_key.empty() ? hint : a.public_key;
  auto s = VerifyLedger(*entries, SodiumLedgerCrypto::VerifyOnly(), key);
  if (!s) {
    std::cout << "ledger BROKEN at " << s.error().message() << "\n";
    return 1;
  }
  std::cout << "ledger intact: " << s->entries << " entries, " << s->closes << " signed period closes, "
            << s->unsealed << " entries after the last close; head " << s->head << "\n";
  if (a.public_key.empty()) {
    std::cout << "signatures checked against the key in the file (" << key
              << "); pass --public-key with the key you trust\n";
  }
  return 0;
}

int Invoice(const LedgerArgs& a) {
  auto entries = Read(a.file, nullptr);
  if (!entries) {
    std::cerr << "allot ledger invoice: " << entries.error().message() << "\n";
    return 2;
  }
  std::string currency;
  for (const LedgerEntry& e : *entries) {
    if (e.line.kind == EntryKind::kClose && e.line.period == a.period) currency = e.line.note;
  }
  if (currency.empty()) {
    std::cerr << "allot ledger invoice: --period " << a.period << " is not closed in " << a.file
              << "; expected a period with a close entry\n";
    return 2;
  }
  auto inv = BuildInvoice(*entries, a.org, a.period, currency);
  if (!inv) {
    std::cerr << "allot ledger invoice: " << inv.error().message() << "\n";
    return 1;
  }
  std::cout << (a.csv ? InvoiceCsv(*inv) : InvoiceJson(*inv));
  return 0;
}

}  // namespace

void AddLedgerCommand(CLI::App& app) {
  auto args = std::make_shared<LedgerArgs>();
  CLI::App* ledger = app.add_subcommand("ledger", "The metering ledger (hash-chained, signed at each period close)");
  ledger->require_subcommand(1);
  CLI::App* verify = ledger->add_subcommand("verify", "Detect any edited, removed or reordered entry and any bad signature");
  verify->add_option("file", args->file, "Ledger file (allot sim --ledger)");
  verify->add_flag("--live", args->live, "verify the ledger of a running allotd (GET /v1/ledger)");
  AddConn(verify, args->conn);
  verify->footer("Examples: allot ledger verify run.ledger --public-key KEY   |   allot ledger verify --live --public-key KEY\n"
                 "Exit codes: 0 intact; 1 tampered (names the entry); 2 unreadable or refused; 3 allotd unreachable");
  verify->add_option("--public-key", args->public_key, "ed25519 public key (hex) to check the closes against");
  verify->callback([args] { SetExitCode(Verify(*args)); });
  CLI::App* adjust = ledger->add_subcommand("adjust", "Correct an invoice: a new adjustment entry on the first open month's");
  adjust->add_option("tenant", args->tenant, "tenant path")->required();
  adjust->add_option("--amount", args->amount, "in the rate card's currency; negative refunds, e.g. -12.50")->required();
  adjust->add_option("--note", args->note, "why (one line; it is on the invoice)")->required();
  AddConn(adjust, args->conn);
  adjust->footer("Example: allot ledger adjust research/nlp --amount -12.50 --note \"ticket 4411: job lost to a bad image\"\n"
                 "Closed months are never edited. Platform-admins only.");
  adjust->callback([args] {
    Resolve(args->conn);
    Json body = {{"tenant", args->tenant}, {"amount", args->amount}, {"note", args->note}};
    SetExitCode(Output(args->conn, Call(args->conn, "POST", "/v1/ledger/adjustments", body.dump()), [](const Json& b) {
      std::cout << "adjustment " << b["seq"].get<int64_t>() << " on " << Str(b["tenant"]) << "'s " << Str(b["period"])
                << " invoice: " << Money(b["amount"]) << " (" << Str(b["note"]) << ")\n";
    }));
  });
  CLI::App* invoice = ledger->add_subcommand("invoice", "One org's invoice for a closed period, as JSON or CSV");
  invoice->add_option("file", args->file, "Ledger file")->required();
  invoice->add_option("--org", args->org, "Org (top-level tenant)")->required();
  invoice->add_option("--period", args->period, "Period label (2025-03; sim for allot sim)")->required();
  invoice->add_flag("--csv", args->csv, "CSV instead of JSON");
  invoice->callback([args] { SetExitCode(Invoice(*args)); });
}

}  // namespace allot::cli
