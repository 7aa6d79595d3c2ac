// Job templates through the REST API (docs/templates.md): created by a manager of the tenant,
// seen by its subtree, named by a submit that overrides them, shown in the job's answer, deleted;
// members may not manage them, another subtree does not see them, every change is audited.
#include "testing/api_fixture.h"

namespace allot {
namespace {

class TemplatesApiTest : public testing::TwoTenantsFixture {
 protected:
  void SetUp() override {
    TwoTenantsFixture::SetUp();
    AddTenant("lab");
    org_admin_ = Token("olga", Role::kOrgAdmin, "org");
  }
  static constexpr const char* kRender =
      R"({"name": "render", "tenant": "org", "description": "the studio's renderer",
          "job": {"command": ["render.sh"], "image": "oci:/srv/images/renderer:2.1", "time_limit": "20m", "retries": 2,
                  "tasks": {"gpus": 1, "memory": "32Gi"}, "env": {"QUALITY": "final", "THREADS": "8"}}})";
  std::string org_admin_;
};

TEST_F(TemplatesApiTest, AManagerCreatesATemplateTheSubtreeSubmitsFromAndOverrides) {
  auto [s, t] = Call("POST", "/v1/templates", org_admin_, kRender);
  ASSERT_EQ(s, 201) << t;
  EXPECT_EQ(t["name"], "render");
  EXPECT_EQ(t["tenant"], "org");
  EXPECT_EQ(t["saved_by"], "olga");
  EXPECT_EQ(t["job"]["retries"], 2);
  EXPECT_EQ(t["job"]["tasks"], Json({{"gpus", 1}, {"memory", "32Gi"}}));
  // alice (a member of org/a) sees org's template: a template is visible to its subtree.
  auto [sl, list] = Call("GET", "/v1/templates?tenant=org/a", alice_);
  ASSERT_EQ(sl, 200) << list;
  ASSERT_EQ(list["templates"].size(), 1u);
  EXPECT_EQ(list["templates"][0]["name"], "render");
  auto [sg, shown] = Call("GET", "/v1/templates/render?tenant=org/a", alice_);
  ASSERT_EQ(sg, 200) << shown;
  EXPECT_EQ(shown["tenant"], "org");
  // She submits from it, overriding the time limit and one variable.
  auto [sj, job] = Call("POST", "/v1/jobs", alice_,
                        R"({"name": "shot-1", "tenant": "org/a", "template": "render", "time_limit": "45m",
                            "env": {"QUALITY": "draft"}})");
  ASSERT_EQ(sj, 201) << job;
  EXPECT_EQ(job["template"], Json({{"name", "render"}, {"tenant", "org"}}));
  EXPECT_EQ(job["command"], Json({"render.sh"}));
  EXPECT_EQ(job["retries"], 2);
  EXPECT_EQ(job["environment"]["image"], "oci:/srv/images/renderer:2.1");
  EXPECT_EQ(job["environment"]["env"], Json({{"QUALITY", "draft"}, {"THREADS", "8"}}));
  ctl_->Read([](const ClusterState& st) {
    const Job& j = st.job(st.FindJob(st.tenants().Find("org/a"), "shot-1"));
    EXPECT_EQ(j.spec.time_limit_ms, 45 * 60 * 1000);
    EXPECT_EQ(j.spec.template_tenant, "org");
    return 0;
  });
  // The events stream shows its saving to whoever may read the template's tenant (the org admin).
  bool streamed = false;
  const Json events = Call("GET", "/v1/events?since=0", org_admin_).second;
  for (const Json& e : events["events"]) {
    streamed |= e["type"] == "TemplateSaved" && e["template"] == "render" && e["tenant"] == "org";
  }
  EXPECT_TRUE(streamed) << events.dump();
  // The audit log has the creation, filed under the template's tenant.
  auto [sa, audit] = Get("/v1/audit");
  ASSERT_EQ(sa, 200) << audit;
  bool found = false;
  for (const Json& r : audit["records"]) found |= r["action"] == "template.create" && r["target"] == "render" && r["tenant"] == "org";
  EXPECT_TRUE(found) << audit;
}

TEST_F(TemplatesApiTest, MembersMayNotManageTemplatesAndAnotherSubtreeDoesNotSeeThem) {
  auto [sm, m] = Call("POST", "/v1/templates", alice_, R"({"name": "mine", "tenant": "org/a", "job": {"retries": 1}})");
  EXPECT_EQ(sm, 403) << m;
  EXPECT_EQ(m["error"]["message"], "a member may not manage templates (org-admin or team-admin of the tenant)");
  ASSERT_EQ(Call("POST", "/v1/templates", org_admin_, kRender).first, 201);
  // Again: a conflict, unless replaced.
  auto [sc, c] = Call("POST", "/v1/templates", org_admin_, kRender);
  EXPECT_EQ(sc, 409) << c;
  EXPECT_EQ(Call("POST", "/v1/templates?replace=true", org_admin_, kRender).first, 201);
  // lab is another subtree: its job cannot name org's template, and the error says what it can.
  AddTenant("lab/x");
  auto [sj, j] = Post("/v1/jobs", R"({"name": "x", "tenant": "lab/x", "template": "render", "duration": "1h"})");
  EXPECT_EQ(sj, 400) << j;
  EXPECT_EQ(j["error"]["message"], "body: job.template: no template 'render' visible to tenant lab/x (its own or an "
                                   "ancestor's); expected one of: none");
  // The org admin cannot create one for lab, outside its scope: lab does not exist for it.
  auto [sl, l] = Call("POST", "/v1/templates", org_admin_, R"({"name": "t", "tenant": "lab", "job": {"retries": 1}})");
  EXPECT_EQ(sl, 400) << l;
  // A lab viewer sees none of org's templates.
  std::string viewer = Token("vic", Role::kViewer, "lab");
  EXPECT_EQ(Call("GET", "/v1/templates", viewer).second["templates"].size(), 0u);
  EXPECT_EQ(Call("GET", "/v1/templates/render", viewer).first, 404);
  // Bad fields are refused naming them, and nothing is saved.
  auto [sb, b] = Call("POST", "/v1/templates", org_admin_, R"({"name": "bad", "tenant": "org", "job": {"time_limit": "soon"}})");
  EXPECT_EQ(sb, 400) << b;
  EXPECT_NE(b["error"]["message"].get<std::string>().find("job.time_limit: "), std::string::npos) << b;
  EXPECT_EQ(Call("GET", "/v1/templates/bad?tenant=org", org_admin_).first, 404);
}

TEST_F(TemplatesApiTest, DeletingATemplateKeepsTheJobsSubmittedFromIt) {
  ASSERT_EQ(Call("POST", "/v1/templates", org_admin_, kRender).first, 201);
  ASSERT_EQ(Call("POST", "/v1/jobs", alice_, R"({"name": "a", "tenant": "org/a", "template": "render"})").first, 201);
  EXPECT_EQ(Call("DELETE", "/v1/templates/render?tenant=org", alice_).first, 403);
  auto [sd, d] = Call("DELETE", "/v1/templates/render?tenant=org/a", org_admin_);
  EXPECT_EQ(sd, 404) << "defined at org, not org/a: " << d;
  auto [s, gone] = Call("DELETE", "/v1/templates/render?tenant=org", org_admin_);
  ASSERT_EQ(s, 200) << gone;
  EXPECT_EQ(gone["name"], "render");
  EXPECT_EQ(Get("/v1/templates").second["templates"].size(), 0u);
  auto [sj, job] = Get("/v1/jobs/a");
  EXPECT_EQ(job["template"]["name"], "render") << "the record stays: the job kept its fields";
  EXPECT_EQ(job["retries"], 2);
  auto [sn, n] = Call("POST", "/v1/jobs", alice_, R"({"name": "b", "tenant": "org/a", "template": "render"})");
  EXPECT_EQ(sn, 400) << n;
}

// A service names a template as a job does: its replicas take the template's fields under the
// service's own; a template with a field a service refuses (a time limit) is refused naming it.
TEST_F(TemplatesApiTest, AServiceNamesATemplateAndItsReplicasTakeItsFields) {
  ASSERT_EQ(Call("POST", "/v1/templates", org_admin_,
                 R"({"name": "serve", "tenant": "org", "job": {"command": ["serve.sh"], "image": "oci:/srv/images/vllm:0.6",
                     "tasks": {"gpus": 1, "memory": "8Gi"}, "env": {"MODEL": "llama-3-8b", "DTYPE": "bf16"}}})").first, 201);
  auto [s, svc] = Call("POST", "/v1/services", alice_,
                       R"({"name": "chat", "tenant": "org/a", "kind": "service", "replicas": 2, "template": "serve",
                           "env": {"MODEL": "llama-3-70b"}})");
  ASSERT_EQ(s, 201) << svc;
  ctl_->Read([](const ClusterState& st) {
    const Service& v = st.service(st.FindService(st.tenants().Find("org/a"), "chat"));
    EXPECT_EQ(v.spec.replica.command, std::vector<std::string>({"serve.sh"}));
    EXPECT_EQ(v.spec.replica.template_name, "serve");
    EXPECT_EQ(v.spec.replica.template_tenant, "org");
    return 0;
  });
  ASSERT_EQ(Call("POST", "/v1/templates", org_admin_, kRender).first, 201);
  auto [sr, refused] = Call("POST", "/v1/jobs", alice_,
                            R"({"name": "web", "tenant": "org/a", "kind": "service", "replicas": 1, "template": "render"})");
  EXPECT_EQ(sr, 400) << refused;
  EXPECT_NE(refused.dump().find("time_limit"), std::string::npos) << refused;
  ctl_->Read([](const ClusterState& st) {
    EXPECT_FALSE(st.FindService(st.tenants().Find("org/a"), "web").valid()) << "nothing created";
    return 0;
  });
}

}  // namespace
}  // namespace allot
