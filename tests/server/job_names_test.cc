// Job names over real HTTP: unique within a tenant, not across tenants. A name in a tenant the
// caller may not see is neither revealed nor reserved; a caller who sees several tenants with
// a job of that name says which with ?tenant=.
#include <string>

#include "testing/api_fixture.h"

namespace allot {
namespace {

class JobNamesTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    for (const char* t : {"org-a", "org-a/team-1", "org-b", "org-b/team-3"}) AddTenant(t);
    alice_ = Token("alice", Role::kMember, "org-a/team-1");
    bob_ = Token("bob", Role::kMember, "org-b/team-3");
  }
  static std::string Message(const Json& body) {
    return body.is_object() && body.contains("error") ? body["error"].value("message", "") : "";
  }

  std::string alice_, bob_;
};

TEST_F(JobNamesTest, TwoTenantsMayEachHaveAJobOfTheSameNameAndEachMemberGetsItsOwn) {
  auto [a, ab] = Call("POST", "/v1/jobs", alice_, JobBody("train", "org-a/team-1"));
  ASSERT_EQ(a, 201) << ab.dump();
  auto [b, bb] = Call("POST", "/v1/jobs", bob_, JobBody("train", "org-b/team-3"));
  ASSERT_EQ(b, 201) << bb.dump();  // was 409: "job 'train' already exists"

  auto [ga, ja] = Call("GET", "/v1/jobs/train", alice_);
  ASSERT_EQ(ga, 200) << ja.dump();
  EXPECT_EQ(ja["tenant"], "org-a/team-1");
  auto [gb, jb] = Call("GET", "/v1/jobs/train/explain", bob_);
  ASSERT_EQ(gb, 200) << jb.dump();
  EXPECT_EQ(jb["tenant"], "org-b/team-3");

  // Bob cancels his own; Alice's goes on.
  auto [cb, cj] = Call("POST", "/v1/jobs/train/cancel", bob_);
  ASSERT_EQ(cb, 200) << cj.dump();
  EXPECT_EQ(cj["tenant"], "org-b/team-3");
  EXPECT_EQ(cj["state"], "cancelled");
  EXPECT_NE(Call("GET", "/v1/jobs/train", alice_).second["state"], "cancelled");
  // Within one tenant a name is still taken once.
  auto [again, aj] = Call("POST", "/v1/jobs", alice_, JobBody("train", "org-a/team-1"));
  EXPECT_EQ(again, 409);
  EXPECT_NE(Message(aj).find("already exists in tenant 'org-a/team-1'"), std::string::npos) << aj.dump();
}

TEST_F(JobNamesTest, ANameInATenantTheCallerCannotSeeIsNeitherRevealedNorReserved) {
  ASSERT_EQ(Call("POST", "/v1/jobs", bob_, JobBody("secret-project", "org-b/team-3")).first, 201);
  // Not revealed: the 404 reads the same as for a name nobody uses, with or without ?tenant=.
  auto [hidden, hb] = Call("GET", "/v1/jobs/secret-project", alice_);
  auto [none, nb] = Call("GET", "/v1/jobs/no-such-job", alice_);
  EXPECT_EQ(hidden, 404);
  EXPECT_EQ(none, 404);
  EXPECT_EQ(Message(hb), "job 'secret-project' does not exist");
  EXPECT_EQ(Message(nb), "job 'no-such-job' does not exist");
  auto [t1, tb1] = Call("GET", "/v1/jobs/secret-project?tenant=org-b/team-3", alice_);
  auto [t2, tb2] = Call("GET", "/v1/jobs/secret-project?tenant=org-b/no-such-team", alice_);
  EXPECT_EQ(t1, 404);
  EXPECT_EQ(t2, 404);
  EXPECT_EQ(Message(tb1), "job 'secret-project' does not exist in tenant 'org-b/team-3'");
  EXPECT_EQ(Message(tb2), "job 'secret-project' does not exist in tenant 'org-b/no-such-team'");
  EXPECT_EQ(Call("POST", "/v1/jobs/secret-project/cancel", alice_).first, 404);
  EXPECT_EQ(Call("GET", "/v1/jobs/secret-project/logs", alice_).first, 404);
  // Not reserved: Alice may use the name.
  auto [mine, mb] = Call("POST", "/v1/jobs", alice_, JobBody("secret-project", "org-a/team-1"));
  EXPECT_EQ(mine, 201) << mb.dump();  // was 409, which told Alice that some tenant has it
}

TEST_F(JobNamesTest, ACallerWhoSeesSeveralTenantsWithTheNameIsAskedWhichAndSaysItWithTenant) {
  ASSERT_EQ(Post("/v1/jobs", JobBody("train", "org-a/team-1")).first, 201);
  ASSERT_EQ(Post("/v1/jobs", JobBody("train", "org-b/team-3")).first, 201);
  auto [amb, ab] = Get("/v1/jobs/train");
  EXPECT_EQ(amb, 409);
  EXPECT_EQ(Message(ab), "job 'train' exists in 2 tenants (org-a/team-1, org-b/team-3); expected ?tenant=PATH to say which");
  // An org-admin of org-a sees only org-a's: for it the name is not ambiguous.
  std::string olga = Token("olga", Role::kOrgAdmin, "org-a");
  auto [o, ob] = Call("GET", "/v1/jobs/train", olga);
  EXPECT_EQ(o, 200);
  EXPECT_EQ(ob["tenant"], "org-a/team-1");

  auto [g, gb] = Get("/v1/jobs/train?tenant=org-b/team-3");
  ASSERT_EQ(g, 200) << gb.dump();
  EXPECT_EQ(gb["tenant"], "org-b/team-3");
  EXPECT_EQ(Get("/v1/jobs/train/explain?tenant=org-a/team-1").second["tenant"], "org-a/team-1");
  EXPECT_EQ(Get("/v1/jobs/train?tenant=org-a").first, 404);  // the tenant itself, not its subtree
  EXPECT_EQ(Post("/v1/jobs/train/cancel", "{}").first, 409);
  auto [c, cb] = Post("/v1/jobs/train/cancel?tenant=org-a/team-1", "{}");
  ASSERT_EQ(c, 200) << cb.dump();
  EXPECT_EQ(cb["tenant"], "org-a/team-1");
  EXPECT_EQ(cb["state"], "cancelled");
  EXPECT_NE(Get("/v1/jobs/train?tenant=org-b/team-3").second["state"], "cancelled");
}

}  // namespace
}  // namespace allot
