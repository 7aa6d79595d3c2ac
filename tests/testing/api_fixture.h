// A controller on a temporary SQLite journal, a simulated two-node H100 fleet, the API on a
// loopback port, and helpers that call it with a given bearer token.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/calendar.h"
#include "server/api.h"
#include "server/auth.h"
#include "store/sqlite_journal.h"
#include "testing/scratch_dir.h"

namespace allot::testing {

class ApiFixture : public ::testing::Test {
 protected:
  using Json = nlohmann::json;

  void SetUp() override {
    auto j = SqliteJournal::Open((dir_ / "journal.db").string());  // allotd's layout
    ASSERT_TRUE(j.has_value()) << j.error().message();
    ControllerOptions o;
    o.simulate_runs = true;
    o.audit_hash = [](const std::string& bytes) { return Blake2bHex(bytes); };
    Configure(o);
    ctl_ = std::make_unique<Controller>(std::move(*j), [this] { return now_.load(); }, o);
    ASSERT_TRUE(ctl_->Start().ok());
    for (int i = 0; i < 2; ++i) {
      NodeSpec n{"n" + std::to_string(i), "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
      ASSERT_TRUE(ctl_->Execute(NodeAdded{n}).has_value());
    }
    api_ = std::make_unique<ApiServer>(*ctl_, Options());
    ASSERT_TRUE(api_->Start().ok());
    admin_ = Token("root", Role::kPlatformAdmin, "");
  }
  // More controller options (a rate card), for a fixture that needs them.
  virtual void Configure(ControllerOptions&) {}
  // The API's options: loopback, any free port, a 4 KiB body limit.
  virtual ApiOptions Options() {
    ApiOptions o{"127.0.0.1", 0, 4096};
    o.log = [this](const std::string& line) {
      std::lock_guard lock(log_mu_);
      logged_.push_back(line);
    };
    return o;
  }
  std::vector<std::string> Logged() {
    std::lock_guard lock(log_mu_);
    return logged_;
  }

  void TearDown() override {
    api_.reset();
    ctl_.reset();
  }

  void AddTenant(const std::string& path, int64_t max_gpus = -1) {
    TenantSpec t;
    t.path = path;
    if (max_gpus >= 0) t.max[2] = max_gpus * kGpuUnit;  // gpu/H100-80GB is resource 2
    ASSERT_TRUE(ctl_->Execute(TenantUpserted{t}).has_value());
  }
  // A token for `principal` with `role` over `scope` ("" = the whole tree), issued directly.
  std::string Token(const std::string& principal, Role role, const std::string& scope) {
    std::string token = NewToken();
    TenantId t = ctl_->Read([&](const ClusterState& st) { return scope.empty() ? st.tenants().root() : st.tenants().Find(scope); });
    EXPECT_TRUE(t.valid()) << scope;
    auto r = ctl_->Execute(TokenIssued{TokenRecord{HashToken(token), Principal{principal, role, t}, 0, false}});
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return token;
  }

  std::pair<int, Json> Call(const std::string& method, const std::string& path, const std::string& token,
                            const std::string& body = "{}") {
    httplib::Client c("127.0.0.1", api_->port());
    if (!token.empty()) c.set_bearer_token_auth(token.c_str());
    httplib::Result r = method == "GET"      ? c.Get(path.c_str())
                        : method == "DELETE" ? c.Delete(path.c_str())
                        : method == "PATCH"  ? c.Patch(path.c_str(), body, "application/json")
                                             : c.Post(path.c_str(), body, "application/json");
    if (!r) return {0, Json()};
    return {r->status, r->body.empty() ? Json() : Json::parse(r->body, nullptr, false)};
  }
  std::pair<int, Json> Post(const std::string& path, const std::string& body) { return Call("POST", path, admin_, body); }
  // A POST as the platform admin with this Content-Type.
  std::pair<int, Json> PostAs(const std::string& content_type, const std::string& path, const std::string& body) {
    httplib::Client c("127.0.0.1", api_->port());
    c.set_bearer_token_auth(admin_.c_str());
    httplib::Result r = c.Post(path.c_str(), body, content_type.c_str());
    if (!r) return {0, Json()};
    return {r->status, r->body.empty() ? Json() : Json::parse(r->body, nullptr, false)};
  }
  std::pair<int, Json> Get(const std::string& path) { return Call("GET", path, admin_); }
  static std::string JobBody(const std::string& name, const std::string& tenant, const std::string& tasks = "{\"gpus\": 1}") {
    return R"({"name": ")" + name + R"(", "tenant": ")" + tenant + R"(", "duration": "1h", "tasks": )" + tasks + "}";
  }

  std::mutex log_mu_;
  std::vector<std::string> logged_;  // what the API reported to its log
  ScratchDir dir_{"api"};
  std::atomic<int64_t> now_{1'700'000'000'000};
  std::unique_ptr<Controller> ctl_;
  std::unique_ptr<ApiServer> api_;
  std::string admin_;
};

// Two member tenants under one org — org/a (alice) and org/b (bob) — for tests of what a tenant
// may book and see; At(h) is the fixture's clock plus h hours, in RFC 3339.
class TwoTenantsFixture : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("org");
    AddTenant("org/a");
    AddTenant("org/b");
    alice_ = Token("alice", Role::kMember, "org/a");
    bob_ = Token("bob", Role::kMember, "org/b");
  }
  static std::string At(int64_t hours_from_now) { return FormatRfc3339(1'700'000'000'000 + hours_from_now * 3'600'000); }
  std::string alice_, bob_;
};

}  // namespace allot::testing
