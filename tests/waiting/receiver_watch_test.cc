// SPDX-License-Identifier: MIT
// Which watch a blocking receive that finds nothing uses (docs/design.md,
// "The deep watch" and "The long watch"), after a run of two messages or
// more (taken by recv or drained by recv_many): the long one in a channel
// whose senders can run 512 messages or more ahead of the receiver
// (kFirstLong slots here), the deep one from 64 (kFirstDeep), the
// doubling one below that and after a message that came alone. Observed
// with test points at the start of the receiver's watch
// (kReceiverWatchesLong, kReceiverWatchesDeep, kReceiverWatchesShort);
// linked against the test-points build of the library.
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

// The first watch the receive makes: 0 none yet, else its Watch. (Only
// the first counts: a wake-up without the message, rare as it is, starts
// a new run and so a doubling watch.)
enum Watch : int { kNone = 0, kShort = 1, kDeep = 2, kLong = 3 };
std::atomic<int> first_watch{kNone};

void count(TestPoint point) {
  int seen = kNone;
  switch (point) {
    case TestPoint::kReceiverWatchesShort: seen = kShort; break;
    case TestPoint::kReceiverWatchesDeep: seen = kDeep; break;
    case TestPoint::kReceiverWatchesLong: seen = kLong; break;
    default: return;
  }
  int none = kNone;
  if (first_watch.compare_exchange_strong(none, seen)) first_watch.notify_all();
}

enum class Drain { kRecv, kRecvMany };

// The smallest deep and long capacities with the 8-slot blocks used
// here: runway C - 8 + 1 = kDeepReceiverRunway, kLongReceiverRunway.
constexpr std::size_t kFirstDeep = leanchan::internal::kDeepReceiverRunway + 8 - 1;
constexpr std::size_t kFirstLong = leanchan::internal::kLongReceiverRunway + 8 - 1;

// Queues `backlog` messages, takes them all (none needs a watch), then
// receives once more while a sender waits for that receive to start
// watching before it sends. Which watch that was.
Watch watch_after(std::size_t capacity, int backlog, Drain drain) {
  first_watch = kNone;
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
  EXPECT_EQ(first_watch.load(), kNone);  // every one of them was there
  std::thread sender([&tx] {
    first_watch.wait(kNone);
    EXPECT_TRUE(tx.send(99).ok());
  });
  EXPECT_EQ(rx.recv(), 99);
  sender.join();
  leanchan::internal::test_point_hook.store(nullptr);
  return static_cast<Watch>(first_watch.load());
}

TEST(ReceiverWatch, ABacklogSelectsTheChannelsWatchByItsRunway) {
  EXPECT_EQ(watch_after(1024, 3, Drain::kRecv), kLong);
  EXPECT_EQ(watch_after(kFirstLong, 2, Drain::kRecv), kLong);
  EXPECT_EQ(watch_after(kFirstLong - 1, 3, Drain::kRecv), kDeep);
  EXPECT_EQ(watch_after(kFirstDeep, 2, Drain::kRecv), kDeep);
}

TEST(ReceiverWatch, AMessageThatCameAloneKeepsTheDoublingWatch) {
  EXPECT_EQ(watch_after(1024, 1, Drain::kRecv), kShort);
  EXPECT_EQ(watch_after(kFirstDeep, 1, Drain::kRecv), kShort);
}

TEST(ReceiverWatch, AShallowChannelNeverWatchesDeep) {
  EXPECT_EQ(watch_after(15, 3, Drain::kRecv), kShort);
  EXPECT_EQ(watch_after(16, 3, Drain::kRecv), kShort);  // runway 9
  EXPECT_EQ(watch_after(kFirstDeep - 1, 3, Drain::kRecv), kShort);
}

TEST(ReceiverWatch, ABacklogDrainedByRecvManyCountsToo) {
  EXPECT_EQ(watch_after(1024, 3, Drain::kRecvMany), kLong);
  EXPECT_EQ(watch_after(kFirstDeep, 3, Drain::kRecvMany), kDeep);
}

}  // namespace
