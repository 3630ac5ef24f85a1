// SPDX-License-Identifier: MIT
// tests/explore/explorer.h: the schedule explorer's driver. Runs a small
// scenario of the channel's real code under every interleaving of its
// threads, up to a preemption bound, and reports the first failing
// schedule as a replayable trace. docs/explorer.md says how it works and
// what it does not check.
//
//   auto result = leanchan::explore::explore([] {
//     auto [tx, rx] = leanchan::channel<int, 1>(1);
//     leanchan::explore::spawn([&] { (void)tx.send(1); });
//     leanchan::explore::check(rx.recv() == 1, "the message arrives");
//     leanchan::explore::join_all();
//   });
//   EXPECT_TRUE(result.ok) << result.summary();
//
// Scenario rules: create every thread with spawn() and join them with
// join_all() before the scenario returns; use check() for conditions (a
// failure stops the exploration and reports the schedule). A state where
// every thread is blocked (a lost wake-up) fails as a deadlock.
#ifndef LEANCHAN_TESTS_EXPLORE_EXPLORER_H_
#define LEANCHAN_TESTS_EXPLORE_EXPLORER_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace leanchan::explore {

struct Options {
  // Preemptions per schedule: switches away from a thread that could have
  // gone on. Switches at blocking calls, spins and yields are free. 2 is
  // CHESS's finding: most concurrency bugs need at most two.
  int preemption_bound = 2;
  // A safety net for CI time; a scenario that hits it reports incomplete.
  long max_schedules = 200000;
  // Scheduling points allowed in one run before it counts as a livelock.
  long step_limit = 200000;
  // A trace from a failure report: run that one schedule only.
  std::string replay;
  // The explorer's self-test: re-introduce defect N (internal/explore.h).
  int mutant = 0;
};

struct Result {
  bool ok = true;
  bool complete = true;  // every schedule within the bound was run
  long schedules = 0;
  std::size_t max_decisions = 0;
  double seconds = 0;
  std::string failure;  // what went wrong, if !ok
  std::string trace;    // the failing schedule: the choice at each decision
  std::string summary() const;
};

Result explore(const std::function<void()>& scenario, const Options& options = {});

// Inside a scenario.
void spawn(std::function<void()> body);
void join_all();
void check(bool condition, const std::string& message);

}  // namespace leanchan::explore

#endif  // LEANCHAN_TESTS_EXPLORE_EXPLORER_H_
