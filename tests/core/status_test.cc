#include "core/status.h"

#include <gtest/gtest.h>

#include "core/resources.h"

namespace allot {
namespace {

TEST(StatusTest, CodesMapOneToOneToHttp) {
  struct Case {
    Code code;
    int http;
    const char* name;
  };
  const Case cases[] = {
      {Code::kOk, 200, "ok"},
      {Code::kInvalidArgument, 400, "invalid_argument"},
      {Code::kUnauthenticated, 401, "unauthenticated"},
      {Code::kPermissionDenied, 403, "permission_denied"},
      {Code::kNotFound, 404, "not_found"},
      {Code::kConflict, 409, "conflict"},
      {Code::kFailedPrecondition, 409, "failed_precondition"},
      {Code::kResourceExhausted, 429, "resource_exhausted"},
      {Code::kUnavailable, 503, "unavailable"},
      {Code::kInternal, 500, "internal"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(HttpStatus(c.code), c.http) << c.name;
    EXPECT_STREQ(CodeName(c.code), c.name);
  }
}

TEST(StatusTest, ToStringPrefixesTheCodeName) {
  EXPECT_EQ(Status::Ok().ToString(), "ok");
  EXPECT_TRUE(Status::Ok().ok());
  Status s = NotFound("job 'x' does not exist");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ToString(), "not_found: job 'x' does not exist");
}

TEST(StatusTest, ResultCarriesAValueOrAStatus) {
  Result<int> good = 3;
  Result<int> bad = Err(Conflict("taken"));
  EXPECT_EQ(*good, 3);
  EXPECT_EQ(bad.error().code(), Code::kConflict);
}

TEST(ResourcesTest, QuotaAmountsSaturateAtUnlimited) {
  EXPECT_EQ(SatAdd(kUnlimited, 1), kUnlimited);
  EXPECT_EQ(SatAdd(kUnlimited - 5, 10), kUnlimited);
  EXPECT_EQ(SatAdd(2, 3), 5);
  Resources r = Resources::Filled(kUnlimited);
  Resources one;
  one[kCpu] = 1;
  r += one;
  EXPECT_EQ(r[kCpu], kUnlimited);
}

TEST(ResourcesTest, InternsNamesInFirstSeenOrderAfterCpuAndMemory) {
  ResourceNames names;
  EXPECT_EQ(names.Find("cpu"), kCpu);
  EXPECT_EQ(names.Find("memory"), kMemory);
  EXPECT_EQ(names.Intern("gpu/H100-80GB"), kFirstGpu);
  EXPECT_EQ(names.Intern("gpu/A100-40GB"), kFirstGpu + 1);
  EXPECT_EQ(names.Intern("gpu/H100-80GB"), kFirstGpu);
  EXPECT_EQ(names.Find("gpu/B200"), ResourceNames::kInvalid);
  EXPECT_EQ(FormatAmount(kMemory, 2048), "2Gi");
  EXPECT_EQ(FormatAmount(kFirstGpu, 8 * kGpuUnit), "8");
  // A MIG 1g slice is exactly 1/7 of a GPU; shown to three decimals.
  EXPECT_EQ(FormatAmount(kFirstGpu, kGpuUnit / 7), "0.143");
  EXPECT_EQ(ParseAmount(kFirstGpu, "0.46").value(), 9660);
  EXPECT_EQ(ParseAmount(kCpu, "0.46").value(), 460);
  EXPECT_EQ(ParseAmount(kMemory, "1Gi").value(), 1024);
  EXPECT_EQ(FormatAmount(kCpu, kUnlimited), "unlimited");
}

}  // namespace
}  // namespace allot
