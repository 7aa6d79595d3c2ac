// The anomaly detector: each kind fires at its threshold and not below, once per its dedupe.
#include "alerting/detector.h"

#include <gtest/gtest.h>

#include "core/calendar.h"
#include "core/resources.h"

namespace allot {
namespace {

constexpr int64_t kMin = 60'000;
// Monday 2026-11-23 00:00 UTC.
const int64_t kMonday = DaysFromCivil(2026, 11, 23) * 86400'000;

std::string Detail(const Alert& a, const std::string& key) {
  for (const auto& [k, v] : a.details) {
    if (k == key) return std::holds_alternative<int64_t>(v) ? std::to_string(std::get<int64_t>(v)) : std::get<std::string>(v);
  }
  return "(none)";
}

TEST(FailedLogins, TenFailuresWithinFiveMinutesFireOnceAndNineDoNot) {
  AnomalyDetector d;
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(d.FailedLogin("10.0.0.7", kMonday + i * 1000)) << i;
  auto a = d.FailedLogin("10.0.0.7", kMonday + 9000);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, AlertKind::kFailedLogins);
  EXPECT_EQ(a->summary, "10 failed logins from 10.0.0.7 within 5 min");
  EXPECT_EQ(a->labels, (std::vector<std::pair<std::string, std::string>>{{"source", "10.0.0.7"}}));
  EXPECT_EQ(Detail(*a, "failures"), "10");
  // More from the same source within the window: said once.
  for (int i = 10; i < 40; ++i) EXPECT_FALSE(d.FailedLogin("10.0.0.7", kMonday + i * 1000)) << i;
  // Another source counts alone.
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(d.FailedLogin("10.0.0.8", kMonday + i * 1000));
  // After the window, a source still failing is said again.
  EXPECT_TRUE(d.FailedLogin("10.0.0.7", kMonday + 9000 + 5 * kMin));
}

TEST(FailedLogins, TenFailuresSpreadOverMoreThanTheWindowDoNotFire) {
  AnomalyDetector d;
  // 10 failures 40 s apart: the first and the tenth are 6 min apart.
  for (int i = 0; i < 30; ++i) EXPECT_FALSE(d.FailedLogin("10.0.0.7", kMonday + i * 40'000)) << i;
}

TEST(FailedLogins, AFloodOfAddressesKeepsABoundedMemoryAndStillFires) {
  AnomalyDetector d;
  for (size_t i = 0; i < AnomalyDetector::kMaxKeys + 100; ++i) d.FailedLogin("addr" + std::to_string(i), kMonday);
  std::optional<Alert> a;
  for (int i = 0; i < 10; ++i) a = d.FailedLogin("attacker", kMonday + 1000 + i);
  EXPECT_TRUE(a);
}

TEST(CrashLoop, AJobFamilyIsTheNameWithoutItsLastCounter) {
  EXPECT_EQ(JobFamily("train-7"), "train");
  EXPECT_EQ(JobFamily("train_12"), "train");
  EXPECT_EQ(JobFamily("eval.3"), "eval");
  EXPECT_EQ(JobFamily("llama-2-7b-run-41"), "llama-2-7b-run");
  EXPECT_EQ(JobFamily("train"), "train");
  EXPECT_EQ(JobFamily("resnet50"), "resnet50") << "digits not after a separator are part of the name";
  EXPECT_EQ(JobFamily("42"), "42");
  EXPECT_EQ(JobFamily("-7"), "-7");
}

TEST(CrashLoop, FiveFailuresOfOneJobFamilyFireNamingJobCountAndLastReason) {
  AnomalyDetector d;
  JobFailure f{"research/nlp", "train", 0, ""};
  for (int i = 0; i < 4; ++i) {
    f.job = "train-" + std::to_string(i);
    f.job_id = 10 + i;
    f.reason = "task 0 on n1: exited with code 1";
    EXPECT_FALSE(d.JobFailed(f, kMonday + i * kMin)) << i;
  }
  // Another tenant's job of the same name, and another name, count apart.
  EXPECT_FALSE(d.JobFailed({"research/cv", "train", 30, "x"}, kMonday + 4 * kMin));
  EXPECT_FALSE(d.JobFailed({"research/nlp", "eval", 31, "x"}, kMonday + 4 * kMin));
  f.job = "train-4";
  f.job_id = 14;
  f.reason = "task 0 on n1: killed by SIGSEGV";
  auto a = d.JobFailed(f, kMonday + 4 * kMin);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->summary,
            "job 'train' of tenant research/nlp failed 5 times within 15 min; last: train-4: task 0 on n1: killed by SIGSEGV");
  EXPECT_EQ(Detail(*a, "last_job"), "train-4");
  EXPECT_EQ(a->labels, (std::vector<std::pair<std::string, std::string>>{{"job", "train"}, {"tenant", "research/nlp"}}));
  EXPECT_EQ(Detail(*a, "last_job_id"), "14");
  EXPECT_EQ(Detail(*a, "failures"), "5");
  EXPECT_FALSE(d.JobFailed(f, kMonday + 5 * kMin)) << "said once per window";
}

TEST(CrashLoop, FailuresSlowerThanTheWindowAreNoLoop) {
  AnomalyDetector d;
  // Every 4 minutes: five failures span 16 minutes, more than 15.
  for (int i = 0; i < 12; ++i) EXPECT_FALSE(d.JobFailed({"t", "job", i, "exit 1"}, kMonday + i * 4 * kMin)) << i;
}

GpuEccSample Ecc(int64_t corrected, int64_t uncorrected) {
  return {"n1", 3, "GPU-abc", "H100-80GB", corrected, uncorrected};
}

TEST(GpuEcc, ACorrectedRiseAboveTheThresholdWithinAnHourFiresOnce) {
  AnomalyDetector d;
  EXPECT_TRUE(d.GpuEcc(Ecc(1000, 0), kMonday).empty()) << "the first report is the base";
  EXPECT_TRUE(d.GpuEcc(Ecc(1050, 0), kMonday + 10 * kMin).empty());
  EXPECT_TRUE(d.GpuEcc(Ecc(1100, 0), kMonday + 20 * kMin).empty()) << "a rise of exactly 100 is not more than 100";
  auto a = d.GpuEcc(Ecc(1101, 0), kMonday + 30 * kMin);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].severity, AlertSeverity::kWarning);
  EXPECT_EQ(a[0].summary, "GPU 3 (H100-80GB, GPU-abc) on n1: corrected ECC errors rose by 101 (from 1000 to 1101) within 60 min");
  EXPECT_EQ(a[0].labels, (std::vector<std::pair<std::string, std::string>>{
                             {"gpu", "3"}, {"model", "H100-80GB"}, {"node", "n1"}, {"uuid", "GPU-abc"}}));
  EXPECT_EQ(Detail(a[0], "rise"), "101");
  EXPECT_TRUE(d.GpuEcc(Ecc(1500, 0), kMonday + 40 * kMin).empty()) << "quiet for the window";
}

// allotd samples a GPU whose counters did not change only while the detector is not settled on
// it (AlertMonitor::CheckEcc; 50,000 GPUs a second at 6,250 nodes). Settled must mean that a
// repeat changes nothing: here a rise held back by the quiet period fires on a repeat of the
// same count once the quiet ends, so that GPU is not settled until then.
TEST(GpuEcc, AGpuIsSettledOnlyWhenARepeatOfItsCountersCouldNotFire) {
  AnomalyDetector d;
  EXPECT_FALSE(d.GpuEccSettled("n1", 3)) << "never heard from";
  EXPECT_TRUE(d.GpuEcc(Ecc(1000, 0), kMonday).empty());
  EXPECT_TRUE(d.GpuEccSettled("n1", 3)) << "one count: a repeat is a rise of 0";
  EXPECT_FALSE(d.GpuEccSettled("n1", 2)) << "another GPU of the node";
  EXPECT_TRUE(d.GpuEcc(Ecc(1050, 0), kMonday + 10 * kMin).empty());
  EXPECT_FALSE(d.GpuEccSettled("n1", 3)) << "a rise in its window";
  ASSERT_EQ(d.GpuEcc(Ecc(1101, 0), kMonday + 30 * kMin).size(), 1u);
  EXPECT_TRUE(d.GpuEccSettled("n1", 3)) << "fired: the next alert needs a new rise";
  EXPECT_TRUE(d.GpuEcc(Ecc(1300, 0), kMonday + 40 * kMin).empty()) << "quiet";
  EXPECT_FALSE(d.GpuEccSettled("n1", 3));
  EXPECT_TRUE(d.GpuEcc(Ecc(1300, 0), kMonday + 80 * kMin).empty()) << "still quiet";
  EXPECT_EQ(d.GpuEcc(Ecc(1300, 0), kMonday + 90 * kMin).size(), 1u) << "the same count fires once the quiet ends";
  EXPECT_TRUE(d.GpuEccSettled("n1", 3));
  EXPECT_TRUE(d.GpuEcc(Ecc(1300, 0), kMonday + 100 * kMin).empty());
}

TEST(GpuEcc, ASlowCorrectedRiseSpreadOverHoursDoesNotFire) {
  AnomalyDetector d;
  // One more a minute, reported each minute, for five hours: 60 within any hour.
  for (int i = 0; i < 300; ++i) EXPECT_TRUE(d.GpuEcc(Ecc(i, 0), kMonday + i * kMin).empty()) << i;
  // Reported seldom, a count is taken as held until the next report: 60 more every 90 minutes
  // never makes 100 within an hour.
  AnomalyDetector seldom;
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(seldom.GpuEcc(Ecc(60 * i, 0), kMonday + i * 90 * kMin).empty()) << i;
}

TEST(GpuEcc, AFleetOfMoreGpusThanTheKeyCapIsStillWatched) {
  AnomalyDetector d;
  const int gpus = static_cast<int>(AnomalyDetector::kMaxKeys) + 8;
  for (int g = 0; g < gpus; ++g) d.GpuEcc({"n" + std::to_string(g / 8), g % 8, "", "H100-80GB", 0, 0}, kMonday);
  EXPECT_EQ(d.GpuEcc({"n" + std::to_string((gpus - 1) / 8), (gpus - 1) % 8, "", "H100-80GB", 0, 1}, kMonday + kMin).size(), 1u)
      << "the last GPU heard from still has its base";
}

TEST(GpuEcc, CountersResetByTheDriverStartAfresh) {
  AnomalyDetector d;
  d.GpuEcc(Ecc(5000, 2), kMonday);
  EXPECT_TRUE(d.GpuEcc(Ecc(10, 0), kMonday + kMin).empty());
  EXPECT_TRUE(d.GpuEcc(Ecc(60, 0), kMonday + 2 * kMin).empty());
}

TEST(GpuEcc, AnyUncorrectedRiseFiresCriticalEachTime) {
  AnomalyDetector d;
  EXPECT_TRUE(d.GpuEcc(Ecc(0, 2), kMonday).empty()) << "errors from before allotd heard the GPU are the base";
  EXPECT_TRUE(d.GpuEcc(Ecc(0, 2), kMonday + kMin).empty());
  auto a = d.GpuEcc(Ecc(0, 3), kMonday + 2 * kMin);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].severity, AlertSeverity::kCritical);
  EXPECT_EQ(Detail(a[0], "uncorrected_before"), "2");
  EXPECT_EQ(Detail(a[0], "uncorrected"), "3");
  EXPECT_TRUE(d.GpuEcc(Ecc(0, 3), kMonday + 3 * kMin).empty()) << "the same count is not said again";
  EXPECT_EQ(d.GpuEcc(Ecc(0, 4), kMonday + 4 * kMin).size(), 1u);
}

TEST(OutOfHours, UsageOutsideHoursFiresOncePerStretchAndNotWithinOrWhenIdle) {
  AnomalyDetector d;
  TimeZone utc = TimeZone::Utc();
  TenantUsageSample s{"research/nlp", *ParseBusinessHours("Mon-Fri 08:00-19:00 UTC", "f"), &utc, 2 * kGpuUnit};
  EXPECT_FALSE(d.TenantUsage(s, kMonday + 10 * 60 * kMin)) << "Monday 10:00: within";
  TenantUsageSample idle = s;
  idle.gpu_units = 0;
  EXPECT_FALSE(d.TenantUsage(idle, kMonday + 20 * 60 * kMin)) << "Monday 20:00, holding nothing";
  auto a = d.TenantUsage(s, kMonday + 21 * 60 * kMin);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, AlertKind::kOutOfHoursUsage);
  EXPECT_EQ(a->summary,
            "tenant research/nlp holds 2 GPUs outside its business hours (Mon-Fri 08:00-19:00 UTC; closed since 2026-11-23T19:00:00Z)");
  EXPECT_FALSE(d.TenantUsage(s, kMonday + 23 * 60 * kMin)) << "the same evening";
  EXPECT_FALSE(d.TenantUsage(s, kMonday + 30 * 60 * kMin)) << "Tuesday 06:00: still the same stretch";
  EXPECT_TRUE(d.TenantUsage(s, kMonday + (24 + 20) * 60 * kMin)) << "Tuesday 20:00: a new stretch";
}

}  // namespace
}  // namespace allot
