// Job and tenant bodies are read by their Content-Type: JSON as strict JSON, YAML only under a
// YAML type, anything else a 415 (server/body_reader.h). Before, every body went through the
// YAML parser whatever its type said.
#include "testing/api_fixture.h"

namespace allot {
namespace {

class ApiContentTypeTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("org");
    AddTenant("org/team");
  }
  static std::string Message(const Json& reply) {
    return reply.is_object() && reply.contains("error") ? reply["error"]["message"].get<std::string>() : reply.dump();
  }
};

TEST_F(ApiContentTypeTest, AJsonJobIsReadAsStrictJson) {
  const std::string job = JobBody("a", "org/team");
  auto [s1, e1] = PostAs("application/json", "/v1/jobs", job + " garbage");
  EXPECT_EQ(s1, 400);
  EXPECT_NE(Message(e1).find("body: malformed JSON: parse error at line 1"), std::string::npos) << e1;
  auto [s2, e2] = PostAs("application/json", "/v1/jobs",
                         R"({"name": "a", "tenant": "org/team", "duration": "1h", "duration": "9h", "tasks": {"gpus": 1}})");
  EXPECT_EQ(s2, 400);
  EXPECT_EQ(Message(e2), "body: job.duration: duplicate key; expected each key once in an object");
  auto [s3, e3] = PostAs("application/json", "/v1/jobs", R"({"name": !!str a, "tenant": "org/team", "duration": "1h", "tasks": {"gpus": 1}})");
  EXPECT_EQ(s3, 400);
  EXPECT_NE(Message(e3).find("body: malformed JSON"), std::string::npos) << e3;
  // A valid escape (a surrogate pair) that yaml-cpp refused without naming a field.
  auto [s4, r4] = PostAs("application/json; charset=utf-8", "/v1/jobs",
                         R"({"name": "b", "tenant": "org/team", "command": ["echo", "\ud83d\ude00"], "tasks": {"cpu": 1}})");
  EXPECT_EQ(s4, 201) << r4;
  EXPECT_EQ(ctl_->Read([](const ClusterState& st) { return st.jobs().size(); }), 1u);
}

// A tenant move is read as strictly: with "to" twice the last one no longer silently wins.
TEST_F(ApiContentTypeTest, ATenantMoveWithAKeyTwiceIsRefusedAndMovesNothing) {
  auto [s1, e1] = PostAs("application/json", "/v1/tenants/move", R"({"path": "org/team", "to": "org/a", "to": "org/b"})");
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(Message(e1), "body: to: duplicate key; expected each key once in an object");
  auto [s2, e2] = PostAs("application/json", "/v1/tenants/move", R"({"path": "org/team", "to": "org/b"} trailing)");
  EXPECT_EQ(s2, 400);
  EXPECT_NE(Message(e2).find("body: malformed JSON"), std::string::npos) << e2;
  EXPECT_TRUE(ctl_->Read([](const ClusterState& st) { return st.tenants().Find("org/team").valid(); })) << "not moved";
}

TEST_F(ApiContentTypeTest, YamlIsReadOnlyUnderAYamlContentType) {
  const std::string yaml = "name: y\ntenant: org/team\nduration: 1h\ntasks: {gpus: 1}\n";
  auto [s1, e1] = PostAs("application/json", "/v1/jobs", yaml);
  EXPECT_EQ(s1, 400) << e1;
  EXPECT_NE(Message(e1).find("malformed JSON"), std::string::npos) << e1;
  int i = 0;
  for (const char* type : {"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"}) {
    std::string named = "name: y" + std::to_string(i++) + yaml.substr(yaml.find('\n'));
    auto [s, r] = PostAs(type, "/v1/jobs", named);
    EXPECT_EQ(s, 201) << type << ": " << r;
  }
  auto [st, rt] = PostAs("text/yaml", "/v1/tenants", "path: org/yaml\nweight: 2\n");
  EXPECT_LT(st, 300) << rt;
  EXPECT_GE(st, 200) << rt;
}

TEST_F(ApiContentTypeTest, AnyOtherContentTypeIsA415NamingItAndWhatIsExpected) {
  for (const char* path : {"/v1/jobs", "/v1/tenants"}) {
    auto [s, e] = PostAs("text/plain", path, JobBody("p", "org/team"));
    EXPECT_EQ(s, 415) << path;
    EXPECT_EQ(e["error"]["code"], "unsupported_media_type") << e;
    EXPECT_NE(Message(e).find("Content-Type: 'text/plain' is not read here; expected application/json"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace allot
