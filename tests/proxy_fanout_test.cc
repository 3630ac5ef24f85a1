// The proxy fan-out example, run small: no event lost or duplicated, on
// both designs, and leanchan's memory back within one block per service of
// idle after the bursts drain.
#include <gtest/gtest.h>

#include "designs.h"
#include "leanchan/channel.h"
#include "proxy.h"

namespace {

proxy::Options small_run() {
  proxy::Options options;
  options.services = 1000;
  options.seconds = 1.0;
  options.rate = 5000;
  options.burst_interval_ms = 200;
  options.churn_per_second = 200;
  return options;
}

TEST(ProxyFanout, LeanchanLosesNothingAndGivesMemoryBack) {
  const proxy::Report report = proxy::run_leanchan(small_run());
  EXPECT_GT(report.sent, 5000u);
  EXPECT_EQ(report.received, report.sent);
  EXPECT_EQ(report.lost, 0u);
  EXPECT_EQ(report.duplicated, 0u);
  EXPECT_GT(report.services_removed, 100u);
  EXPECT_EQ(report.channel_bytes_idle, 64.0);
  // One block: min(default block size 21, capacity 16) = 16 slots of 24 bytes.
  constexpr double kBlockBytes = 16 + 16 * 24.0;
  EXPECT_LE(report.heap_drained - report.heap_idle, kBlockBytes);
}

TEST(ProxyFanout, TokioStyleBaselineLosesNothing) {
  const proxy::Report report = proxy::run_tokio_style(small_run());
  EXPECT_GT(report.sent, 5000u);
  EXPECT_EQ(report.received, report.sent);
  EXPECT_EQ(report.lost, 0u);
  EXPECT_EQ(report.duplicated, 0u);
  EXPECT_EQ(report.channel_bytes_idle, 976.0);  // 176 + 32 + 32 * 24
}

}  // namespace
