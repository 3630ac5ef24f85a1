// SPDX-License-Identifier: MIT
// Retention policies and shrink_to_fit: what a channel keeps when it drains,
// asserted to the byte with the profiler's counting hook.
//
// Formulas (S = sizeof(T) = 24 here, b = slots per block, header 16 B):
//   a block of b slots: 16 + b * S bytes; the control block: 64 bytes.
//   kKeepNone, drained: 64. A burst of n into an empty channel: ceil(n / b)
//     allocations; one message at a time: one allocation and one free each.
//   kKeepOne, drained after a burst: 64 + one block (the spare goes too,
//     once the receiver finds the channel empty).
//   shrink_to_fit on an empty channel: back to 64, whatever the policy.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/profiler/heap_probe.h"
#include "test_support.h"

namespace {

using leanchan::Retention;
using leanchan::profiler::HeapProbe;
using leanchan::testing::Tracked;

struct Message {
  std::array<unsigned char, 24> bytes{};
};
constexpr std::int64_t kControl = 64;
constexpr std::int64_t block_bytes(std::int64_t slots) {
  return 16 + slots * 24;
}

TEST(Retention, KeepNoneBurstAllocatesCeilNOverBAndDrainsToTheControlBlock) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<Message, 8>(16, Retention::kKeepNone);
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  EXPECT_EQ(probe.live_bytes(), kControl);
  for (int round = 0; round < 3; ++round) {
    const std::uint64_t allocations = probe.allocations();
    for (int i = 0; i < 16; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());
    EXPECT_EQ(probe.allocations() - allocations, 2u);  // ceil(16 / 8)
    EXPECT_EQ(probe.live_bytes(), kControl + 2 * block_bytes(8));
    for (int i = 0; i < 16; ++i) ASSERT_TRUE(rx.try_recv().ok());
    EXPECT_EQ(probe.live_bytes(), kControl) << "round " << round;
    EXPECT_EQ(rx.memory_usage(), static_cast<std::size_t>(kControl));
  }
}

TEST(Retention, KeepNoneTrickleCostsOneAllocationAndOneFreePerMessage) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<Message, 8>(16, Retention::kKeepNone);
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(tx.try_send(Message{}).ok());
    EXPECT_EQ(probe.live_bytes(), kControl + block_bytes(8));
    ASSERT_TRUE(rx.try_recv().ok());
    EXPECT_EQ(probe.live_bytes(), kControl);
    EXPECT_TRUE(rx.is_empty());
  }
  EXPECT_EQ(probe.allocations(), 1u + 20u);  // the control block, then one block per message
  EXPECT_EQ(probe.frees(), 20u);
}

TEST(Retention, KeepNoneWithMessagesLeftKeepsTheirBlock) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<int, 4>(16, Retention::kKeepNone);
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rx.try_recv().value(), i);
  // One message left in the second block: that block stays, the first went.
  EXPECT_EQ(rx.memory_usage(), 64u + (16u + 4u * sizeof(int)));
  EXPECT_EQ(rx.try_recv().value(), 5);
  EXPECT_EQ(rx.memory_usage(), 64u);
}

TEST(Retention, KeepOneKeepsOneBlockAfterADrain) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<Message, 8>(16);  // the default: kKeepOne
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(rx.try_recv().ok());
  // The spare (block 0) waits until the receiver finds the channel empty.
  EXPECT_EQ(probe.live_bytes(), kControl + 2 * block_bytes(8));
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(probe.live_bytes(), kControl + block_bytes(8));
  // The kept block serves the next burst's first 8 messages.
  const std::uint64_t allocations = probe.allocations();
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());
  EXPECT_EQ(probe.allocations(), allocations);
}

// A receiver that keeps up empties the queue in the middle of nearly every
// block. The spare stays across those momentary drains: 3 sends then 3
// receives, 100 times (300 messages, 37 blocks of 8), allocate nothing once
// the first two blocks exist. (Freeing the spare at those drains cost the
// sender an allocation, and the receiver a free, for most blocks.)
TEST(Retention, KeepOneKeepsItsSpareWhileTheReceiverKeepsUp) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<Message, 8>(1024);
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());  // blocks 0 and 1
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(rx.try_recv().ok());           // block 0: the spare
  EXPECT_EQ(probe.live_bytes(), kControl + 2 * block_bytes(8));
  const std::uint64_t allocations = probe.allocations();
  const std::uint64_t frees = probe.frees();
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(rx.try_recv().ok());
  }
  EXPECT_EQ(probe.allocations(), allocations);
  EXPECT_EQ(probe.frees(), frees);
  EXPECT_EQ(probe.live_bytes(), kControl + 2 * block_bytes(8));
  // Finding it empty gives the spare back: one block stays.
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(probe.live_bytes(), kControl + block_bytes(8));
  EXPECT_EQ(probe.frees(), frees + 1);
}

// Each way the receiver finds the channel empty gives the spare back:
// try_recv's kEmpty (above), arm_notifier's false, and a blocking receive
// that stops watching (here recv_for, which then times out).
TEST(Retention, KeepOneFreesTheSpareWhenTheReceiverFindsTheChannelEmpty) {
  for (int way = 0; way < 2; ++way) {
    SCOPED_TRACE(way == 0 ? "arm_notifier" : "recv_for");
    HeapProbe probe;
    auto tx_rx = leanchan::channel<Message, 8>(1024);
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(rx.try_recv().ok());
    EXPECT_EQ(probe.live_bytes(), kControl + 2 * block_bytes(8));  // block 1 and the spare
    leanchan::Notifier notifier([](void*) {}, nullptr);
    if (way == 0) {
      rx.set_notifier(notifier);
      EXPECT_FALSE(rx.arm_notifier());
      EXPECT_TRUE(rx.disarm_notifier());
    } else {
      EXPECT_EQ(rx.recv_for(std::chrono::milliseconds(1)).status(),
                leanchan::RecvStatus::kTimedOut);
    }
    EXPECT_EQ(probe.live_bytes(), kControl + block_bytes(8));
    rx.clear_notifier();
  }
}

// kDisconnected is finding it empty too: the spare goes. (Before, only
// kEmpty did, and a drained channel whose senders had all gone kept the
// spare until the receiver was destroyed.)
TEST(Retention, KeepOneFreesTheSpareWhenTryRecvFindsTheChannelEnded) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<Message, 8>(16);
  auto& rx = tx_rx.second;
  {
    auto tx = std::move(tx_rx.first);
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());
  }  // the last sender goes
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(rx.try_recv().ok());
  EXPECT_EQ(probe.live_bytes(), kControl + 2 * block_bytes(8));  // block 1 and the spare
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kDisconnected);
  EXPECT_EQ(probe.live_bytes(), kControl + block_bytes(8));
}

// kKeepNone: the take that drains frees nothing while a permit is out; the
// next time the receiver finds the channel empty with nothing out, every
// block goes. (Before, the block stayed until a later take drained it.)
TEST(Retention, KeepNoneFreesWhenFoundEmptyAfterAPermitWasOutAtTheDrain) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<Message, 4>(8, Retention::kKeepNone);
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  ASSERT_TRUE(tx.try_send(Message{}).ok());
  {
    auto permit = tx.try_reserve();
    ASSERT_TRUE(static_cast<bool>(permit));
    ASSERT_TRUE(rx.try_recv().ok());  // drains with a permit out: nothing freed
    EXPECT_EQ(probe.live_bytes(), kControl + block_bytes(4));
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);  // still out
    EXPECT_EQ(probe.live_bytes(), kControl + block_bytes(4));
  }  // dropped unused
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(probe.live_bytes(), kControl);
}

TEST(Retention, KeepNKeepsUpToNBlocksAndServesAnNBlockBurstWithoutAllocating) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<Message, 8>(32, Retention::keep(3));
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());  // 4 blocks
  EXPECT_EQ(probe.live_bytes(), kControl + 4 * block_bytes(8));
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(rx.try_recv().ok());
  // The last block and two spares stay: 3 = keep(3).
  EXPECT_EQ(probe.live_bytes(), kControl + 3 * block_bytes(8));
  for (int round = 0; round < 3; ++round) {
    const std::uint64_t allocations = probe.allocations();
    for (int i = 0; i < 24; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());  // 3 blocks
    EXPECT_EQ(probe.allocations(), allocations) << "round " << round;
    for (int i = 0; i < 24; ++i) ASSERT_TRUE(rx.try_recv().ok());
    EXPECT_EQ(probe.live_bytes(), kControl + 3 * block_bytes(8));
  }
  // A 4-block burst needs one more, given back at the drain.
  const std::uint64_t allocations = probe.allocations();
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());
  EXPECT_EQ(probe.allocations() - allocations, 1u);
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(rx.try_recv().ok());
  EXPECT_EQ(probe.live_bytes(), kControl + 3 * block_bytes(8));
  // shrink_to_fit still gives everything back.
  EXPECT_EQ(rx.shrink_to_fit(), static_cast<std::size_t>(3 * block_bytes(8)));
  EXPECT_EQ(probe.live_bytes(), kControl);
}

TEST(Retention, KeepNNeverExceedsTheLiveBlockBound) {
  // Capacity 8, b = 4, keep(10): at most ceil(8/4) + 1 = 3 blocks may live,
  // whatever n. A full burst fills two blocks; when the receiver finishes
  // the first, it becomes a spare (2 + 1 <= 3), and the drained second
  // block stays for in-place reuse: exactly 2 blocks after every drain, and
  // the next burst reuses both (in place, then the spare).
  HeapProbe probe;
  auto tx_rx = leanchan::channel<int, 4>(8, Retention::keep(10));
  const std::size_t block = 16 + 4 * sizeof(int);
  for (int round = 0; round < 5; ++round) {
    const std::uint64_t allocations = probe.allocations();
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(tx_rx.first.try_send(int{i}).ok());
    if (round > 0) {
      EXPECT_EQ(probe.allocations(), allocations) << "round " << round;
    }
    for (int i = 0; i < 8; ++i) EXPECT_EQ(tx_rx.second.try_recv().value(), i);
    EXPECT_EQ(tx_rx.second.memory_usage(), 64u + 2 * block) << "round " << round;
  }
}

TEST(Retention, KeepTooManyIsRejected) {
  EXPECT_THROW((void)leanchan::channel<int>(8, Retention::keep(Retention::kMaxKeptBlocks + 1)),
               std::invalid_argument);
  EXPECT_EQ(Retention::keep(0), Retention::kKeepNone);
  EXPECT_EQ(Retention::keep(1), Retention::kKeepOne);
  EXPECT_EQ(Retention(), Retention::kKeepOne);
}

TEST(ShrinkToFit, EmptyChannelGoesBackToTheControlBlockAndStaysUsable) {
  HeapProbe probe;
  auto tx_rx = leanchan::channel<int, 4>(16);
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rx.try_recv().value(), i);
  const std::size_t held = rx.memory_usage();
  ASSERT_GT(held, 64u);
  EXPECT_EQ(rx.shrink_to_fit(), held - 64u);  // exactly what memory_usage drops by
  EXPECT_EQ(rx.memory_usage(), 64u);
  EXPECT_EQ(probe.live_bytes(), 64);
  EXPECT_EQ(rx.shrink_to_fit(), 0u);  // nothing more to give
  // Mid-block (index 10 of 4-slot blocks): the next messages start a fresh
  // block, in order, and len() counts them.
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(tx.try_send(100 + i).ok());
  EXPECT_EQ(rx.len(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(rx.try_recv().value(), 100 + i);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
}

TEST(ShrinkToFit, QueuedMessagesKeepTheirBlocks) {
  auto tx_rx = leanchan::channel<int, 4>(16);
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(tx.try_send(int{i}).ok());
  const std::size_t held = rx.memory_usage();
  EXPECT_EQ(rx.shrink_to_fit(), 0u);
  EXPECT_EQ(rx.memory_usage(), held);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(rx.try_recv().value(), i);
}

// A receiver that shrinks between receives (or a keep-none channel) while
// producers send: every message once, in order per producer, every value
// destroyed once, and the channel back to its control block at the end.
void stress(Retention retention, bool shrink, std::size_t capacity) {
  Tracked::reset();
  constexpr int kProducers = 3;
  const auto per_producer =
      static_cast<std::uint64_t>(std::max(1.0, 20000.0 * leanchan::testing::stress_scale()));
  {
    auto tx_rx = leanchan::channel<Tracked, 4>(capacity, retention);
    auto& rx = tx_rx.second;
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([tx = tx_rx.first, p, per_producer]() mutable {
        for (std::uint64_t i = 0; i < per_producer; ++i) {
          ASSERT_TRUE(tx.send(Tracked(static_cast<std::uint64_t>(p) << 32 | i)).ok());
        }
      });
    }
    { auto gone = std::move(tx_rx.first); }
    std::vector<std::uint64_t> next(kProducers, 0);
    std::uint64_t count = 0;
    while (std::optional<Tracked> message = rx.recv()) {
      const std::uint64_t producer = message->value >> 32;
      ASSERT_EQ(message->value & 0xffffffffu, next[producer]);
      ++next[producer];
      if (shrink && ++count % 3 == 0) (void)rx.shrink_to_fit();
    }
    for (auto& t : producers) t.join();
    for (auto n : next) EXPECT_EQ(n, per_producer);
    (void)rx.shrink_to_fit();
    EXPECT_EQ(rx.memory_usage(), 64u);
  }
  EXPECT_EQ(Tracked::live(), 0);
}

TEST(Retention, KeepNoneUnderConcurrentProducers) {
  for (std::size_t capacity : {1u, 3u, 16u}) stress(Retention::kKeepNone, false, capacity);
}

TEST(Retention, KeepThreeUnderConcurrentProducers) {
  for (std::size_t capacity : {1u, 5u, 40u}) stress(Retention::keep(3), false, capacity);
}

TEST(ShrinkToFit, WhileProducersSend) {
  for (std::size_t capacity : {1u, 5u, 64u}) stress(Retention::kKeepOne, true, capacity);
}

}  // namespace
