// SPDX-License-Identifier: MIT
// The proxy fan-out example, run small: no event lost or duplicated, on
// both designs, and leanchan's memory back within one block per service of
// idle after the bursts drain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "designs.h"
#include "histogram.h"
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
  // Retention::kKeepNone: every drained channel is back to its control
  // block, so the proxy's heap per service after the drain is no more than
  // it was idle (the proxy's own tables were sized up front; churn may
  // leave them a little smaller).
  EXPECT_LE(report.heap_drained, report.heap_idle);
}

// A budget exactly the services' control blocks (64 + 8 bytes each, from
// the budget): no block fits, so every event is refused for budget,
// counted, and none is lost; the budget is never passed.
TEST(ProxyFanout, EventsABudgetRefusesAreCountedNotLost) {
  proxy::Options options = small_run();
  options.churn_per_second = 0;  // a fixed set of services
  options.budget_bytes = options.services * 72;
  const proxy::Report report = proxy::run_leanchan(options);
  ASSERT_TRUE(report.budgeted);
  EXPECT_EQ(report.services_refused_budget, 0u);
  EXPECT_EQ(report.sent, 0u);
  EXPECT_GT(report.refused_budget, 1000u);
  EXPECT_EQ(report.lost, 0u);
  EXPECT_EQ(report.budget.held, options.budget_bytes);
  EXPECT_EQ(report.budget.high_water, options.budget_bytes);
  EXPECT_EQ(report.budget.live_allocations, options.services);
  EXPECT_EQ(report.budget.channels, options.services);
  EXPECT_EQ(report.budget.blocks, 0u);
  EXPECT_EQ(report.budget.refusals, report.refused_budget);
  EXPECT_EQ(report.budget.refused_blocks, report.refused_budget);
  EXPECT_EQ(report.budget.refused_channels, 0u);
}

// --top_services: every service listed (88-byte control blocks, from the
// global operator new here), a walk after each burst, the top holders in
// order, each a control block plus whole blocks of 16 events.
TEST(ProxyFanout, TopServicesListsEveryServiceAndOrdersTheTop) {
  proxy::Options options = small_run();
  options.churn_per_second = 0;
  options.top_services = 5;
  const proxy::Report report = proxy::run_leanchan(options);
  ASSERT_TRUE(report.listed);
  EXPECT_GT(report.walks, 0);
  EXPECT_EQ(report.group.channels, options.services);
  constexpr std::size_t kControl = 88;
  constexpr std::size_t kBlock = 16 + 16 * sizeof(proxy::HealthEvent);
  EXPECT_GE(report.group.bytes, options.services * kControl);
  EXPECT_EQ((report.group.bytes - options.services * kControl) % kBlock, 0u);
  ASSERT_EQ(report.group.top.size(), 5u);
  for (std::size_t i = 0; i < report.group.top.size(); ++i) {
    const auto& usage = report.group.top[i];
    EXPECT_LT(usage.tag, options.services);
    EXPECT_EQ((usage.bytes - kControl) % kBlock, 0u);
    if (i > 0) {
      EXPECT_GE(report.group.top[i - 1].bytes, usage.bytes);
    }
  }
  EXPECT_EQ(report.lost, 0u);
  EXPECT_EQ(report.received, report.sent);
}

// Room for half the services' control blocks: the other half are refused
// at creation, counted; the proxy runs on with the rest.
TEST(ProxyFanout, ServicesABudgetRefusesAreCounted) {
  proxy::Options options = small_run();
  options.churn_per_second = 0;
  options.budget_bytes = options.services / 2 * 72;
  const proxy::Report report = proxy::run_leanchan(options);
  EXPECT_EQ(report.services_refused_budget, options.services / 2);
  EXPECT_EQ(report.budget.refused_channels, options.services / 2);
  EXPECT_EQ(report.budget.live_allocations, options.services / 2);
  EXPECT_EQ(report.lost, 0u);
  EXPECT_EQ(report.received, report.sent);
}

TEST(ProxyFanout, TokioStyleBaselineLosesNothing) {
  const proxy::Report report = proxy::run_tokio_style(small_run());
  EXPECT_GT(report.sent, 5000u);
  EXPECT_EQ(report.received, report.sent);
  EXPECT_EQ(report.lost, 0u);
  EXPECT_EQ(report.duplicated, 0u);
  EXPECT_EQ(report.channel_bytes_idle, 976.0);  // 176 + 32 + 32 * 24
}

TEST(ProxyHistogram, SmallValuesAreExact) {
  proxy::Histogram h;
  for (int v = 0; v < 64; ++v) h.add(v);
  EXPECT_EQ(h.count(), 64u);
  EXPECT_EQ(h.percentile(0.0), 0.0);
  EXPECT_EQ(h.percentile(0.5), 31.0);  // rank floor(0.5 * 63) = 31
  EXPECT_EQ(h.percentile(1.0), 63.0);
  h.add(-5);  // a clock step backwards counts as 0
  EXPECT_EQ(h.percentile(0.0), 0.0);
}

TEST(ProxyHistogram, PercentilesWithinOneSixtyFourthOfTheSortedArray) {
  // Latency-like values from 1 us to 10 ms; every percentile within 1/64
  // (the bucket width relative to its value) of the exact one.
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> latency(9.5, 1.5);
  std::vector<std::int64_t> values;
  proxy::Histogram a, b;
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<std::int64_t>(latency(random));
    values.push_back(v);
    (i % 2 == 0 ? a : b).add(v);  // two workers' histograms, merged
  }
  a.merge(b);
  ASSERT_EQ(a.count(), values.size());
  std::sort(values.begin(), values.end());
  for (double p : {0.01, 0.5, 0.9, 0.99, 0.999}) {
    const auto exact = static_cast<double>(
        values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))]);
    EXPECT_NEAR(a.percentile(p), exact, exact / 64.0 + 0.5) << "p=" << p;
  }
}

TEST(ProxyHistogram, HugeValuesLandInTheLastBucket) {
  proxy::Histogram h;
  h.add(INT64_MAX);
  EXPECT_EQ(proxy::Histogram::index_of(static_cast<std::uint64_t>(INT64_MAX)),
            proxy::Histogram::index_of(std::uint64_t{2} << proxy::Histogram::kMaxExponent));
  EXPECT_GT(h.percentile(0.5), 8.7e12);  // about 2^43 ns
}

}  // namespace
