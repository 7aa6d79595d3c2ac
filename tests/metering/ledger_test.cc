// The ledger is tamper-evident: any edited, removed or reordered entry and any bad signature
// is caught, naming the entry; a replay of the same events gives the same bytes.
#include <gtest/gtest.h>

#include "billing/sodium_crypto.h"
#include "core/strings.h"
#include "metering/ledger.h"

namespace allot {
namespace {

const std::string kSeed(64, '7');

LedgerLine Line(const std::string& tenant, int64_t gpus, int64_t hours) {
  LedgerLine l;
  l.period = "2025-03";
  l.tenant = tenant;
  l.kind = EntryKind::kUsage;
  l.resource = "gpu/H100-80GB";
  l.quantity = static_cast<__int128>(gpus) * kGpuUnit * hours * 3600000;
  l.unit_price = 2500000;
  l.amount = *PriceLine(l.resource, l.quantity, l.unit_price, l.burst_ppm, l.topology_ppm);
  return l;
}

class LedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    crypto = std::make_unique<SodiumLedgerCrypto>(*SodiumLedgerCrypto::FromSeed(kSeed));
    Ledger ledger(*crypto);
    ledger.Append(Line("research/nlp", 8, 10));  // 200.00
    ledger.Append(Line("research/cv", 2, 3));    // 15.00
    ledger.Append(Line("search", 1, 1));         // 2.50
    ASSERT_TRUE(ledger.Close("2025-03", "USD").has_value());
    LedgerLine fix;
    fix.period = "2025-03";
    fix.tenant = "research/cv";
    fix.kind = EntryKind::kAdjustment;
    fix.amount = -15000000;
    fix.note = "job lost to a driver bug\twaived";  // escaped in the text form
    ledger.Append(fix);
    ASSERT_TRUE(ledger.Close("2025-03", "USD").has_value());
    text = ledger.Encode();
    lines = Split(text, '\n');  // header, 6 entries, ""
    ASSERT_EQ(lines.size(), 8u);
  }

  Result<LedgerSummary> Verify(const std::string& t, std::string key = "") {
    auto entries = DecodeLedger(t, nullptr);
    if (!entries) return Err(entries.error());
    return VerifyLedger(*entries, *crypto, key.empty() ? crypto->PublicKey() : key);
  }
  std::string Join(const std::vector<std::string>& ls) {
    std::string out;
    for (size_t i = 0; i < ls.size(); ++i) out += ls[i] + (i + 1 < ls.size() ? "\n" : "");
    return out;
  }
  void ExpectBroken(const std::string& t, const std::string& needle) {
    auto s = Verify(t);
    ASSERT_FALSE(s.has_value()) << "tampering not detected; wanted " << needle;
    EXPECT_NE(s.error().message().find(needle), std::string::npos) << s.error().message();
  }

  std::unique_ptr<SodiumLedgerCrypto> crypto;
  std::string text;
  std::vector<std::string> lines;
};

TEST_F(LedgerTest, AnIntactLedgerVerifiesWithItsClosesSummed) {
  auto s = Verify(text);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(s->entries, 6);
  EXPECT_EQ(s->closes, 2);
  EXPECT_EQ(s->unsealed, 0);
  auto entries = *DecodeLedger(text, nullptr);
  EXPECT_EQ(entries[3].line.amount, 217500000);  // 200.00 + 15.00 + 2.50
  EXPECT_EQ(entries[5].line.amount, 202500000);  // … − 15.00, the correction
  EXPECT_EQ(entries[4].line.note, "job lost to a driver bug\twaived");
}

// A reservation's line and a run inside it (class reserved, priced at 0) survive the text form,
// and the reservation's amount is checked like usage's.
TEST_F(LedgerTest, AReservationLineAndAReservedRunRoundTripAndAreVerified) {
  Ledger ledger(*crypto);
  LedgerLine booked = Line("research/nlp", 4, 2);
  booked.kind = EntryKind::kReservation;
  booked.note = "reservation 'train'";
  LedgerLine used = Line("research/nlp", 4, 1);
  used.usage_class = UsageClass::kReserved;
  used.unit_price = 0;
  used.amount = 0;
  ledger.Append(booked);
  ledger.Append(used);
  ASSERT_TRUE(ledger.Close("2025-03", "USD").has_value());
  auto s = Verify(ledger.Encode());
  ASSERT_TRUE(s.has_value()) << s.error().message();
  auto entries = *DecodeLedger(ledger.Encode(), nullptr);
  EXPECT_EQ(entries[0].line.kind, EntryKind::kReservation);
  EXPECT_EQ(entries[0].line.amount, 20000000);
  EXPECT_EQ(entries[1].line.usage_class, UsageClass::kReserved);
  EXPECT_EQ(entries[2].line.amount, 20000000) << "the close sums the reservation, not the covered run";
  // An edited reservation amount, hashed afresh, still disagrees with its price.
  booked.amount += 1;
  Ledger forged(*crypto);
  forged.Append(booked);
  auto f = Verify(forged.Encode());
  ASSERT_FALSE(f.has_value());
  EXPECT_NE(f.error().message().find("does not equal quantity × unit_price × premiums"), std::string::npos) << f.error().message();
}

TEST_F(LedgerTest, AnEditedAmountIsCaughtAtThatEntry) {
  auto ls = lines;
  size_t at = ls[2].find("\t15000000\t");
  ASSERT_NE(at, std::string::npos);
  ls[2].replace(at, 10, "\t1500000\t");
  ExpectBroken(Join(ls), "entry 2 (usage research/cv gpu/H100-80GB 2025-03): hash does not match");
}

TEST_F(LedgerTest, ARemovedEntryIsCaught) {
  auto ls = lines;
  ls.erase(ls.begin() + 2);
  ExpectBroken(Join(ls), "seq 3 where 2 was expected");
}

TEST_F(LedgerTest, ReorderedEntriesAreCaught) {
  auto ls = lines;
  std::swap(ls[1], ls[2]);
  ExpectBroken(Join(ls), "seq 2 where 1 was expected");
}

TEST_F(LedgerTest, ARechainedEditIsCaughtByTheCloseSignature) {
  // Edit entry 3 and recompute every hash after it (anyone can): only the signature, which
  // needs the private key, still covers the old head.
  auto entries = *DecodeLedger(text, nullptr);
  entries[2].line.quantity = 0;  // priced consistently: 0 GPU-hours, 0.00
  entries[2].line.unit_price = 0;
  entries[2].line.amount = 0;
  std::string prev = entries[1].hash;
  for (size_t i = 2; i < entries.size(); ++i) {
    entries[i].prev_hash = prev;
    if (entries[i].line.kind == EntryKind::kClose) {
      entries[i].line.amount -= 2500000;  // even the close sum is fixed up
    }
    entries[i].hash = crypto->Hash(prev + "\n" + CanonicalFields(entries[i]));
    prev = entries[i].hash;
  }
  auto s = VerifyLedger(entries, *crypto, crypto->PublicKey());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message().find("entry 4 (close 2025-03): signature does not verify"), std::string::npos)
      << s.error().message();
}

TEST_F(LedgerTest, AForeignKeyOrForgedSignatureIsCaught) {
  auto other = *SodiumLedgerCrypto::FromSeed(std::string(64, '1'));
  auto s = Verify(text, other.PublicKey());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message().find("signature does not verify"), std::string::npos);
  auto ls = lines;
  auto fields = Split(ls[4], '\t');
  fields[13][0] = fields[13][0] == 'a' ? 'b' : 'a';
  std::string forged;
  for (size_t i = 0; i < fields.size(); ++i) forged += fields[i] + (i + 1 < fields.size() ? "\t" : "");
  ls[4] = forged;
  ExpectBroken(Join(ls), "entry 4 (close 2025-03)");
}

TEST_F(LedgerTest, AnAmountThatDisagreesWithItsPriceIsCaughtEvenWhenHashedAfresh) {
  Ledger ledger(*crypto);
  LedgerLine l = Line("research/nlp", 8, 10);
  l.amount += 1;
  ledger.Append(l);
  auto s = VerifyLedger(ledger.entries(), *crypto, crypto->PublicKey());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message().find("amount 200000001 does not equal"), std::string::npos) << s.error().message();
}

TEST_F(LedgerTest, MalformedTextIsRefusedNamingTheLineAndField) {
  auto ls = lines;
  auto fields = Split(ls[1], '\t');
  fields[3] = "refund";
  std::string bad;
  for (size_t i = 0; i < fields.size(); ++i) bad += fields[i] + (i + 1 < fields.size() ? "\t" : "");
  ls[1] = bad;
  auto e = DecodeLedger(Join(ls), nullptr);
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message().find("line 2: kind: 'refund' is not valid; expected floor, usage"), std::string::npos)
      << e.error().message();
  EXPECT_FALSE(DecodeLedger("", nullptr).has_value());
}

TEST_F(LedgerTest, TheSameAppendsGiveTheSameBytes) {
  Ledger a(*crypto), b(*crypto);
  for (Ledger* l : {&a, &b}) {
    l->Append(Line("x", 1, 1));
    ASSERT_TRUE(l->Close("2025-03", "USD").has_value());  // ed25519 signatures are deterministic
  }
  EXPECT_EQ(a.Encode(), b.Encode());
}

}  // namespace
}  // namespace allot
