// SPDX-License-Identifier: MIT
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

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"

namespace {

using leanchan::Notifier;
using leanchan::Retention;
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
  ASSERT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kArmed);
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

// A random single-threaded run of try_send, try_recv, try_reserve, permit
// sends and drops, and shrink_to_fit, against a model that counts the
// slots in use (queued messages plus permits out): at every step try_send
// and try_reserve succeed exactly when fewer than C are in use,
// capacity() is exactly C minus that, messages arrive in order, and the
// memory stays within 64 + (ceil(C/b) + 1) blocks. Owed permits must
// never show: not in a failed try_send, not in capacity(). Shapes: one
// block, several, a capacity that is not a multiple of b, and b = 1.
template <std::size_t B>
void run_against_model(std::size_t capacity, Retention retention, unsigned seed, bool shrink) {
  auto tx_rx = leanchan::channel<int, B>(capacity, retention);
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  std::vector<leanchan::Permit<int, B>> permits;
  std::size_t queued = 0;
  int next_sent = 0;
  int next_received = 0;
  const std::size_t b = std::min(B, capacity);
  const std::size_t block_bytes = 16 + b * sizeof(int);
  const std::size_t most_bytes = 64 + ((capacity + b - 1) / b + 1) * block_bytes;
  unsigned state = seed;
  for (int step = 0; step < 4000; ++step) {
    state = state * 1103515245u + 12345u;  // a fixed LCG: the run is reproducible
    const unsigned op = (state >> 16) % 10;
    const std::size_t in_use = queued + permits.size();
    SCOPED_TRACE(step);
    if (op < 4) {
      const bool sent = tx.try_send(int{next_sent}).ok();
      ASSERT_EQ(sent, in_use < capacity);
      if (sent) {
        ++next_sent;
        ++queued;
      }
    } else if (op < 8) {
      auto result = rx.try_recv();
      ASSERT_EQ(result.ok(), queued > 0);
      if (result.ok()) {
        ASSERT_EQ(result.value(), next_received++);
        --queued;
      }
      if (shrink) (void)rx.shrink_to_fit();
    } else if (op == 8) {
      auto permit = tx.try_reserve();
      ASSERT_EQ(static_cast<bool>(permit), in_use < capacity);
      if (permit) permits.push_back(std::move(permit));
    } else {
      if (!permits.empty()) {
        if (((state >> 8) & 1) != 0) {
          permits.back().send(int{next_sent++});
          ++queued;
        }
        permits.pop_back();  // sent, or dropped unused
      }
      ASSERT_EQ(tx.capacity(), capacity - queued - permits.size());
    }
    ASSERT_LE(rx.memory_usage(), most_bytes);
  }
  permits.clear();
  for (; queued > 0; --queued) ASSERT_EQ(rx.try_recv().value(), next_received++);
  EXPECT_EQ(tx.capacity(), capacity);
  // Found empty with nothing out (step 10): kKeepNone holds its control
  // block alone, whatever reservations were dropped on the way.
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  if (retention == Retention::kKeepNone) {
    EXPECT_EQ(rx.memory_usage(), 64u);
  }
}

TEST(GiveBack, ARandomRunAgreesWithTheModelAtEveryStep) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    for (Retention retention : {Retention::kKeepOne, Retention::kKeepNone, Retention::keep(3)}) {
      for (bool shrink : {false, true}) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << " shrink " << shrink);
        run_against_model<4>(1, retention, seed, shrink);
        run_against_model<4>(3, retention, seed, shrink);
        run_against_model<4>(8, retention, seed, shrink);
        run_against_model<3>(7, retention, seed, shrink);
        run_against_model<32>(40, retention, seed, shrink);
        run_against_model<1>(2, retention, seed, shrink);
        if (HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace
