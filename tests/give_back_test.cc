// The receiver gives permits back in batches (docs/design.md "Giving permits
// back"): it counts what it takes in its block's header and returns the
// permits at the block's end, when a sender waits (the want bit), and when
// anyone finds the bound full. These tests pin what that must not change:
// try_send fails only when `capacity` messages are really in use, a
// waiting sender or send notifier is handed the slot of the very next
// take, and an ended channel is seen as ended. And what it is for: a
// receiver that keeps up gives back once per block, not once per message.
// Linked against the test-points build (kPermitsGivenBack, kSendThreadQueued).
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <optional>
#include <thread>
#include <utility>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"

namespace {

using leanchan::Notifier;
using leanchan::SendStatus;
using leanchan::internal::TestPoint;

std::atomic<long> give_backs{0};
std::atomic<bool> sender_queued{false};

void count(TestPoint point) {
  if (point == TestPoint::kPermitsGivenBack) give_backs.fetch_add(1, std::memory_order_relaxed);
  if (point == TestPoint::kSendThreadQueued) sender_queued.store(true, std::memory_order_release);
}

struct HookGuard {
  HookGuard() {
    give_backs = 0;
    sender_queued = false;
    leanchan::internal::test_point_hook.store(&count);
  }
  ~HookGuard() { leanchan::internal::test_point_hook.store(nullptr); }
};

// One message at a time through 8-slot blocks: the sender's permit CAS is
// the only write to the bound per message; the receiver gives back once
// per block (finish_block). Before the receiver counted its takes in the
// block header it gave back after every take: 800 give-backs here.
TEST(GiveBack, AReceiverThatKeepsUpGivesBackOncePerBlock) {
  constexpr int kMessages = 800;
  auto [tx, rx] = leanchan::channel<int, 8>(64);
  HookGuard hook;
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(tx.try_send(int{i}).ok());
    ASSERT_EQ(rx.try_recv().value(), i);
  }
  EXPECT_EQ(give_backs.load(), kMessages / 8);
}

// Capacity 8, one block: 3 taken mid-block are owed, not given back; the
// bound looks full, and try_send must still see the 3 free slots.
TEST(GiveBack, TrySendSeesTheSlotsOfMidBlockTakes) {
  auto [tx, rx] = leanchan::channel<int, 8>(8);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_EQ(rx.try_recv().value(), i);
  for (int i = 8; i < 11; ++i) EXPECT_TRUE(tx.try_send(int{i}).ok()) << i;
  EXPECT_EQ(tx.try_send(11).status(), SendStatus::kFull);
  for (int i = 3; i < 11; ++i) EXPECT_EQ(rx.try_recv().value(), i);
}

// Across a block boundary: the finished block's 8 went back at its end,
// the 2 taken in the next one are owed; capacity() counts all 10.
TEST(GiveBack, CapacityCountsOwedPermitsAcrossABlockBoundary) {
  auto [tx, rx] = leanchan::channel<int, 8>(16);
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  for (int i = 0; i < 10; ++i) ASSERT_EQ(rx.try_recv().value(), i);
  EXPECT_EQ(tx.capacity(), 10u);
  auto permits = tx.try_reserve_many(10);
  EXPECT_TRUE(static_cast<bool>(permits));
}

// A send notifier armed on a full channel queues and raises the want bit
// on the receiver's block; the next take, mid-block, must hand it the
// slot (its callback runs on the receiver's thread, before try_recv
// returns). Without the bit the slot would wait for the block's end.
TEST(GiveBack, ASendNotifierIsHandedTheSlotOfTheNextMidBlockTake) {
  auto [tx, rx] = leanchan::channel<int, 8>(8);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  static std::atomic<int> fired{0};
  fired = 0;
  Notifier notifier([](void*) { fired.fetch_add(1); }, nullptr);
  ASSERT_FALSE(tx.notify_when_room(notifier));
  ASSERT_EQ(rx.try_recv().value(), 0);
  EXPECT_EQ(fired.load(), 1);
  EXPECT_TRUE(tx.try_send(8, notifier).ok()) << "the notifier holds the slot";
  EXPECT_EQ(tx.try_send(9).status(), SendStatus::kFull);
}

// A thread blocked in send (queued: the test point says so) gets the slot
// of one take in the middle of a block, with no further take: it must not
// wait for the block's end, which never comes here.
TEST(GiveBack, ABlockedSendIsHandedTheSlotOfOneMidBlockTake) {
  auto tx_rx = leanchan::channel<int, 8>(8);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  HookGuard hook;
  std::thread sender([&tx] { EXPECT_TRUE(tx.send(8).ok()); });
  while (!sender_queued.load(std::memory_order_acquire)) std::this_thread::yield();
  ASSERT_EQ(rx.try_recv().value(), 0);
  sender.join();  // hangs (test timeout) if the slot is not handed over
  for (int i = 1; i <= 8; ++i) EXPECT_EQ(rx.try_recv().value(), i);
}

// The last sender goes while the receiver owes permits for what it took:
// the channel has ended (nothing queued, no permit out) and recv says so
// instead of sleeping forever.
TEST(GiveBack, AnEndedChannelIsSeenWhileTakesAreOwed) {
  auto [tx, rx] = leanchan::channel<int, 8>(8);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_EQ(rx.recv(), i);
  { auto last = std::move(tx); }  // the last sender goes
  EXPECT_EQ(rx.recv(), std::nullopt);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kDisconnected);
}

// Closed with takes owed: the same.
TEST(GiveBack, AClosedChannelEndsWhileTakesAreOwed) {
  auto [tx, rx] = leanchan::channel<int, 8>(8);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  ASSERT_EQ(rx.recv(), 0);
  ASSERT_EQ(rx.recv(), 1);
  rx.close();
  EXPECT_EQ(rx.recv(), std::nullopt);
}

}  // namespace
