// The token and budget bodies as their handlers read them (server/api_bodies.h), without HTTP.
#include <gtest/gtest.h>

#include "server/api_bodies.h"
#include "state/billing_state.h"

namespace allot {
namespace {

TEST(TokenBody, ReadsPrincipalRoleAndScope) {
  TokenBody b;
  ASSERT_TRUE(ParseTokenBody(R"({"principal": "ci", "role": "member", "scope": "org-a/team-1"})", b).ok());
  EXPECT_EQ(b.principal, "ci");
  EXPECT_EQ(b.role, Role::kMember);
  EXPECT_EQ(b.scope, "org-a/team-1");
}

TEST(TokenBody, RefusesAnUnknownRoleButKeepsTheTargetForTheAudit) {
  TokenBody b;
  Status s = ParseTokenBody(R"({"principal": "ci", "role": "root", "scope": "org-a"})", b);
  EXPECT_EQ(s.message(), "body: role: 'root' is not valid; expected platform-admin, org-admin, team-admin, member, auditor or viewer");
  EXPECT_EQ(b.principal, "ci");
  EXPECT_EQ(b.scope, "org-a");
}

TEST(TokenBody, RefusesMissingAndUnknownFields) {
  TokenBody b;
  EXPECT_EQ(ParseTokenBody(R"({"principal": "ci", "role": "member"})", b).message(), "body: scope: missing; expected a string");
  EXPECT_EQ(ParseTokenBody(R"({"principal": "ci", "role": "member", "scope": "", "x": 1})", b).message(),
            "body: x: unknown field; expected one of: principal, role, scope");
  EXPECT_EQ(ParseTokenBody("[1]", b).message(), "body: expected {\"principal\", \"role\", \"scope\"}");
}

TEST(BudgetBody, ReadsCapsAsStringsNumbersOrNone) {
  BudgetBody b;
  ASSERT_TRUE(ParseBudgetBody(R"({"tenant": "research", "spend": "5000.25", "gpu_hours": 12.5})", b).ok());
  EXPECT_EQ(b.tenant, "research");
  EXPECT_EQ(b.spend_micros, 5000250000);
  EXPECT_EQ(b.gpu_hours_milli, 12500);
  ASSERT_TRUE(ParseBudgetBody(R"({"tenant": "research", "spend": "none", "gpu_hours": null})", b).ok());
  EXPECT_EQ(b.spend_micros, kNoCap);
  EXPECT_EQ(b.gpu_hours_milli, kNoCap);
}

TEST(BudgetBody, RefusesANegativeSpendButKeepsTheTenantForTheAudit) {
  BudgetBody b;
  Status s = ParseBudgetBody(R"({"tenant": "research", "spend": "-1"})", b);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(b.tenant, "research");
}

// POST /v1/budgets took {"tenant", "spend", "spned": …} and set no cap at all.
TEST(BudgetBody, RefusesUnknownAndDuplicateFields) {
  BudgetBody b;
  EXPECT_EQ(ParseBudgetBody(R"({"tenant": "research", "spned": "5000"})", b).message(),
            "body: spned: unknown field; expected one of: tenant, spend, gpu_hours");
  EXPECT_EQ(b.tenant, "research");
  // Found by fuzz_api_budget: without a tenant key, asking the missing node its type threw.
  BudgetBody nameless;
  EXPECT_EQ(ParseBudgetBody(R"({"tenadt": "research", "spend": "none", "gpu_hours": null})", nameless).message(),
            "body: tenadt: unknown field; expected one of: tenant, spend, gpu_hours");
  EXPECT_EQ(nameless.tenant, "");
  EXPECT_EQ(ParseBudgetBody(R"({"tenant": "research", "spend": "1", "spend": "9"})", b).message(),
            "body: spend: duplicate key; expected each key once in an object");
}

// The tenant move and the ledger adjustment are read the same way (one field reader).
TEST(MoveBody, ReadsTwoPathsAndRefusesAnythingElseNamingTheField) {
  MoveBody b;
  ASSERT_TRUE(ParseMoveBody(R"({"path": "org/team", "to": "other/team"})", b).ok());
  EXPECT_EQ(b.path, "org/team");
  EXPECT_EQ(b.to, "other/team");
  EXPECT_EQ(ParseMoveBody(R"({"path": "org/team"})", b).message(), "body: to: missing; expected a tenant path");
  EXPECT_EQ(ParseMoveBody(R"({"path": ["org"], "to": "x"})", b).message(), "body: path: expected a tenant path");
  EXPECT_EQ(ParseMoveBody(R"({"path": "a", "to": "b", "extra": 1})", b).message(),
            "body: extra: unknown field; expected one of: path, to");
}

TEST(AdjustmentBody, ReadsASignedAmountAsAStringOrANumber) {
  AdjustmentBody b;
  ASSERT_TRUE(ParseAdjustmentBody(R"({"tenant": "research", "amount": "-12.50", "note": "refund"})", b).ok());
  EXPECT_EQ(b.tenant, "research");
  EXPECT_EQ(b.amount_micros, -12500000);
  EXPECT_EQ(b.note, "refund");
  ASSERT_TRUE(ParseAdjustmentBody(R"({"tenant": "research", "amount": 3})", b).ok());
  EXPECT_EQ(b.amount_micros, 3000000);
  AdjustmentBody bad;
  Status s = ParseAdjustmentBody(R"({"tenant": "research", "amount": "twelve"})", bad);
  EXPECT_NE(s.message().find("body: amount: 'twelve' is not an amount; expected a decimal"), std::string::npos) << s.message();
  EXPECT_EQ(bad.tenant, "research") << "the audit still names the tenant";
  EXPECT_EQ(ParseAdjustmentBody(R"({"tenant": "research", "amount": "1", "nte": "x"})", bad).message(),
            "body: nte: unknown field; expected one of: tenant, amount, note");
}

}  // namespace
}  // namespace allot
