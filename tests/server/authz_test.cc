// The authorization matrix, over real HTTP: every role × every endpoint × a tenant in its scope
// and one outside it. Outside the scope an object does not exist (404, or the same "unknown
// tenant" a missing one gets); inside it, an action the role lacks is 403; without a token, 401.
#include <set>

#include "billing/sodium_crypto.h"
#include "metering/budget_gate.h"
#include "testing/api_fixture.h"

namespace allot {
namespace {

class AuthzTest : public testing::ApiFixture {
 protected:
  // With a rate card, so the billing routes answer (invoices, ledger, budgets).
  void Configure(ControllerOptions& o) override {
    auto billing = std::make_shared<BillingSetup>();
    billing->card.gpu_hour["H100-80GB"] = 2500000;
    o.metering = std::make_shared<MeteringSink>(billing, std::make_shared<SodiumLedgerCrypto>(SodiumLedgerCrypto::Generate()));
    o.scheduler.gate = std::make_shared<BudgetGateFactory>(billing);
  }
  void SetUp() override {
    ApiFixture::SetUp();
    for (const char* t : {"org-a", "org-a/team-1", "org-a/team-2", "org-b", "org-b/team-3"}) AddTenant(t);
    tokens_ = {
        {"platform-admin", admin_},
        {"org-admin", Token("olga", Role::kOrgAdmin, "org-a")},
        {"team-admin", Token("tom", Role::kTeamAdmin, "org-a/team-1")},
        {"member", Token("mia", Role::kMember, "org-a/team-1")},
        {"auditor", Token("ava", Role::kAuditor, "org-a")},
        {"viewer", Token("vic", Role::kViewer, "org-a/team-1")},
    };
    ASSERT_EQ(Post("/v1/jobs", JobBody("own", "org-a/team-1")).first, 201);
    ASSERT_EQ(Post("/v1/jobs", JobBody("foreign", "org-b/team-3")).first, 201);
  }
  // A fresh job in the given tenant, for an action that consumes it.
  std::string FreshJob(const std::string& tenant) {
    std::string name = "j" + std::to_string(next_++);
    EXPECT_EQ(Post("/v1/jobs", JobBody(name, tenant)).first, 201);
    return name;
  }

  std::vector<std::pair<std::string, std::string>> tokens_;  // role → token
  int next_ = 0;
};

TEST_F(AuthzTest, EveryRoleOnEveryEndpointInAndOutOfScope) {
  struct Row {
    std::string what;
    std::function<std::pair<std::string, std::string>(AuthzTest&)> request;  // method, path (+ body via lambda)
    std::map<std::string, int> expect;  // role → status
  };
  const std::map<std::string, int> all_200 = {{"platform-admin", 200}, {"org-admin", 200}, {"team-admin", 200},
                                              {"member", 200},         {"auditor", 200},   {"viewer", 200}};
  auto only_admin = [](int ok, int other) {
    return std::map<std::string, int>{{"platform-admin", ok}, {"org-admin", other}, {"team-admin", other},
                                      {"member", other},      {"auditor", other},   {"viewer", other}};
  };
  const std::map<std::string, int> submitters = {{"platform-admin", 201}, {"org-admin", 201}, {"team-admin", 201},
                                                 {"member", 201},         {"auditor", 403},   {"viewer", 403}};
  const std::map<std::string, int> cancellers = {{"platform-admin", 200}, {"org-admin", 200}, {"team-admin", 200},
                                                 {"member", 200},         {"auditor", 403},   {"viewer", 403}};
  const std::map<std::string, int> issuers = {{"platform-admin", 201}, {"org-admin", 201}, {"team-admin", 201},
                                              {"member", 403},         {"auditor", 403},   {"viewer", 403}};
  // Tenants: only the subtree in scope (before the loop below adds some).
  for (const auto& [role, token] : tokens_) {
    auto [ts, tenants] = Call("GET", "/v1/tenants", token);
    ASSERT_EQ(ts, 200);
    std::map<std::string, size_t> visible = {{"platform-admin", 5}, {"org-admin", 3}, {"team-admin", 1},
                                             {"member", 1},         {"auditor", 3},   {"viewer", 1}};
    EXPECT_EQ(tenants["tenants"].size(), visible.at(role)) << role;
  }
  for (const auto& [role, token] : tokens_) {
    SCOPED_TRACE(role);
    auto expect = [&](const std::map<std::string, int>& m) { return m.at(role); };
    // Jobs: read, explain, list filter — own vs foreign.
    EXPECT_EQ(Call("GET", "/v1/jobs/own", token).first, expect(all_200));
    EXPECT_EQ(Call("GET", "/v1/jobs/foreign", token).first, expect(only_admin(200, 404)));
    EXPECT_EQ(Call("GET", "/v1/jobs/own/explain", token).first, expect(all_200));
    EXPECT_EQ(Call("GET", "/v1/jobs/foreign/explain", token).first, expect(only_admin(200, 404)));
    EXPECT_EQ(Call("GET", "/v1/jobs?tenant=org-a/team-1", token).first, expect(all_200));
    EXPECT_EQ(Call("GET", "/v1/jobs?tenant=org-b", token).first, expect(only_admin(200, 404)));
    // A listing never shows a foreign job.
    auto [ls, list] = Call("GET", "/v1/jobs?limit=1000", token);
    ASSERT_EQ(ls, 200);
    bool sees_foreign = false;
    for (const auto& j : list["jobs"]) sees_foreign |= j["tenant"] == "org-b/team-3";
    EXPECT_EQ(sees_foreign, role == "platform-admin");
    // Submit in scope / out of scope (the same answer as a tenant that does not exist).
    auto [ss, sub] = Call("POST", "/v1/jobs", token, JobBody("by-" + role, "org-a/team-1"));
    EXPECT_EQ(ss, expect(submitters)) << sub;
    auto [sf, subf] = Call("POST", "/v1/jobs", token, JobBody("by-" + role + "-b", "org-b/team-3"));
    EXPECT_EQ(sf, expect(only_admin(201, 400))) << subf;
    auto [sn, subn] = Call("POST", "/v1/jobs", token, JobBody("by-" + role + "-c", "org-z"));
    EXPECT_EQ(sn, 400);
    if (role != "platform-admin") {
      std::string foreign = subf["error"]["message"], missing = subn["error"]["message"];
      foreign.replace(foreign.find("org-b/team-3"), 12, "org-z");
      EXPECT_EQ(foreign, missing) << "a foreign tenant reads exactly like a missing one";
    }
    // Cancel in scope / out of scope.
    EXPECT_EQ(Call("POST", "/v1/jobs/" + FreshJob("org-a/team-1") + "/cancel", token).first, expect(cancellers));
    EXPECT_EQ(Call("POST", "/v1/jobs/" + FreshJob("org-b/team-3") + "/cancel", token).first, expect(only_admin(200, 404)));
    // Tenant lifecycle: managers of team-1 create, rename and delete below it; nobody else
    // learns that org-b's tenants exist.
    const std::map<std::string, int> managers = {{"platform-admin", 0}, {"org-admin", 0}, {"team-admin", 0},
                                                 {"member", 403},       {"auditor", 403},   {"viewer", 403}};
    auto managed = [&](int ok) { int v = expect(managers); return v == 0 ? ok : v; };
    std::string mine = "org-a/team-1/p-" + role, theirs = "org-b/team-3/p-" + role;
    ASSERT_EQ(Post("/v1/tenants", R"({"path": ")" + theirs + R"("})").first, 201);
    EXPECT_EQ(Call("POST", "/v1/tenants", token, R"({"path": ")" + mine + R"("})").first, managed(201));
    if (managed(201) != 201) {
      ASSERT_EQ(Post("/v1/tenants", R"({"path": ")" + mine + R"("})").first, 201);
    }
    EXPECT_EQ(Call("POST", "/v1/tenants/move", token, R"({"path": ")" + mine + R"(", "to": ")" + mine + R"(-x"})").first,
              managed(200));
    if (managed(200) == 200) mine += "-x";
    EXPECT_EQ(Call("POST", "/v1/tenants/move", token, R"({"path": ")" + theirs + R"(", "to": "org-a/team-1/t-)" + role + R"("})").first,
              expect(only_admin(200, 404)));
    EXPECT_EQ(Call("POST", "/v1/tenants/move", token, R"({"path": ")" + mine + R"(", "to": "org-b/m-)" + role + R"("})").first,
              expect(only_admin(200, managed(404))));
    if (role != "platform-admin") {
      EXPECT_EQ(Call("DELETE", "/v1/tenants/" + mine, token).first, managed(200));
      EXPECT_EQ(Call("DELETE", "/v1/tenants/" + theirs, token).first, 404);
      EXPECT_EQ(Call("DELETE", "/v1/tenants/org-b/team-3", token).first, 404);
    } else {
      EXPECT_EQ(Call("DELETE", "/v1/tenants/org-b/team-3", token).first, 409) << "it has a pending job and children";
    }
    // Usage: own subtree for everyone, a foreign one does not exist.
    EXPECT_EQ(Call("GET", "/v1/usage?tenant=org-a/team-1", token).first, 200);
    EXPECT_EQ(Call("GET", "/v1/usage?tenant=org-b", token).first, expect(only_admin(200, 404)));
    // Billing: invoices of the org in scope (the caller's part of it), a foreign org does not
    // exist; the ledger for platform-admins (and auditors over the whole tree); budgets read in
    // scope, set by the manager of the tenant's parent.
    EXPECT_EQ(Call("GET", "/v1/invoices?org=org-a", token).first, 200);
    EXPECT_EQ(Call("GET", "/v1/invoices?org=org-b", token).first, expect(only_admin(200, 404)));
    EXPECT_EQ(Call("GET", "/v1/ledger", token).first, expect(only_admin(200, 403)));
    EXPECT_EQ(Call("POST", "/v1/ledger/adjustments", token, R"({"tenant": "org-a/team-1", "amount": "-1", "note": "n"})").first,
              expect(only_admin(201, 403)));
    EXPECT_EQ(Call("GET", "/v1/reconciliation", token).first, expect(only_admin(200, 403)));
    EXPECT_EQ(Call("GET", "/v1/budgets", token).first, 200);
    const std::map<std::string, int> org_managers = {{"platform-admin", 200}, {"org-admin", 200}, {"team-admin", 403},
                                                     {"member", 403},         {"auditor", 403},   {"viewer", 403}};
    EXPECT_EQ(Call("POST", "/v1/budgets", token, R"({"tenant": "org-a/team-1", "spend": "100"})").first, expect(org_managers));
    EXPECT_EQ(Call("POST", "/v1/budgets", token, R"({"tenant": "org-b/team-3", "spend": "100"})").first,
              expect(only_admin(200, 404)));
    // The audit log: auditors and managers; members and viewers may not.
    const std::map<std::string, int> audit_readers = {{"platform-admin", 200}, {"org-admin", 200}, {"team-admin", 200},
                                                      {"member", 403},         {"auditor", 200},   {"viewer", 403}};
    EXPECT_EQ(Call("GET", "/v1/audit", token).first, expect(audit_readers));
    EXPECT_EQ(Call("GET", "/v1/events?since=0", token).first, 200);
    // Fleet: everyone reads nodes; only the platform admin operates them.
    EXPECT_EQ(Call("GET", "/v1/nodes", token).first, 200);
    EXPECT_EQ(Call("POST", "/v1/nodes/n0/cordon", token).first, expect(only_admin(200, 403)));
    EXPECT_EQ(Call("POST", "/v1/nodes/n0/uncordon", token).first, expect(only_admin(200, 403)));
    EXPECT_EQ(Call("GET", "/v1/nodes/n0", token).first, 200);
    EXPECT_EQ(Call("POST", "/v1/nodes/n0/check", token).first, expect(only_admin(409, 403))) << "n0 has no agent";
    // Task logs: whoever may see the job; a foreign job does not exist.
    EXPECT_EQ(Call("GET", "/v1/jobs/own/logs", token).first, 200);
    EXPECT_EQ(Call("GET", "/v1/jobs/foreign/logs", token).first, expect(only_admin(200, 404)));
    // The agents' protocol is the node role's (a platform-admin may act for any node).
    EXPECT_EQ(Call("POST", "/v1/agent/register", token).first, expect(only_admin(400, 403)));
    EXPECT_EQ(Call("POST", "/v1/agent/heartbeat", token).first, expect(only_admin(400, 403)));
    EXPECT_EQ(Call("GET", "/v1/agent/assignments?node=n0", token).first, expect(only_admin(404, 403)));
    EXPECT_EQ(Call("POST", "/v1/agent/logs?node=n0", token).first, expect(only_admin(409, 403))) << "no log directory here";
    // Tokens: managers grant inside their scope, never a stronger role, never outside.
    auto [ks, tok] = Call("POST", "/v1/tokens", token, R"({"principal": "new", "role": "member", "scope": "org-a/team-1"})");
    EXPECT_EQ(ks, expect(issuers)) << tok;
    if (ks == 201) {
      EXPECT_EQ(tok["token"].get<std::string>().rfind("allot_", 0), 0u);
      EXPECT_EQ(Call("GET", "/v1/jobs/own", tok["token"]).first, 200) << "the new token works";
    }
    EXPECT_EQ(Call("POST", "/v1/tokens", token, R"({"principal": "x", "role": "member", "scope": "org-b"})").first,
              expect(only_admin(201, 404)));
    EXPECT_EQ(Call("POST", "/v1/tokens", token, R"({"principal": "x", "role": "platform-admin", "scope": "org-a/team-1"})").first,
              expect(only_admin(201, 403)));
  }
}

TEST_F(AuthzTest, WithoutAValidTokenEveryEndpointIs401AuditedAtMostTenASecondAndHealthIsOpen) {
  int refused = 0;
  for (const std::string& token : {std::string(), std::string("allot_not-a-real-token")}) {
    for (auto [method, path] : std::vector<std::pair<std::string, std::string>>{
             {"GET", "/v1/jobs"}, {"GET", "/v1/jobs/own"}, {"POST", "/v1/jobs"}, {"POST", "/v1/jobs/own/cancel"},
             {"GET", "/v1/jobs/own/explain"}, {"GET", "/v1/tenants"}, {"GET", "/v1/nodes"},
             {"POST", "/v1/nodes/n0/cordon"}, {"POST", "/v1/tokens"}, {"GET", "/v1/tokens"},
             {"POST", "/v1/tokens/0123456789abcdef/revoke"}, {"GET", "/v1/audit"}, {"GET", "/v1/events"}, {"GET", "/v1/usage"},
             {"POST", "/v1/tenants"}, {"POST", "/v1/tenants/move"}, {"DELETE", "/v1/tenants/org-a"},
             {"GET", "/v1/nodes/n0"}, {"POST", "/v1/nodes/n0/check"}, {"GET", "/v1/jobs/own/logs"},
             {"POST", "/v1/agent/register"}, {"POST", "/v1/agent/heartbeat"}, {"GET", "/v1/agent/assignments"},
             {"POST", "/v1/agent/logs"},
             {"GET", "/v1/invoices"}, {"GET", "/v1/ledger"}, {"GET", "/v1/reconciliation"}, {"GET", "/v1/budgets"},
             {"POST", "/v1/budgets"}, {"POST", "/v1/ledger/adjustments"}}) {
      auto [s, body] = Call(method, path, token, JobBody("x", "org-a"));
      ++refused;
      EXPECT_EQ(s, 401) << method << " " << path;
      EXPECT_EQ(body["error"]["code"], "unauthenticated");
    }
  }
  EXPECT_EQ(Call("GET", "/healthz", "").first, 200);
  EXPECT_EQ(Call("GET", "/readyz", "").first, 200);
  // They are in the audit log (actor "anonymous") and allotd's log, at most 10 a second: a flood
  // cannot grow the chain without bound; the rest are counted, and the count goes with the next
  // one recorded.
  std::vector<std::string> lines = Logged();
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[0], "401 authenticate GET /v1/jobs from 127.0.0.1 by anonymous: Authorization: expected 'Bearer <token>'")
      << lines[0];
  auto refusals = [&] {
    std::vector<Json> out;
    Json audit = Get("/v1/audit").second;  // kept: a range-for over a temporary's member dangles
    for (const auto& e : audit["records"]) {
      if (e["action"] == "authenticate") out.push_back(e);
    }
    return out;
  };
  ASSERT_EQ(refusals().size(), 10u);
  EXPECT_EQ(refusals()[0]["actor"], "anonymous");
  EXPECT_EQ(refusals()[0]["outcome"], "unauthenticated: Authorization: expected 'Bearer <token>'") << refusals()[0];
  now_ += 1000;
  EXPECT_EQ(Call("GET", "/v1/jobs", "allot_nope").first, 401);
  lines = Logged();
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines[10], "401 authenticate GET /v1/jobs from 127.0.0.1 (and " + std::to_string(refused - 10) +
                           " more refusals in the second before, not recorded) by anonymous: the bearer token is not known or was revoked");
  ASSERT_EQ(refusals().size(), 11u);
  EXPECT_NE(refusals()[10]["target"].get<std::string>().find(std::to_string(refused - 10) + " more refusals"), std::string::npos);
}

class RateLimitTest : public testing::ApiFixture {
 protected:
  ApiOptions Options() override {
    ApiOptions o = ApiFixture::Options();
    o.rate_per_second = 1;
    o.rate_burst = 3;
    return o;
  }
};

TEST_F(RateLimitTest, ATokenPastItsRateGets429WithRetryAfterAndOthersAreUnaffected) {
  std::string other = Token("other", Role::kViewer, "");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Call("GET", "/v1/nodes", admin_).first, 200) << i;
  httplib::Client c("127.0.0.1", api_->port());
  c.set_bearer_token_auth(admin_.c_str());
  auto r = c.Get("/v1/nodes");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_NE(r->body.find("rate limit: more than 1 requests per second with this token"), std::string::npos) << r->body;
  EXPECT_EQ(Call("GET", "/v1/nodes", other).first, 200) << "the limit is per token";
}

TEST_F(AuthzTest, ManagersListAndRevokeOnlyTheTokensOfTheirScope) {
  std::string tom = tokens_[2].second;  // team-admin over org-a/team-1
  auto listed = Call("GET", "/v1/tokens", tom).second["tokens"];
  std::set<std::string> principals;
  for (const auto& t : listed) principals.insert(t["principal"]);
  EXPECT_EQ(principals, (std::set<std::string>{"tom", "mia", "vic"})) << "team-1's tokens only";
  // olga's token (org-a scope) is outside tom's scope: it does not exist for him.
  std::string olga_id;
  Json all = Get("/v1/tokens").second;
  for (const auto& t : all["tokens"]) {
    if (t["principal"] == "olga") olga_id = t["id"];
  }
  ASSERT_EQ(olga_id.size(), 16u) << all;
  EXPECT_EQ(Call("POST", "/v1/tokens/" + olga_id + "/revoke", tom).first, 404);
  EXPECT_EQ(Call("GET", "/v1/jobs/own", tokens_[1].second).first, 200) << "olga's token still works";
  EXPECT_EQ(Call("GET", "/v1/tokens", tokens_[3].second).second["tokens"].size(), 0u) << "a member manages no tokens";
}

TEST_F(AuthzTest, ARevokedTokenStopsWorking) {
  std::string t = Token("eve", Role::kMember, "org-a/team-1");
  EXPECT_EQ(Call("GET", "/v1/jobs/own", t).first, 200);
  ASSERT_TRUE(ctl_->Execute(TokenRevoked{HashToken(t)}).has_value());
  EXPECT_EQ(Call("GET", "/v1/jobs/own", t).first, 401);
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

class TenantsTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    ASSERT_EQ(Post("/v1/tenants", R"({"path": "org", "guarantee": {"gpu/H100-80GB": 8}, "max": {"gpu/H100-80GB": 12}})").first, 201);
    ASSERT_EQ(Post("/v1/tenants", R"({"path": "other"})").first, 201);
  }
};

TEST_F(TenantsTest, AnOrgAdminShapesItsTeamsWithinItsAllotmentButNotItsOrg) {
  std::string olga = Token("olga", Role::kOrgAdmin, "org");
  auto [s1, b1] = Call("POST", "/v1/tenants", olga, R"({"path": "org/team", "guarantee": {"gpu/H100-80GB": 6}})");
  EXPECT_EQ(s1, 201) << b1;
  auto [s2, b2] = Call("POST", "/v1/tenants", olga, R"({"path": "org/team", "guarantee": {"gpu/H100-80GB": 4}, "weight": 2})");
  EXPECT_EQ(s2, 200) << "an update" << b2;
  auto tenants = Call("GET", "/v1/tenants", olga).second["tenants"];
  ASSERT_EQ(tenants.size(), 2u);
  EXPECT_EQ(tenants[1]["guarantee"]["gpu/H100-80GB"], "4");
  EXPECT_EQ(tenants[1]["weight"], "2");
  // Past the org's own guarantee: refused by the tree, nothing changes.
  auto [s3, b3] = Call("POST", "/v1/tenants", olga, R"({"path": "org/big", "guarantee": {"gpu/H100-80GB": 5}})");
  EXPECT_EQ(s3 / 100, 4) << b3;
  EXPECT_NE(b3["error"]["message"].get<std::string>().find("guarantee"), std::string::npos) << b3;
  EXPECT_EQ(Call("GET", "/v1/tenants", olga).second["tenants"].size(), 2u);
  // Its own org, a foreign parent, a bad field.
  EXPECT_EQ(Call("POST", "/v1/tenants", olga, R"({"path": "org", "max": {"gpu/H100-80GB": 64}})").first, 403);
  EXPECT_EQ(Call("POST", "/v1/tenants", olga, R"({"path": "other/x"})").first, 404);
  auto [s4, b4] = Call("POST", "/v1/tenants", olga, R"({"path": "org/t2", "guarantee": {"gpu/B300": 1}})");
  EXPECT_EQ(s4, 400);
  EXPECT_EQ(b4["error"]["message"], "tenant.guarantee.gpu/B300: unknown GPU model 'B300'");
  // A member manages nothing.
  std::string mia = Token("mia", Role::kMember, "org/team");
  EXPECT_EQ(Call("POST", "/v1/tenants", mia, R"({"path": "org/team/p"})").first, 403);
}

TEST_F(TenantsTest, TopLevelGuaranteesMustFitTheFleet) {
  // The fixture's fleet has 16 H100s; org holds 8.
  auto [s, b] = Post("/v1/tenants", R"({"path": "greedy", "guarantee": {"gpu/H100-80GB": 9}})");
  EXPECT_EQ(s, 409) << b;
  EXPECT_EQ(b["error"]["message"], "tenants: top-level guarantees for gpu/H100-80GB sum to 17, more than the fleet has (16)");
  EXPECT_EQ(Post("/v1/tenants", R"({"path": "greedy", "guarantee": {"gpu/H100-80GB": 8}})").first, 201);
  EXPECT_EQ(Call("GET", "/v1/tenants", admin_).second["tenants"].size(), 3u);
}

TEST_F(TenantsTest, DeleteAndMoveKeepQuotasAndRunningJobsWhole) {
  ASSERT_EQ(Post("/v1/tenants", R"({"path": "org/team", "guarantee": {"gpu/H100-80GB": 6}})").first, 201);
  ASSERT_EQ(Post("/v1/tenants", R"({"path": "org/team/p"})").first, 201);
  std::string tom = Token("tom", Role::kTeamAdmin, "org/team");
  ASSERT_EQ(Post("/v1/jobs", JobBody("run", "org/team/p", R"({"gpus": 4})")).first, 201);
  auto running = [&] { return Get("/v1/jobs/run").second["state"]; };
  for (int i = 0; i < 50 && running() != "running"; ++i) usleep(20000);
  ASSERT_EQ(running(), "running");
  // With children, or with a job holding resources: 409, and the reason says what to do.
  auto [s1, e1] = Call("DELETE", "/v1/tenants/org/team", admin_);
  EXPECT_EQ(s1, 409);
  EXPECT_NE(e1["error"]["message"].get<std::string>().find("delete or move them first"), std::string::npos) << e1;
  auto [s2, e2] = Call("DELETE", "/v1/tenants/org/team/p", admin_);
  EXPECT_EQ(s2, 409);
  EXPECT_NE(e2["error"]["message"].get<std::string>().find("still has jobs holding resources"), std::string::npos) << e2;
  // Under 'other', guaranteeing 4, the team's 6 guaranteed GPUs do not fit: refused, naming the sum.
  ASSERT_EQ(Post("/v1/tenants", R"({"path": "other", "guarantee": {"gpu/H100-80GB": 4}})").first, 200);
  auto [s3, e3] = Post("/v1/tenants/move", R"({"path": "org/team", "to": "other/team"})");
  EXPECT_EQ(s3, 400) << e3;
  EXPECT_NE(e3["error"]["message"].get<std::string>().find("4 is less than its children's guarantees (6)"), std::string::npos) << e3;
  // A rename inside the org moves the running job's usage along; it keeps running.
  auto [s4, e4] = Post("/v1/tenants/move", R"({"path": "org/team", "to": "org/renamed"})");
  ASSERT_EQ(s4, 200) << e4;
  Json job = Get("/v1/jobs/run").second;
  EXPECT_EQ(job["tenant"], "org/renamed/p");
  EXPECT_EQ(job["state"], "running");
  EXPECT_EQ(Call("GET", "/v1/jobs/run", tom).first, 200) << "the team admin's token follows the moved tenant";
  auto [s5, e5] = Post("/v1/tenants/move", R"({"path": "org/renamed", "to": "org/x", "extra": 1})");
  EXPECT_EQ(s5, 400);
  EXPECT_EQ(e5["error"]["message"], "body: extra: unknown field; expected one of: path, to");
  // Once the job is cancelled the leaf can go, and its tokens with it.
  std::string pia = Token("pia", Role::kMember, "org/renamed/p");
  ASSERT_EQ(Post("/v1/jobs/run/cancel", "{}").first, 200);
  auto [s6, e6] = Call("DELETE", "/v1/tenants/org/renamed/p", admin_);
  EXPECT_EQ(s6, 200) << e6;
  EXPECT_EQ(Call("GET", "/v1/tenants", pia).first, 401) << "a deleted tenant's tokens are revoked";
  EXPECT_EQ(Call("GET", "/v1/jobs/run", tom).first, 200) << "its finished job stays visible to the team";
  EXPECT_EQ(Call("DELETE", "/v1/tenants/org/renamed/p", admin_).first, 404);
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

class EventsTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("a");
    AddTenant("b");
  }
};

TEST_F(EventsTest, TheWatchStreamLongPollsAndShowsOnlyTheCallersScope) {
  std::string alice = Token("alice", Role::kMember, "a");
  auto [s0, first] = Call("GET", "/v1/events?since=0", alice);
  ASSERT_EQ(s0, 200);
  uint64_t last = first["last"];
  // A long poll returns as soon as something happens.
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(Post("/v1/jobs", JobBody("in-a", "a")).first, 201);
    EXPECT_EQ(Post("/v1/jobs", JobBody("in-b", "b")).first, 201);
  });
  auto t0 = std::chrono::steady_clock::now();
  auto [s1, got] = Call("GET", "/v1/events?wait=10&since=" + std::to_string(last), alice);
  later.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  ASSERT_EQ(s1, 200);
  // Catch up with everything so far: a's job is submitted and placed; b's job never shows.
  auto [s2, all] = Call("GET", "/v1/events?since=" + std::to_string(last), alice);
  ASSERT_EQ(s2, 200);
  std::vector<std::string> seen;
  for (const auto& e : all["events"]) {
    EXPECT_NE(e.value("job", ""), "in-b") << e;
    EXPECT_NE(e["type"], "TokenIssued");
    EXPECT_NE(e["type"], "AuditRecorded");
    if (e.contains("job")) seen.push_back(e["type"].get<std::string>() + ":" + e["job"].get<std::string>());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"JobSubmitted:in-a", "JobPlaced:in-a"}));
  EXPECT_GT(all["last"].get<uint64_t>(), last);
  // The platform admin sees b's job too.
  auto [s3, admin] = Get("/v1/events?since=" + std::to_string(last));
  bool b_seen = false;
  for (const auto& e : admin["events"]) b_seen |= e.value("job", "") == "in-b";
  EXPECT_TRUE(b_seen);
  EXPECT_EQ(Call("GET", "/v1/events?wait=99", alice).first, 400);
}

}  // namespace
}  // namespace allot
