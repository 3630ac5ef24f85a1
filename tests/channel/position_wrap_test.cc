// SPDX-License-Identifier: MIT
// Message positions wrap at M (2^35, or b * 2^30 when b, the slots per
// block, is not a power of two: leanchan/internal/position.h):
// channels started a few blocks before the wrap (test_start_position, the
// test-points build) run through it with every promise kept: FIFO,
// exactly-once delivery, len(), the bound, reservations, the memory
// figures (64 + blocks * (16 + b * 8) bytes here), and the release of a
// drained list under Retention::kKeepNone, whose jump to the next block
// boundary lands on 0 at the wrap.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/position.h"
#include "leanchan/internal/test_point.h"

namespace {

using leanchan::Retention;
using leanchan::internal::Positions;

// Channels created in its scope start `blocks_before` blocks before the
// wrap of their positions.
class StartBeforeWrap {
 public:
  StartBeforeWrap(std::uint64_t slots, std::uint64_t blocks_before) {
    leanchan::internal::test_start_position.store(Positions::modulus(slots) -
                                                  blocks_before * slots);
  }
  ~StartBeforeWrap() { leanchan::internal::test_start_position.store(0); }
  StartBeforeWrap(const StartBeforeWrap&) = delete;
  StartBeforeWrap& operator=(const StartBeforeWrap&) = delete;
};

constexpr std::size_t kControl = 64;
constexpr std::size_t block_bytes(std::size_t slots) {
  return 16 + slots * sizeof(std::uint64_t);
}

// One thread: fills the channel to its capacity and drains it, round after
// round, through the wrap; checks order, len(), the bound and the memory.
template <std::size_t BlockSize>
void fill_and_drain(std::size_t capacity, Retention retention) {
  const std::size_t slots = capacity < BlockSize ? capacity : BlockSize;
  StartBeforeWrap start(slots, 2);
  auto [tx, rx] = leanchan::channel<std::uint64_t, BlockSize>(capacity, retention);
  EXPECT_EQ(rx.memory_usage(), kControl);
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  // Enough rounds to cross the wrap (2 blocks away) twice over.
  const std::uint64_t rounds = 4 * slots / capacity + 4;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < capacity; ++i) ASSERT_TRUE(tx.try_send(sent++).ok());
    EXPECT_EQ(tx.try_send(0).status(), leanchan::SendStatus::kFull) << "round " << round;
    EXPECT_EQ(rx.len(), capacity);
    const std::size_t blocks = (capacity + slots - 1) / slots;
    // A full channel holds ceil(C/b) blocks, or one more while a drained
    // block waits as a spare (kKeepOne) at a boundary that did not line up.
    EXPECT_GE(rx.memory_usage(), kControl + blocks * block_bytes(slots));
    EXPECT_LE(rx.memory_usage(), kControl + (blocks + 1) * block_bytes(slots));
    for (std::size_t i = 0; i < capacity; ++i) {
      auto got = rx.try_recv();
      ASSERT_TRUE(got.ok()) << "round " << round << " message " << i;
      ASSERT_EQ(got.value(), received++);
    }
    EXPECT_EQ(rx.len(), 0u);
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
    // Found empty: a drained channel keeps one block, or none.
    const std::size_t kept = retention == Retention::kKeepNone ? 0 : 1;
    EXPECT_EQ(rx.memory_usage(), kControl + kept * block_bytes(slots)) << "round " << round;
  }
}

TEST(PositionWrap, FillAndDrainCrossesTheWrap) {
  for (const Retention retention : {Retention::kKeepOne, Retention::kKeepNone}) {
    SCOPED_TRACE(retention == Retention::kKeepNone ? "kKeepNone" : "kKeepOne");
    fill_and_drain<1>(1, retention);
    fill_and_drain<1>(5, retention);
    fill_and_drain<8>(5, retention);  // b = 5: M is no power of two
    fill_and_drain<8>(3, retention);
    fill_and_drain<8>(64, retention);
    fill_and_drain<32>(100, retention);
    fill_and_drain<3>(7, retention);
  }
}

// Messages one at a time under kKeepNone: every take drains the channel and
// releases its block, so each message jumps the claim position to the next
// block boundary, which wraps to 0.
TEST(PositionWrap, KeepNoneTrickleJumpsOverTheWrap) {
  for (const std::size_t capacity : {1u, 4u, 32u}) {
    const std::size_t slots = capacity < 8 ? capacity : 8;
    StartBeforeWrap start(slots, 3);
    auto [tx, rx] = leanchan::channel<std::uint64_t, 8>(capacity, Retention::kKeepNone);
    for (std::uint64_t i = 0; i < 10; ++i) {
      ASSERT_TRUE(tx.try_send(i).ok());
      EXPECT_EQ(rx.len(), 1u);
      EXPECT_EQ(rx.memory_usage(), kControl + block_bytes(slots));
      auto got = rx.try_recv();
      ASSERT_TRUE(got.ok());
      EXPECT_EQ(got.value(), i);
      EXPECT_EQ(rx.len(), 0u);
      EXPECT_EQ(rx.memory_usage(), kControl) << "capacity " << capacity << " message " << i;
    }
  }
}

// A reservation taken before the wrap and used after it, and a batch
// across it: their positions are claimed in the order of use.
TEST(PositionWrap, ReservationsAcrossTheWrap) {
  StartBeforeWrap start(4, 1);
  auto [tx, rx] = leanchan::channel<std::uint64_t, 4>(8);
  auto early = tx.try_reserve();
  ASSERT_TRUE(early);
  for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(tx.try_send(i).ok());  // crosses the wrap
  auto batch = tx.try_reserve_many(1);
  ASSERT_TRUE(batch);
  EXPECT_EQ(tx.try_send(99).status(), leanchan::SendStatus::kFull);
  early.send(6);
  batch.send(7);
  for (std::uint64_t i = 0; i < 8; ++i) {
    auto got = rx.try_recv();
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got.value(), i);
  }
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
}

// Two producers and a blocking receiver through the wrap (b = 3, so M is
// no power of two): each producer's messages arrive once each, in order.
TEST(PositionWrap, TwoProducersAcrossTheWrap) {
  StartBeforeWrap start(3, 50);
  auto [tx, rx] = leanchan::channel<std::uint64_t, 3>(6);
  constexpr std::uint64_t kPerProducer = 2000;
  std::vector<std::thread> producers;
  for (std::uint64_t p = 0; p < 2; ++p) {
    producers.emplace_back([p, sender = tx]() mutable {
      for (std::uint64_t i = 0; i < kPerProducer; ++i) {
        ASSERT_TRUE(sender.send(p << 32 | i).ok());
      }
    });
  }
  { auto gone = std::move(tx); }  // only the producers' senders are left
  std::uint64_t next[2] = {0, 0};
  for (;;) {
    auto got = rx.recv();
    if (!got) break;
    const std::uint64_t p = *got >> 32;
    ASSERT_LT(p, 2u);
    ASSERT_EQ(*got & 0xFFFFFFFF, next[p]) << "producer " << p;
    ++next[p];
  }
  for (auto& producer : producers) producer.join();
  EXPECT_EQ(next[0], kPerProducer);
  EXPECT_EQ(next[1], kPerProducer);
}

}  // namespace
