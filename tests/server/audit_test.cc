// The audit log: every mutating request (accepted or refused) is recorded with actor, role,
// tenant, action, target, outcome and request id, hash-chained in the journal; `allot audit
// verify` passes an untouched journal and names the record where an edit or a removal breaks
// the chain. Readers see only the records of their scope.
#include <sqlite3.h>
#include <sys/wait.h>

#include <fstream>

#include "state/event_codec.h"
#include "store/pg_journal.h"
#include "store/record_checksum.h"
#include "testing/api_fixture.h"
#include "testing/private_postgres.h"

namespace allot {
namespace {

class AuditTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("a");
    AddTenant("b");
  }
  // Runs `allot audit verify` on the fixture's journal, or on `store`; returns (exit code, stdout).
  std::pair<int, std::string> Verify(const std::string& store = "") {
    std::string out = (dir_ / "verify.out").string();
    std::string where = store.empty() ? " --data " + dir_.path().string() : " --store '" + store + "'";
    int rc = std::system((std::string(ALLOT_BINARY) + " audit verify" + where + " > " + out + " 2>&1").c_str());
    std::ifstream in(out);
    return {WEXITSTATUS(rc), std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
  }
  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "journal.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  // The journal sequence numbers of the audit records, in order.
  std::vector<uint64_t> AuditSeqs() {
    std::vector<uint64_t> seqs;
    auto j = SqliteJournal::Open((dir_ / "journal.db").string());
    EXPECT_TRUE(j.has_value());
    (void)(*j)->Replay(0, [&](uint64_t seq, const Event& e) {
      if (std::holds_alternative<AuditRecorded>(e.body)) seqs.push_back(seq);
      return Status::Ok();
    });
    return seqs;
  }
};

TEST_F(AuditTest, RecordsEveryMutationAndVerifyDetectsEditsAndRemovals) {
  std::string alice = Token("alice", Role::kMember, "a");
  EXPECT_EQ(Call("POST", "/v1/jobs", alice, JobBody("ok-job", "a")).first, 201);
  EXPECT_EQ(Call("POST", "/v1/jobs", alice, JobBody("bad", "a", "{\"gpus\": 1.5}")).first, 400);
  EXPECT_EQ(Call("POST", "/v1/jobs/ok-job/cancel", alice).first, 200);
  EXPECT_EQ(Call("POST", "/v1/nodes/n0/cordon", alice).first, 403);
  EXPECT_EQ(Post("/v1/jobs", JobBody("b-job", "b")).first, 201);
  auto [s, log] = Get("/v1/audit");
  ASSERT_EQ(s, 200);
  auto records = log["records"];
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0]["actor"], "alice");
  EXPECT_EQ(records[0]["role"], "member");
  EXPECT_EQ(records[0]["tenant"], "a");
  EXPECT_EQ(records[0]["action"], "job.submit");
  EXPECT_EQ(records[0]["target"], "ok-job");
  EXPECT_EQ(records[0]["outcome"], "ok");
  EXPECT_FALSE(records[0]["request_id"].get<std::string>().empty());
  EXPECT_EQ(records[2]["action"], "job.cancel");
  EXPECT_EQ(records[3]["action"], "node.cordon");
  EXPECT_EQ(records[3]["outcome"], "permission_denied: only a platform-admin operates the fleet");
  // An auditor of tenant a sees a's records only; a member may not read the log.
  std::string ava = Token("ava", Role::kAuditor, "a");
  auto seen = Call("GET", "/v1/audit", ava).second["records"];
  for (const auto& r : seen) EXPECT_EQ(r["tenant"], "a");
  EXPECT_EQ(seen.size(), 2u) << "its submit and cancel; the refused one named no tenant it could parse";
  EXPECT_EQ(Call("GET", "/v1/audit", alice).first, 403);

  // Untouched: the chain holds.
  auto [ok, out] = Verify();
  EXPECT_EQ(ok, 0) << out;
  EXPECT_NE(out.find("audit log intact: 5 records; head " + records[4]["hash"].get<std::string>()), std::string::npos) << out;

  // Edit one record's outcome, re-encoded as a careful forger would (the journal's checksum
  // recomputed too: it catches damage, not forgery): the audit hash gives it away.
  std::vector<uint64_t> seqs = AuditSeqs();
  ASSERT_EQ(seqs.size(), 5u);
  {
    auto j = SqliteJournal::Open((dir_ / "journal.db").string());
    Event forged;
    (void)(*j)->Replay(seqs[3] - 1, [&](uint64_t seq, const Event& e) {
      if (seq == seqs[3]) forged = e;
      return Status::Ok();
    });
    std::get<AuditRecorded>(forged.body).record.outcome = "ok";
    std::string bytes = EncodeEvent(forged), hex;
    for (unsigned char ch : bytes) {
      static const char* kHex = "0123456789abcdef";
      hex += kHex[ch >> 4];
      hex += kHex[ch & 15];
    }
    j->reset();
    Sql("UPDATE events SET body = x'" + hex + "', checksum = " +
        std::to_string(static_cast<int64_t>(RecordChecksum(seqs[3], bytes))) + " WHERE seq = " + std::to_string(seqs[3]));
  }
  auto [edited, out2] = Verify();
  EXPECT_EQ(edited, 1);
  EXPECT_NE(out2.find("audit log BROKEN at record 4 (journal event " + std::to_string(seqs[3]) +
                      "): its hash does not match its content (the record was edited)"),
            std::string::npos)
      << out2;
  // Remove a record instead: the journal's gap, and the chain, give it away.
  Sql("DELETE FROM events WHERE seq = " + std::to_string(seqs[1]));
  auto [removed, out3] = Verify();
  EXPECT_EQ(removed, 1);
  EXPECT_NE(out3.find("event " + std::to_string(seqs[1]) + " is missing"), std::string::npos) << out3;
}

// The same check on a PostgreSQL store: the fixture's events copied into a private server's
// journal, verified through --store, then copied again with one record's outcome changed (the
// journal's own checksum computed afresh, as a forger with the database's password would).
TEST_F(AuditTest, VerifyReadsAPostgresqlStoreAndFindsAnEditThere) {
  std::string alice = Token("alice", Role::kMember, "a");
  EXPECT_EQ(Call("POST", "/v1/jobs", alice, JobBody("ok-job", "a")).first, 201);
  EXPECT_EQ(Call("POST", "/v1/nodes/n0/cordon", alice).first, 403);
  EXPECT_EQ(Post("/v1/jobs", JobBody("b-job", "b")).first, 201);
  std::vector<Event> events;
  {
    auto j = SqliteJournal::Open((dir_ / "journal.db").string());
    ASSERT_TRUE(j.has_value());
    ASSERT_TRUE((*j)->Replay(0, [&](uint64_t, const Event& e) {
      events.push_back(e);
      return Status::Ok();
    }).ok());
  }
  auto pg = testing::PrivatePostgres::Start();
  ASSERT_TRUE(pg) << pg.error().message();
  auto copy_into = [&](const std::string& db, const std::vector<Event>& what) {
    ASSERT_TRUE((*pg)->Exec("postgres", "CREATE DATABASE " + db).ok());
    auto j = PgJournal::Open((*pg)->Conninfo(db));
    ASSERT_TRUE(j.has_value()) << j.error().message();
    ASSERT_TRUE((*j)->Append(what).has_value());
  };
  copy_into("intact", events);
  auto [ok, out] = Verify((*pg)->Conninfo("intact"));
  EXPECT_EQ(ok, 0) << out;
  EXPECT_NE(out.find("audit log intact: 3 records"), std::string::npos) << out;

  std::vector<Event> forged = events;
  int audits = 0;
  for (Event& e : forged) {
    if (auto* a = std::get_if<AuditRecorded>(&e.body); a && ++audits == 2) a->record.outcome = "ok";
  }
  copy_into("forged", forged);
  auto [edited, out2] = Verify((*pg)->Conninfo("forged"));
  EXPECT_EQ(edited, 1) << out2;
  EXPECT_NE(out2.find("audit log BROKEN at record 2"), std::string::npos) << out2;
  EXPECT_NE(out2.find("the record was edited"), std::string::npos) << out2;
}

}  // namespace
}  // namespace allot
