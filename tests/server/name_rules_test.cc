// One rule for names (core/names.h) at the API's entry points, over real HTTP: what cannot be
// addressed in a URL or printed safely on someone else's terminal is refused, and the refusal
// names the field, shows the value escaped and says what was expected.
#include <string>
#include <vector>

#include "testing/api_fixture.h"

namespace allot {
namespace {

class NameRulesTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    for (const char* t : {"org-a", "org-a/team-1", "org-b"}) AddTenant(t);
  }
  static std::string Message(const Json& body) {
    return body.is_object() && body.contains("error") ? body["error"].value("message", "") : "";
  }
};

TEST_F(NameRulesTest, NamesThatCannotBeAddressedOrPrintedSafelyAreRefusedNamingTheFieldAndWhatWasExpected) {
  struct Case {
    std::string name;        // as JSON text between the quotes
    std::string shown;       // as the message shows it
  };
  for (const Case& c : std::vector<Case>{{"a/b", "a/b"},
                                         {"..", ".."},
                                         {".", "."},
                                         {"\\u001b[2J\\u001b[31mok", "\\x1b[2J\\x1b[31mok"},
                                         {"a\\u0000b", "a\\x00b"},
                                         {"caf\\u00e9", "café"},
                                         {"has space", "has space"},
                                         {std::string(3000, 'x'), std::string(200, 'x') + "…(3000 bytes)"}}) {
    SCOPED_TRACE(c.shown.substr(0, 20));
    auto [code, body] = Post("/v1/jobs", JobBody(c.name, "org-a/team-1"));
    EXPECT_EQ(code, 400) << body.dump();
    std::string m = Message(body);
    EXPECT_NE(m.find("job.name: '" + c.shown + "' "), std::string::npos) << m.substr(0, 300);
    EXPECT_NE(m.find("expected 1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit"), std::string::npos) << m.substr(0, 300);
    EXPECT_EQ(m.find('\x1b'), std::string::npos);
  }
  // 10,000 bytes of name are past the API's body limit before any name rule.
  auto [huge, hb] = Post("/v1/jobs", JobBody(std::string(10000, 'x'), "org-a/team-1"));
  EXPECT_EQ(huge, 413) << hb.dump();
  auto [list, lb] = Get("/v1/jobs");
  ASSERT_EQ(list, 200);
  EXPECT_TRUE(lb["jobs"].empty()) << lb.dump();
}

TEST_F(NameRulesTest, TenantPathsAreCheckedSegmentBySegment) {
  for (const char* path : {"org-a/x/..", "org-a/x/.", "org-a//x", "org-a/x y", "org-a/\\u001bx"}) {
    SCOPED_TRACE(path);
    auto [code, body] = Post("/v1/tenants", std::string(R"({"path": ")") + path + R"("})");
    EXPECT_EQ(code, 400) << body.dump();
    EXPECT_NE(Message(body).find("tenant.path: '"), std::string::npos) << body.dump();
  }
  auto [moved, mb] = Post("/v1/tenants/move", R"({"path": "org-a/team-1", "to": "org-b/.."})");
  EXPECT_EQ(moved, 400) << mb.dump();
  EXPECT_EQ(Message(mb).rfind("to: 'org-b/..' has a segment '..'", 0), 0u) << mb.dump();
}

TEST_F(NameRulesTest, ATokensPrincipalIsANameOrAnEmailAddress) {
  auto issue = [&](const std::string& principal, const std::string& role = "member") {
    return Post("/v1/tokens", Json{{"principal", principal}, {"role", role}, {"scope", "org-a"}}.dump());
  };
  EXPECT_EQ(issue("alice@example.com").first, 201);
  EXPECT_EQ(issue("ci-bot").first, 201);
  auto [code, body] = issue("\x1b]0;pwned\x07");
  EXPECT_EQ(code, 400) << body.dump();
  EXPECT_EQ(Message(body).rfind("principal: '\\x1b]0;pwned\\x07' ", 0), 0u) << body.dump();
}

TEST_F(NameRulesTest, AnAgentRegisteringANodeWhoseNameIsNotANameIsRefused) {
  std::string node_token = Token("*", Role::kNode, "");
  for (const char* name : {"a/b", "..", "gpu\x1b[2J"}) {
    Json inv = {{"node", name}, {"address", "x.local"}, {"cpu", "32"}, {"memory", "256Gi"},
                {"gpus", {{{"index", 0}, {"uuid", "GPU-0"}, {"model", "H100-80GB"}}}}};
    auto [code, body] = Call("POST", "/v1/agent/register", node_token, inv.dump());
    EXPECT_EQ(code, 400) << body.dump();
    EXPECT_EQ(Message(body).rfind("registration.node: '", 0), 0u) << body.dump();
    EXPECT_EQ(Message(body).find('\x1b'), std::string::npos);
  }
  auto [code, nodes] = Get("/v1/nodes");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(nodes["nodes"].size(), 2u) << "only the fixture's two";
}

}  // namespace
}  // namespace allot
