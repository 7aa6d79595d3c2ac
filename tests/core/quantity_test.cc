#include "core/quantity.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

struct ParseCase {
  const char* text;
  int64_t want;
};

TEST(ParseMilliTest, RoundsHalfUpInsteadOfTruncating) {
  const ParseCase cases[] = {
      {"2", 2000},
      {"0.46", 460},       // 0.46 × 1000 = 460 exactly; a double would give 459.99…
      {"0.57", 570},       // Ray's slip: truncating 0.57 as a double gives 569
      {"1.5", 1500},
      {".5", 500},
      {"0.0005", 1},       // 0.5 milli rounds up to 1
      {"0.0004999", 0},    // 0.4999 milli rounds down
      {"0.0015", 2},       // 1.5 milli → 2 (half-up, not half-even)
      {"0.0025", 3},       // 2.5 milli → 3 (half-up, not half-even)
      {"0.9999", 1000},    // 999.9 milli → 1000
      {"0", 0},
      {"007", 7000},
      {"0.1234567890123456789012", 123},  // digits past the 18th are ignored, not an error
      {"9223372036854775.807", 9223372036854775807},  // INT64_MAX milli
  };
  for (const ParseCase& c : cases) {
    Result<int64_t> got = ParseMilli(c.text);
    ASSERT_TRUE(got.has_value()) << c.text << ": " << got.error().ToString();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(ParseMilliTest, RejectsNegativeNonNumericAndMalformedNamingTheValue) {
  const char* bad[] = {"-1", "-0.5", "", "abc", "1e3", "+1", " 1", "1 ", "1.", ".", "1.2.3", "0x10", "1,5"};
  for (const char* text : bad) {
    Result<int64_t> got = ParseMilli(text);
    ASSERT_FALSE(got.has_value()) << text;
    EXPECT_EQ(got.error().code(), Code::kInvalidArgument) << text;
    EXPECT_NE(got.error().message().find("'" + std::string(text) + "'"), std::string::npos)
        << "message should quote the value: " << got.error().message();
  }
  EXPECT_NE(ParseMilli("-1").error().message().find("negative"), std::string::npos);
}

TEST(ParseMilliTest, RejectsValuesPastInt64) {
  EXPECT_FALSE(ParseMilli("9223372036854775.808").has_value());  // INT64_MAX + 1 milli
  EXPECT_FALSE(ParseMilli("99999999999999999999").has_value());
}

TEST(ParseMemoryTest, ConvertsBinaryUnitsToMiB) {
  const ParseCase cases[] = {
      {"512Mi", 512},
      {"1Gi", 1024},
      {"1024Gi", 1024 * 1024},
      {"1.5Ti", 1572864},  // 1.5 × 1024 × 1024
      {"0.5Gi", 512},
      {"0.0001Gi", 0},     // 0.1024 MiB rounds down
      {"0.0005Gi", 1},     // 0.512 MiB rounds up
      {"0.5Mi", 1},        // half a MiB rounds up
  };
  for (const ParseCase& c : cases) {
    Result<int64_t> got = ParseMemoryMiB(c.text);
    ASSERT_TRUE(got.has_value()) << c.text << ": " << got.error().ToString();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(ParseMemoryTest, RequiresAKnownUnitAndNamesTheWholeValue) {
  const char* bad[] = {"512", "1G", "1GB", "1Ki", "Gi", "-1Gi", "x Gi", "1gi"};
  for (const char* text : bad) {
    Result<int64_t> got = ParseMemoryMiB(text);
    ASSERT_FALSE(got.has_value()) << text;
    EXPECT_NE(got.error().message().find("'" + std::string(text) + "'"), std::string::npos)
        << "message should quote the whole value: " << got.error().message();
    EXPECT_NE(got.error().message().find("memory"), std::string::npos) << got.error().message();
  }
}

TEST(ParseDurationTest, ConvertsUnitsToMilliseconds) {
  const ParseCase cases[] = {
      {"90s", 90000},
      {"15m", 900000},       // 15 × 60 000
      {"2h", 7200000},       // 2 × 3 600 000
      {"1d", 86400000},
      {"1.5h", 5400000},
      {"0s", 0},
      {"0.0005s", 1},        // half a millisecond rounds up
      {"0.5d", 43200000},
  };
  for (const ParseCase& c : cases) {
    Result<int64_t> got = ParseDurationMs(c.text);
    ASSERT_TRUE(got.has_value()) << c.text << ": " << got.error().ToString();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(ParseDurationTest, RequiresAUnitAndNamesTheWholeValue) {
  const char* bad[] = {"90", "", "1w", "s", "-5m", "1.h", "ms"};
  for (const char* text : bad) {
    Result<int64_t> got = ParseDurationMs(text);
    ASSERT_FALSE(got.has_value()) << text;
    EXPECT_EQ(got.error().code(), Code::kInvalidArgument);
    EXPECT_NE(got.error().message().find("'" + std::string(text) + "'"), std::string::npos)
        << "message should quote the whole value: " << got.error().message();
  }
}

TEST(FormatTest, FormatsMilliWithoutTrailingZeros) {
  EXPECT_EQ(FormatMilli(2000), "2");
  EXPECT_EQ(FormatMilli(460), "0.46");
  EXPECT_EQ(FormatMilli(1), "0.001");
  EXPECT_EQ(FormatMilli(0), "0");
  EXPECT_EQ(FormatMilli(-1500), "-1.5");
  EXPECT_EQ(FormatMilli(INT64_MIN), "-9223372036854775.808");
}

TEST(FormatTest, FormatsMemoryInTheLargestWholeUnit) {
  EXPECT_EQ(FormatMemoryMiB(1048576), "1Ti");
  EXPECT_EQ(FormatMemoryMiB(2048), "2Gi");
  EXPECT_EQ(FormatMemoryMiB(512), "512Mi");
  EXPECT_EQ(FormatMemoryMiB(0), "0Mi");
}

TEST(FormatTest, FormattedQuantitiesParseBackToTheSameValue) {
  for (int64_t milli : {0, 1, 460, 999, 1000, 1500, 123456789}) {
    EXPECT_EQ(ParseMilli(FormatMilli(milli)).value(), milli) << milli;
  }
  for (int64_t mib : {1, 512, 1024, 1536, 1025, 1048576, 1572864, 3 * 1048576}) {
    EXPECT_EQ(ParseMemoryMiB(FormatMemoryMiB(mib)).value(), mib) << mib;
  }
}

TEST(FormatTest, FormatsSeconds) {
  EXPECT_EQ(FormatSeconds(1500), "1.5");
  EXPECT_EQ(FormatSeconds(7200000), "7200");
  EXPECT_EQ(FormatSeconds(130000), "130");
}

}  // namespace
}  // namespace allot
