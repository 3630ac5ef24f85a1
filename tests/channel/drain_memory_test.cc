// SPDX-License-Identifier: MIT
// The memory promise after a drain: once the receiver has taken every
// message and found the channel empty, a kKeepOne channel holds its control
// block and exactly one block, 64 + (16 + b * sizeof(T)) bytes, however the
// messages came (send or reserve, one producer or four) and whatever
// reservations were dropped unused on the way.
//
// The windows: the receiver moves its returned position and gives the
// permits back in one locked step (finish_block, release_if_drained); a
// sender that provides blocks between the two would count those slots
// twice and number a block no message uses. Held open with the
// kPermitsGivenBack test point (linked against the test-points build).
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"
#include "test_support.h"

namespace {

using leanchan::ChannelOptions;
using leanchan::Retention;
using leanchan::internal::TestPoint;

// Control block + one block of `slots` 8-byte messages (16-byte header).
constexpr std::size_t one_block(std::size_t slots) {
  return 64 + 16 + slots * 8;
}

// Runs `in_window` once, on the thread that reaches kPermitsGivenBack next.
std::atomic<void (*)()> g_in_window{nullptr};
void run_in_window(TestPoint point) {
  if (point != TestPoint::kPermitsGivenBack) return;
  if (void (*action)() = g_in_window.exchange(nullptr)) action();
}
struct WindowHook {
  explicit WindowHook(void (*action)()) {
    g_in_window.store(action);
    leanchan::internal::test_point_hook.store(&run_in_window);
  }
  ~WindowHook() {
    leanchan::internal::test_point_hook.store(nullptr);
    g_in_window.store(nullptr);
  }
};

leanchan::Sender<std::uint64_t, 4>* g_sender = nullptr;

// The receiver takes the last slot of block 0 (finish_block); in the give-
// back window a send provides its block. Before the fix the sender saw the
// receiver's new position (4) with the block's 4 permits still in use and
// numbered blocks up to position 4 + 5 - 1: 160 bytes after the drain.
TEST(DrainMemory, FinishingABlockAndASendInItsGiveBackKeepOneBlock) {
  auto [tx, rx] = leanchan::channel<std::uint64_t, 4>(8);
  g_sender = &tx;
  for (std::uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(tx.try_send(std::uint64_t{i}).ok());
  for (std::uint64_t i = 0; i < 3; ++i) ASSERT_EQ(rx.try_recv().value(), i);
  {
    WindowHook hook([] { ASSERT_TRUE(g_sender->try_send(std::uint64_t{4}).ok()); });
    ASSERT_EQ(rx.try_recv().value(), 3u);  // finishes block 0
    EXPECT_EQ(g_in_window.load(), nullptr) << "the window was not reached";
  }
  ASSERT_EQ(rx.try_recv().value(), 4u);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(rx.memory_usage(), one_block(4));
}

// The same window at a drain under kKeepNone (release_if_drained): three
// taken mid-block, then a batch of three reserved in the window. Before the
// fix the batch counted the receiver's three owed permits on top of its
// own and numbered a second block.
TEST(DrainMemory, ADrainAndAReservationInItsGiveBackNumberOneBlock) {
  auto [tx, rx] = leanchan::channel<std::uint64_t, 4>(8, ChannelOptions{Retention::kKeepNone});
  g_sender = &tx;
  static leanchan::PermitBatch<std::uint64_t, 4>* batch = nullptr;
  leanchan::PermitBatch<std::uint64_t, 4> reserved = tx.try_reserve_many(0);
  batch = &reserved;
  for (std::uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(tx.try_send(std::uint64_t{i}).ok());
  for (std::uint64_t i = 0; i < 2; ++i) ASSERT_EQ(rx.try_recv().value(), i);
  {
    WindowHook hook([] {
      *batch = g_sender->try_reserve_many(3);
      ASSERT_TRUE(batch->status() == leanchan::SendStatus::kOk);
    });
    ASSERT_EQ(rx.try_recv().value(), 2u);  // drains: every block goes
    EXPECT_EQ(g_in_window.load(), nullptr) << "the window was not reached";
  }
  // Positions 4..6 (the boundary after the release, then three): block 1.
  EXPECT_EQ(rx.memory_usage(), one_block(4));
  for (std::uint64_t i = 0; i < 3; ++i) reserved.send(std::uint64_t{10 + i});
  for (std::uint64_t i = 0; i < 3; ++i) ASSERT_EQ(rx.try_recv().value(), 10 + i);
  EXPECT_EQ(rx.memory_usage(), 64u);  // kKeepNone: drained, nothing kept
}

// A large reservation dropped unused numbers blocks no message will use;
// the drain that finds the channel empty with no permit out gives back all
// but the block a drain keeps (before, 10,064 bytes here stayed until 992
// more messages passed).
TEST(DrainMemory, AReservationDroppedUnusedLeavesOneBlockAfterADrain) {
  auto [tx, rx] = leanchan::channel<std::uint64_t, 8>(1000);
  {
    auto many = tx.reserve_many(1000);
    ASSERT_TRUE(many.status() == leanchan::SendStatus::kOk);
  }
  ASSERT_TRUE(tx.try_send(std::uint64_t{7}).ok());
  ASSERT_EQ(rx.try_recv().value(), 7u);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(rx.memory_usage(), one_block(8));
  // The channel goes on as before.
  for (std::uint64_t i = 0; i < 20; ++i) ASSERT_TRUE(tx.try_send(std::uint64_t{i}).ok());
  for (std::uint64_t i = 0; i < 20; ++i) ASSERT_EQ(rx.try_recv().value(), i);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(rx.memory_usage(), one_block(8));
}

// Under Retention::keep(4) a drained burst keeps four blocks, and a
// reservation dropped unused afterwards must not take them away (nor add
// to them): the next burst of four blocks allocates nothing.
TEST(DrainMemory, ADroppedReservationLeavesWhatKeepNKeeps) {
  auto [tx, rx] = leanchan::channel<std::uint64_t, 4>(16, ChannelOptions{Retention::keep(4)});
  for (std::uint64_t i = 0; i < 16; ++i) ASSERT_TRUE(tx.try_send(std::uint64_t{i}).ok());
  for (std::uint64_t i = 0; i < 16; ++i) ASSERT_EQ(rx.try_recv().value(), i);
  ASSERT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  const std::size_t four_blocks = 64 + 4 * (16 + 4 * 8);
  ASSERT_EQ(rx.memory_usage(), four_blocks);
  {
    auto many = tx.try_reserve_many(9);
    ASSERT_TRUE(many.status() == leanchan::SendStatus::kOk);
  }
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(rx.memory_usage(), four_blocks);
  for (std::uint64_t i = 0; i < 16; ++i) ASSERT_TRUE(tx.try_send(std::uint64_t{i}).ok());
  EXPECT_EQ(rx.memory_usage(), four_blocks) << "the next burst allocated";
  for (std::uint64_t i = 0; i < 16; ++i) ASSERT_EQ(rx.try_recv().value(), i);
}

// Natural, no hook: four producers mixing send and reserve + Permit::send
// into 32-slot blocks, capacity 100; every round drained and found empty
// must hold exactly one block (before the fix, 1 to 60 rounds in 3,000
// held two: 608 bytes).
TEST(DrainMemory, FourProducersMixingSendAndReserveLeaveOneBlockEveryRound) {
  const int rounds = static_cast<int>(3000 * leanchan::testing::stress_scale());
  constexpr int kProducers = 4;
  constexpr std::uint64_t kPerProducer = 50;
  for (int round = 0; round < rounds; ++round) {
    auto [tx, rx] = leanchan::channel<std::uint64_t, 32>(100);
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([tx = tx, p]() mutable {
        for (std::uint64_t i = 0; i < kPerProducer; ++i) {
          const std::uint64_t value = static_cast<std::uint64_t>(p) << 32 | i;
          if (i % 2 == 0) {
            ASSERT_TRUE(tx.send(std::uint64_t{value}).ok());
          } else {
            auto permit = tx.reserve();
            ASSERT_TRUE(permit);
            permit.send(std::uint64_t{value});
          }
        }
      });
    }
    std::uint64_t next[kProducers] = {};
    for (std::uint64_t n = 0; n < kProducers * kPerProducer; ++n) {
      auto value = rx.recv();
      ASSERT_TRUE(value.has_value());
      const auto p = static_cast<int>(*value >> 32);
      ASSERT_EQ(*value & 0xFFFFFFFF, next[p]++) << "per-producer FIFO, round " << round;
    }
    for (auto& producer : producers) producer.join();
    // No permit out, nothing queued: the receiver finds it empty.
    ASSERT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty) << "round " << round;
    ASSERT_EQ(rx.memory_usage(), one_block(32)) << "round " << round;
  }
}

// A receiver dropped while senders live: it destroys what is queued and
// frees every block no permit still out needs, so a channel whose consumer
// is gone holds its control block alone (it held the drained block and a
// spare, 64 + 2 * (16 + 32 * 16) = 1,120 bytes, until the last sender went).
// A permit taken before the drop keeps its block, and the message it sends
// afterwards is destroyed, once, by the last handle.
TEST(DrainMemory, ADroppedReceiverFreesTheBlocksNoPermitNeeds) {
  using leanchan::testing::Tracked;
  Tracked::reset();
  {
    auto [tx, rx] = leanchan::channel<Tracked, 32>(1024);
    for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(tx.try_send(Tracked(i)).ok());
    for (int i = 0; i < 990; ++i) ASSERT_TRUE(rx.try_recv().ok());
    { auto gone = std::move(rx); }
    EXPECT_EQ(Tracked::live(), 0);
    EXPECT_EQ(tx.memory_usage(), 64u);  // the control block
    EXPECT_EQ(tx.try_send(Tracked(7)).status(), leanchan::SendStatus::kClosed);
  }
  EXPECT_EQ(Tracked::live(), 0);
  {
    auto [tx, rx] = leanchan::channel<Tracked, 32>(1024);
    for (std::uint64_t i = 0; i < 100; ++i) ASSERT_TRUE(tx.try_send(Tracked(i)).ok());
    auto permit = tx.try_reserve();
    ASSERT_TRUE(permit);
    { auto gone = std::move(rx); }
    // The permit's block (position 100, block 3) stays, alone.
    EXPECT_EQ(tx.memory_usage(), 64u + 16u + 32u * sizeof(Tracked));
    permit.send(Tracked(100));
    EXPECT_EQ(Tracked::live(), 1);  // queued, for the last handle
  }
  EXPECT_EQ(Tracked::live(), 0);
}

}  // namespace
