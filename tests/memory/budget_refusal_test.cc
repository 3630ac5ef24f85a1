// SPDX-License-Identifier: MIT
// MemoryBudget::refused_on_this_thread() after a reservation the budget
// refused, when giving the permit back hands it to a blocked sender whose
// value this thread then moves in (allocating that sender's block, which
// succeeds: memory came back meanwhile). The hand-off used to overwrite
// this thread's record, so the refusal read as a real allocation failure.
// The window (between the refusal and the permit going back) is held open
// by the kProvideRefused test point.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <utility>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"
#include "leanchan/memory_budget.h"
#include "memory_support.h"
#include "test_point_support.h"

namespace {

using leanchan::internal::TestPoint;
using leanchan::testing::kControlBytes;
using leanchan::testing::ScopedTestPointHook;

using Tx = leanchan::Sender<std::uint64_t, 1>;
using Rx = leanchan::Receiver<std::uint64_t, 1>;

struct Window {
  Tx* blocked_sender = nullptr;                       // sends from a thread of its own
  std::optional<std::pair<Tx, Rx>>* other = nullptr;  // freed to make room
  std::thread thread;
  std::atomic<bool> queued{false};
  std::atomic<int> refusals{0};
};
Window* g_window = nullptr;

void hook(TestPoint point) {
  Window& w = *g_window;
  if (point == TestPoint::kSendThreadQueued) {
    w.queued.store(true, std::memory_order_release);
    w.queued.notify_all();
    return;
  }
  if (point != TestPoint::kProvideRefused || w.refusals.fetch_add(1) != 0) return;
  // This thread holds the only permit, its block refused: a second sender
  // queues for it, and another channel of the budget goes, freeing room.
  w.thread = std::thread([&w] { EXPECT_TRUE(w.blocked_sender->send(2).ok()); });
  w.queued.wait(false, std::memory_order_acquire);
  w.other->reset();
}

TEST(BudgetRefusal, AHandOffAfterTheRefusalKeepsTheRefusingThreadsRecord) {
  // Room for the two control blocks and nothing more: the first block
  // (16 + 8 bytes) is refused until the other channel goes.
  leanchan::MemoryBudget budget(2 * kControlBytes);
  auto [tx, rx] = leanchan::channel<std::uint64_t, 1>(1, {.memory = &budget});
  std::optional<std::pair<Tx, Rx>> other(
      leanchan::channel<std::uint64_t, 1>(1, {.memory = &budget}));
  Tx second = tx;
  Window window;
  window.blocked_sender = &second;
  window.other = &other;
  g_window = &window;
  {
    ScopedTestPointHook guard(&hook);
    auto permit = tx.reserve();  // the permit, then kNoMemory for its block
    EXPECT_EQ(permit.status(), leanchan::SendStatus::kNoMemory);
    EXPECT_TRUE(budget.refused_on_this_thread());
    ASSERT_TRUE(window.thread.joinable());
    window.thread.join();  // its value went in on this thread, into the freed room
  }
  g_window = nullptr;
  EXPECT_EQ(window.refusals.load(), 1);
  EXPECT_FALSE(other.has_value());
  EXPECT_EQ(rx.try_recv().value(), 2u);
}

}  // namespace
