// SPDX-License-Identifier: MIT
// The memory promises of docs/problem.md, asserted to the byte with the counting
// heap hook (leanchan::profiler_hook is linked into this test).
//
// With S = sizeof(T), B = BlockSize, C = capacity, b = min(B, C) slots per
// block, and a block of 16 + b*S bytes (these messages have alignment 1):
//   after create:           64                       (1 allocation)
//   after the k-th send:    64 + ceil(k/b) * block   (from a fresh channel)
//   after filling C:        64 + ceil(C/b) * block   (1 + ceil(C/b) allocations)
//   after draining it all:  64 + block               (one block kept for reuse)
//   at any time:            at most 64 + (ceil(C/b) + 1) * block
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/profiler/heap_probe.h"

namespace {

using leanchan::profiler::HeapProbe;

template <std::size_t S>
struct Message {
  std::array<unsigned char, S> bytes{};
};

constexpr std::int64_t kControlBlockBytes = 64;

// Slots per block: the block size, or the capacity when smaller.
constexpr std::size_t slots_per_block(std::size_t block_size, std::size_t capacity) {
  return block_size < capacity ? block_size : capacity;
}
template <std::size_t S, std::size_t B>
constexpr std::int64_t block_bytes(std::size_t capacity) {
  return 16 + static_cast<std::int64_t>(slots_per_block(B, capacity) * S);
}
std::int64_t blocks_for(std::size_t messages, std::size_t block_size) {
  return static_cast<std::int64_t>((messages + block_size - 1) / block_size);
}

TEST(Memory, HookIsActive) {
  ASSERT_TRUE(leanchan::profiler::heap_hook_active());
}

// Create, each send of a fill, the fill, the drain, and the teardown.
template <std::size_t S, std::size_t B>
void check_create_fill_drain(std::size_t capacity) {
  SCOPED_TRACE(::testing::Message() << "S=" << S << " B=" << B << " C=" << capacity);
  const std::int64_t kBlock = block_bytes<S, B>(capacity);
  const std::size_t b = slots_per_block(B, capacity);
  HeapProbe probe;
  {
    auto [tx, rx] = leanchan::channel<Message<S>, B>(capacity);
    EXPECT_EQ(probe.live_bytes(), kControlBlockBytes);
    EXPECT_EQ(probe.allocations(), 1u);
    EXPECT_EQ(rx.memory_usage(), static_cast<std::size_t>(kControlBlockBytes));
    for (std::size_t k = 1; k <= capacity; ++k) {
      ASSERT_TRUE(tx.try_send(Message<S>{}).ok());
      const std::int64_t expected = kControlBlockBytes + blocks_for(k, b) * kBlock;
      ASSERT_EQ(probe.live_bytes(), expected) << "after send " << k;
      ASSERT_EQ(static_cast<std::int64_t>(tx.memory_usage()), expected);
    }
    EXPECT_EQ(tx.try_send(Message<S>{}).status(), leanchan::SendStatus::kFull);
    EXPECT_EQ(probe.allocations(), 1u + static_cast<std::uint64_t>(blocks_for(capacity, b)));
    for (std::size_t k = 0; k < capacity; ++k) ASSERT_TRUE(rx.try_recv().ok());
    // The receiver finds it empty: the spares go (step 10), one block stays.
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
    EXPECT_EQ(probe.live_bytes(), kControlBlockBytes + kBlock);
    EXPECT_EQ(static_cast<std::int64_t>(rx.memory_usage()), kControlBlockBytes + kBlock);
    // Drain again after a second, misaligned burst: still one block.
    for (std::size_t k = 0; k < capacity / 2 + 1 && k < capacity; ++k) {
      ASSERT_TRUE(tx.try_send(Message<S>{}).ok());
    }
    while (rx.try_recv().ok()) {
    }
    EXPECT_EQ(probe.live_bytes(), kControlBlockBytes + kBlock);
  }
  EXPECT_EQ(probe.live_bytes(), 0);
}

template <std::size_t S, std::size_t B>
void check_all_capacities() {
  for (std::size_t capacity : {1u, 2u, 3u, 16u, 32u, 100u, 1024u}) {
    check_create_fill_drain<S, B>(capacity);
  }
}

TEST(Memory, CreateFillDrain8Bytes) {
  check_all_capacities<8, 1>();
  check_all_capacities<8, 2>();
  check_all_capacities<8, 7>();
  check_all_capacities<8, 8>();
  check_all_capacities<8, 32>();
}
TEST(Memory, CreateFillDrain24Bytes) {
  check_all_capacities<24, 1>();
  check_all_capacities<24, 8>();
  check_all_capacities<24, 21>();
  check_all_capacities<24, 32>();
}
TEST(Memory, CreateFillDrain128Bytes) {
  check_all_capacities<128, 1>();
  check_all_capacities<128, 4>();
  check_all_capacities<128, 8>();
  check_all_capacities<128, 32>();
}
TEST(Memory, CreateFillDrain1024Bytes) {
  check_all_capacities<1024, 1>();
  check_all_capacities<1024, 8>();
  check_all_capacities<1024, 32>();
}

TEST(Memory, ATinyChannelHoldingOneMessageCostsOneSlot) {
  HeapProbe probe;
  auto [tx, rx] = leanchan::channel<Message<24>, 1>(1);
  ASSERT_TRUE(tx.send(Message<24>{}).ok());
  EXPECT_EQ(probe.live_bytes(), 64 + 16 + 24);  // at most 64 + 16 + S (docs/problem.md)
}

TEST(Memory, ACapacityOneChannelCostsOneSlotWhateverItsBlockSize) {
  HeapProbe probe;
  auto [tx, rx] = leanchan::channel<Message<1024>, 32>(1);
  ASSERT_TRUE(tx.send(Message<1024>{}).ok());
  EXPECT_EQ(probe.live_bytes(), 64 + 16 + 1024);           // not 32 slots: min(B, C) = 1
  auto [tx16, rx16] = leanchan::channel<Message<24>>(16);  // default B = 21 > 16
  ASSERT_TRUE(tx16.send(Message<24>{}).ok());
  EXPECT_EQ(probe.live_bytes(), (64 + 16 + 1024) + (64 + 16 + 16 * 24));
}

TEST(Memory, PingPongAllocatesNothingAfterTheFirstMessage) {
  for (std::size_t capacity : {1u, 4u, 1024u}) {
    auto [tx, rx] = leanchan::channel<Message<24>, 1>(capacity);
    ASSERT_TRUE(tx.send(Message<24>{}).ok());
    ASSERT_TRUE(rx.recv().has_value());
    HeapProbe probe;
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(tx.send(Message<24>{}).ok());
      ASSERT_TRUE(rx.recv().has_value());
    }
    EXPECT_EQ(probe.allocations(), 0u) << "capacity " << capacity;
    EXPECT_EQ(probe.frees(), 0u);
  }
}

// Constant depth d: after warming up, each send/receive pair allocates nothing.
template <std::size_t B>
void check_constant_depth(std::size_t capacity, std::size_t depth) {
  SCOPED_TRACE(::testing::Message() << "B=" << B << " C=" << capacity << " depth=" << depth);
  auto [tx, rx] = leanchan::channel<Message<8>, B>(capacity);
  for (std::size_t i = 0; i < depth; ++i) ASSERT_TRUE(tx.try_send(Message<8>{}).ok());
  const std::size_t warm_up = 4 * (depth + B);
  for (std::size_t i = 0; i < warm_up; ++i) {
    ASSERT_TRUE(tx.try_send(Message<8>{}).ok());
    ASSERT_TRUE(rx.try_recv().ok());
  }
  HeapProbe probe;
  for (std::size_t i = 0; i < 20 * (depth + B); ++i) {
    ASSERT_TRUE(tx.try_send(Message<8>{}).ok());
    ASSERT_TRUE(rx.try_recv().ok());
  }
  EXPECT_EQ(probe.allocations(), 0u);
  EXPECT_EQ(probe.frees(), 0u);
}

TEST(Memory, ConstantDepthTrafficAllocatesNothingOnceWarm) {
  for (std::size_t depth : {0u, 1u, 2u, 5u, 15u}) {
    check_constant_depth<1>(16, depth);
    check_constant_depth<2>(16, depth);
    check_constant_depth<7>(16, depth);
    check_constant_depth<32>(16, depth);
  }
}

// Random bursts and drains never hold more than ceil(C/B) + 1 blocks.
template <std::size_t B>
void check_block_bound(std::size_t capacity, std::uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "B=" << B << " C=" << capacity << " seed=" << seed);
  const std::int64_t kBlock = block_bytes<8, B>(capacity);
  const std::int64_t bound =
      kControlBlockBytes + (blocks_for(capacity, slots_per_block(B, capacity)) + 1) * kBlock;
  std::mt19937 random(seed);
  HeapProbe probe;
  leanchan::profiler::reset_heap_peak();
  const std::int64_t peak_base = leanchan::profiler::read_heap_counters().live_requested_bytes;
  {
    auto [tx, rx] = leanchan::channel<Message<8>, B>(capacity);
    for (int round = 0; round < 300; ++round) {
      const std::size_t sends = random() % (capacity + 1);
      for (std::size_t i = 0; i < sends; ++i) (void)tx.try_send(Message<8>{});
      ASSERT_LE(probe.live_bytes(), bound);
      const std::size_t receives = random() % (capacity + 1);
      for (std::size_t i = 0; i < receives; ++i) (void)rx.try_recv();
      ASSERT_LE(probe.live_bytes(), bound);
      ASSERT_EQ(static_cast<std::int64_t>(rx.memory_usage()), probe.live_bytes());
    }
    while (rx.try_recv().ok()) {
    }
    EXPECT_LE(probe.live_bytes(), kControlBlockBytes + kBlock);
  }
  EXPECT_LE(leanchan::profiler::read_heap_counters().peak_requested_bytes - peak_base, bound);
  EXPECT_EQ(probe.live_bytes(), 0);
}

TEST(Memory, RandomTrafficStaysWithinCeilCOverBPlusOneBlocks) {
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    for (std::size_t capacity : {1u, 3u, 16u, 100u}) {
      check_block_bound<1>(capacity, seed);
      check_block_bound<2>(capacity, seed);
      check_block_bound<7>(capacity, seed);
      check_block_bound<32>(capacity, seed);
    }
  }
}

TEST(Memory, WaitingCostsNoMemory) {
  auto [tx, rx] = leanchan::channel<Message<8>, 4>(1);
  ASSERT_TRUE(tx.send(Message<8>{}).ok());
  HeapProbe probe;
  EXPECT_EQ(tx.send_for(Message<8>{}, std::chrono::milliseconds(2)).status(),
            leanchan::SendStatus::kTimedOut);
  ASSERT_TRUE(rx.recv().has_value());
  EXPECT_EQ(rx.recv_for(std::chrono::milliseconds(2)).status(), leanchan::RecvStatus::kTimedOut);
  EXPECT_EQ(probe.allocations(), 0u);
}

}  // namespace

// Reservations that fill a large channel (capacity >= 2^15, where the
// receiver's published position needs the claim counter or the receiver's
// block to be read exactly): the blocks numbered for them stay within
// ceil(C/b) + 1, and the reservation numbers exactly the blocks its
// positions fall in. A regression test: an earlier publication in groups
// of 2^(bits - 15) positions numbered one block too many here.
TEST(Memory, ReservationsFillingALargeChannelStayWithinTheBound) {
  {
    constexpr std::size_t kC = std::size_t{1} << 16;
    auto tx_rx = leanchan::channel<std::uint64_t, 1>(kC);
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    for (std::uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(tx.try_send(std::uint64_t{i}).ok());
    ASSERT_TRUE(rx.try_recv().ok());  // receiver at 1, three queued
    auto batch = tx.reserve_many(kC - 3);
    ASSERT_EQ(batch.status(), leanchan::SendStatus::kOk);
    // Positions 1 .. kC: one-slot blocks 1 .. kC (block 0, retired when
    // the receiver finished it, became the spare that block 4 reused).
    const std::size_t block = 16 + 8;
    EXPECT_EQ(rx.memory_usage(), 64 + kC * block);
  }
  {
    constexpr std::size_t kC = std::size_t{1} << 20;
    auto tx_rx = leanchan::channel<std::uint64_t, 32>(kC);
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    for (std::uint64_t i = 0; i < 64; ++i) ASSERT_TRUE(tx.try_send(std::uint64_t{i}).ok());
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(rx.try_recv().ok());  // receiver at 2
    auto batch = tx.reserve_many(kC - 62);
    ASSERT_EQ(batch.status(), leanchan::SendStatus::kOk);
    // Positions 2 .. kC + 1: blocks 0 .. kC / 32, that is ceil(C/b) + 1.
    const std::size_t block = 16 + 32 * 8;
    EXPECT_EQ(rx.memory_usage(), 64 + (kC / 32 + 1) * block);
  }
}
