// Job templates in the state (state/job_template.h): saved (created or replaced) and removed by
// events, refused when they could never be a template, capped per tenant, and gone with their
// tenant.
#include <gtest/gtest.h>

#include "state/cluster_state.h"

namespace allot {
namespace {

class TemplateStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {"vfx", "vfx/shots"}) {
      TenantSpec t;
      t.path = path;
      ASSERT_TRUE(state_.apply({0, TenantUpserted{t}}).ok());
    }
    vfx_ = state_.tenants().Find("vfx");
    shots_ = state_.tenants().Find("vfx/shots");
  }
  Status Save(TenantId t, const std::string& name, const std::string& fields, int64_t at = 10) {
    return state_.apply({at, TemplateSaved{JobTemplate{t, name, "", fields, "olga", 0}}});
  }
  ClusterState state_;
  TenantId vfx_, shots_;
};

TEST_F(TemplateStateTest, ASavedTemplateIsReplacedByNameAndRemoved) {
  ASSERT_TRUE(Save(vfx_, "render", "{retries: 1}", 10).ok());
  ASSERT_TRUE(Save(shots_, "render", "{retries: 2}", 11).ok()) << "the same name at another tenant is another template";
  ASSERT_TRUE(Save(vfx_, "render", "{retries: 3}", 12).ok()) << "saving again replaces";
  ASSERT_EQ(state_.templates().size(), 2u);
  EXPECT_EQ(state_.FindTemplate(vfx_, "render")->fields, "{retries: 3}");
  EXPECT_EQ(state_.FindTemplate(vfx_, "render")->saved_ms, 12) << "the event's time, not the record's";
  ASSERT_TRUE(state_.apply({13, TemplateRemoved{vfx_, "render"}}).ok());
  EXPECT_EQ(state_.FindTemplate(vfx_, "render"), nullptr);
  EXPECT_NE(state_.FindTemplate(shots_, "render"), nullptr);
  Status again = state_.apply({14, TemplateRemoved{vfx_, "render"}});
  EXPECT_EQ(again.code(), Code::kNotFound);
  EXPECT_EQ(again.message(), "template 'render' does not exist in tenant 'vfx'");
}

TEST_F(TemplateStateTest, WhatCouldNeverBeATemplateIsRefusedAndChangesNothing) {
  EXPECT_EQ(Save(TenantId(99), "render", "{retries: 1}").message(), "template: tenant 99 does not exist");
  EXPECT_EQ(Save(state_.tenants().root(), "render", "{retries: 1}").message(), "template: tenant 0 does not exist");
  EXPECT_EQ(Save(vfx_, "", "{retries: 1}").message(), "template: name: empty or over 255 bytes");
  EXPECT_EQ(Save(vfx_, "render", "").message(), "template 'render': fields: empty or over 65536 bytes");
  EXPECT_TRUE(state_.templates().empty());
}

TEST_F(TemplateStateTest, ATenantHoldsAtMostItsCapAndItsTemplatesGoWithIt) {
  for (size_t i = 0; i < kMaxTemplatesPerTenant; ++i) ASSERT_TRUE(Save(shots_, "t" + std::to_string(i), "{retries: 1}").ok());
  Status over = Save(shots_, "one-more", "{retries: 1}");
  EXPECT_EQ(over.code(), Code::kResourceExhausted);
  EXPECT_EQ(over.message(), "tenant 'vfx/shots' has 200 templates, the most it may; delete one first");
  EXPECT_TRUE(Save(shots_, "t0", "{retries: 2}").ok()) << "replacing one is no new one";
  ASSERT_TRUE(Save(vfx_, "render", "{retries: 1}").ok());
  ASSERT_TRUE(state_.apply({20, TenantRemoved{"vfx/shots"}}).ok());
  ASSERT_EQ(state_.templates().size(), 1u) << "only vfx's is left";
  EXPECT_NE(state_.FindTemplate(vfx_, "render"), nullptr);
}

}  // namespace
}  // namespace allot
