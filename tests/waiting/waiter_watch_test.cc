// SPDX-License-Identifier: MIT
// The first sender in line watches its node for a hand-off before it
// sleeps, for the budget its channel's ChannelOptions::first_waiter_watch
// names (leanchan/internal/spin_wait.h). Counted exactly with test points:
// the looks a blocked sender makes before its first sleep. Linked against
// the test-points build of the library.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"
#include "leanchan/internal/wait_policy.h"

namespace {

using leanchan::WaiterWatch;
using leanchan::internal::TestPoint;

std::atomic<int> looks{0};
std::atomic<bool> slept{false};

void count(TestPoint point) {
  if (slept.load()) return;
  if (point == TestPoint::kThreadWaiterLooked) looks.fetch_add(1);
  if (point == TestPoint::kThreadWaiterSleeps) {
    slept = true;
    slept.notify_all();
  }
}

// A sender blocks on a full channel (capacity 1) while the receiver takes
// nothing until the sender sleeps; then both messages arrive, in order.
int looks_before_the_first_sleep(WaiterWatch watch) {
  looks = 0;
  slept = false;
  auto tx_rx = leanchan::channel<int, 1>(1, {.first_waiter_watch = watch});
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  EXPECT_TRUE(tx.try_send(0).ok());
  leanchan::internal::test_point_hook.store(&count);
  std::thread sender([&tx] { EXPECT_TRUE(tx.send(1).ok()); });
  slept.wait(false);
  EXPECT_EQ(rx.recv(), 0);
  EXPECT_EQ(rx.recv(), 1);
  sender.join();
  leanchan::internal::test_point_hook.store(nullptr);
  return looks.load();
}

// Each watch makes budget.looks() looks, then one more before it sleeps.
constexpr int kDefaultLooks = leanchan::internal::kWaitPolicy.first_waiter.looks();

TEST(WaiterWatch, TheDefaultWatchesTheFirstWaitersBudget) {
  EXPECT_EQ(kDefaultLooks, 64 + 16);
  EXPECT_EQ(looks_before_the_first_sleep(WaiterWatch::kDefault), kDefaultLooks + 1);
}

TEST(WaiterWatch, NoneSleepsAfterOneLook) {
  EXPECT_EQ(looks_before_the_first_sleep(WaiterWatch::kNone), 1);
}

TEST(WaiterWatch, LongWatchesFourTimesTheDefault) {
  EXPECT_EQ(looks_before_the_first_sleep(WaiterWatch::kLong), 4 * kDefaultLooks + 1);
}

}  // namespace
