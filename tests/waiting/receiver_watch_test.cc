// SPDX-License-Identifier: MIT
// Which watch a blocking receive that finds nothing uses (docs/design.md,
// "The deep watch"): the deep one in a channel whose senders can run 64
// messages or more ahead of the receiver (kFirstDeep slots here) after a
// run of two messages or more (taken by recv or drained by recv_many), the
// doubling one otherwise. Observed with test points at the start of the
// receiver's watch (kReceiverWatchesDeep, kReceiverWatchesShort); linked
// against the test-points build of the library.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/spin_wait.h"
#include "leanchan/internal/test_point.h"

namespace {

using leanchan::internal::TestPoint;

// The first watch the receive makes: 0 none yet, else 1 + whether deep.
// (Only the first counts: a wake-up without the message, rare as it is,
// starts a new run and so a doubling watch.)
std::atomic<int> first_watch{0};

void count(TestPoint point) {
  if (point != TestPoint::kReceiverWatchesDeep && point != TestPoint::kReceiverWatchesShort) {
    return;
  }
  int none = 0;
  if (first_watch.compare_exchange_strong(none, point == TestPoint::kReceiverWatchesDeep ? 2 : 1)) {
    first_watch.notify_all();
  }
}

enum class Drain { kRecv, kRecvMany };

// The smallest deep capacity with the 8-slot blocks used here: runway
// C - 8 + 1 = kDeepReceiverRunway.
constexpr std::size_t kFirstDeep = leanchan::internal::kDeepReceiverRunway + 8 - 1;

// Queues `backlog` messages, takes them all (none needs a watch), then
// receives once more while a sender waits for that receive to start
// watching before it sends. True if that watch was the deep one.
bool watches_deep_after(std::size_t capacity, int backlog, Drain drain) {
  first_watch = 0;
  auto tx_rx = leanchan::channel<int, 8>(capacity);  // no structured binding: captured below
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < backlog; ++i) EXPECT_TRUE(tx.try_send(i).ok());
  leanchan::internal::test_point_hook.store(&count);
  if (drain == Drain::kRecv) {
    for (int i = 0; i < backlog; ++i) EXPECT_EQ(rx.recv(), i);
  } else {
    std::vector<int> out;
    EXPECT_EQ(rx.recv_many(out, 100), static_cast<std::size_t>(backlog));
  }
  EXPECT_EQ(first_watch.load(), 0);  // every one of them was there
  std::thread sender([&tx] {
    first_watch.wait(0);
    EXPECT_TRUE(tx.send(99).ok());
  });
  EXPECT_EQ(rx.recv(), 99);
  sender.join();
  leanchan::internal::test_point_hook.store(nullptr);
  return first_watch.load() == 2;
}

TEST(ReceiverWatch, ABacklogInADeepChannelSelectsTheDeepWatch) {
  EXPECT_TRUE(watches_deep_after(1024, 3, Drain::kRecv));
  EXPECT_TRUE(watches_deep_after(kFirstDeep, 2, Drain::kRecv));
}

TEST(ReceiverWatch, AMessageThatCameAloneKeepsTheDoublingWatch) {
  EXPECT_FALSE(watches_deep_after(1024, 1, Drain::kRecv));
}

TEST(ReceiverWatch, AShallowChannelNeverWatchesDeep) {
  EXPECT_FALSE(watches_deep_after(15, 3, Drain::kRecv));
  EXPECT_FALSE(watches_deep_after(16, 3, Drain::kRecv));  // runway 9
  EXPECT_FALSE(watches_deep_after(kFirstDeep - 1, 3, Drain::kRecv));
}

TEST(ReceiverWatch, ABacklogDrainedByRecvManyCountsToo) {
  EXPECT_TRUE(watches_deep_after(1024, 3, Drain::kRecvMany));
}

}  // namespace
