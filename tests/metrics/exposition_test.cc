// The Prometheus text writer: escaping, # HELP and # TYPE, histograms cumulative with +Inf.
#include "metrics/exposition.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(ExpositionTest, EscapesBackslashQuoteAndNewlineInLabelValues) {
  EXPECT_EQ(EscapeLabelValue(R"(a\b"c)" "\n" "d"), R"(a\\b\"c\nd)");
  EXPECT_EQ(EscapeLabelValue("research/nlp"), "research/nlp");
  Exposition out;
  out.Family("x", "gauge", "help with \\ and\nnewline");
  out.Sample("x", {{"route", "GET /v1/jobs/([^/]+)"}, {"q", "say \"hi\""}}, 2);
  EXPECT_EQ(out.text(),
            "# HELP x help with \\\\ and\\nnewline\n"
            "# TYPE x gauge\n"
            "x{route=\"GET /v1/jobs/([^/]+)\",q=\"say \\\"hi\\\"\"} 2\n");
}

TEST(ExpositionTest, WritesIntegersPlainlyAndSpecialValuesAsPrometheusSpellsThem) {
  EXPECT_EQ(FormatSampleValue(3), "3");
  EXPECT_EQ(FormatSampleValue(0.25), "0.25");
  EXPECT_EQ(FormatSampleValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatSampleValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatSampleValue(0.0 / 0.0), "NaN");
}

TEST(ExpositionTest, HistogramBucketsAreCumulativeAndEndWithInfSumAndCount) {
  HistogramVec h({"class"}, {0.1, 1, 10});
  // 0.05 → le 0.1; 0.1 → le 0.1 (bounds are inclusive); 0.5 → le 1; 20 → only +Inf.
  for (double v : {0.05, 0.1, 0.5, 20.0}) h.Observe({"guaranteed"}, v);
  Exposition out;
  out.HistogramFamily("allot_job_wait_seconds", "Wait.", h);
  EXPECT_EQ(out.text(),
            "# HELP allot_job_wait_seconds Wait.\n"
            "# TYPE allot_job_wait_seconds histogram\n"
            "allot_job_wait_seconds_bucket{class=\"guaranteed\",le=\"0.1\"} 2\n"
            "allot_job_wait_seconds_bucket{class=\"guaranteed\",le=\"1\"} 3\n"
            "allot_job_wait_seconds_bucket{class=\"guaranteed\",le=\"10\"} 3\n"
            "allot_job_wait_seconds_bucket{class=\"guaranteed\",le=\"+Inf\"} 4\n"
            "allot_job_wait_seconds_sum{class=\"guaranteed\"} 20.65\n"
            "allot_job_wait_seconds_count{class=\"guaranteed\"} 4\n");
}

TEST(ExpositionTest, UnlabelledHistogramHasOnlyLe) {
  HistogramVec h({}, DurationBuckets());
  h.Observe({}, 0.003);
  Exposition out;
  out.HistogramFamily("allot_scheduler_pass_duration_seconds", "Pass.", h);
  EXPECT_NE(out.text().find("allot_scheduler_pass_duration_seconds_bucket{le=\"0.0025\"} 0\n"), std::string::npos) << out.text();
  EXPECT_NE(out.text().find("allot_scheduler_pass_duration_seconds_bucket{le=\"0.005\"} 1\n"), std::string::npos) << out.text();
  EXPECT_NE(out.text().find("allot_scheduler_pass_duration_seconds_bucket{le=\"+Inf\"} 1\n"), std::string::npos);
  EXPECT_NE(out.text().find("allot_scheduler_pass_duration_seconds_count 1\n"), std::string::npos);
}

}  // namespace
}  // namespace allot
