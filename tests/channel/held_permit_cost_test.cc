// SPDX-License-Identifier: MIT
// What a held reservation costs the sends beside it, counted: list locks
// and blocks walked per try_send with nothing held, one Permit held, and
// reserve_many(64) held, in a queue 1,000 and 100,000 deep. A permit
// numbers blocks past the one the sends write into (provisioning); the
// sends must still find their block by the lock-free read, taking the lock
// about once per block to step on to the next, never walking the list from
// its head. Counted with the test-points build's kListLocked, kBlockWalked
// (a step of a walk from the head) and kSendersBlockStepped (a step of the
// senders' block to the next block) points, on one thread, so the counts
// are exact. (The time per send: benchmarks/held_permit_bench.cc.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"
#include "test_point_support.h"

namespace {

using leanchan::internal::TestPoint;

std::atomic<long> locks{0};
std::atomic<long> walked{0};
std::atomic<long> stepped{0};

void count(TestPoint point) {
  if (point == TestPoint::kListLocked) locks.fetch_add(1, std::memory_order_relaxed);
  if (point == TestPoint::kBlockWalked) walked.fetch_add(1, std::memory_order_relaxed);
  if (point == TestPoint::kSendersBlockStepped) stepped.fetch_add(1, std::memory_order_relaxed);
}

constexpr std::size_t kCapacity = std::size_t{1} << 17;
constexpr std::size_t kBlock = 32;
constexpr long kSends = 2048;  // 64 blocks of 32

enum class Held { kNothing, kPermit, kBatchOf64 };

struct Cost {
  long locks;
  long walked;   // blocks stepped over walking from the head
  long stepped;  // steps of the senders' block to the next block
};

// Fills a channel to `depth`, holds `held`, then counts what kSends
// try_sends cost; every message arrives, in order.
Cost sends_beside(Held held, std::size_t depth) {
  auto [tx, rx] = leanchan::channel<std::uint64_t, kBlock>(kCapacity);
  for (std::size_t i = 0; i < depth; ++i) EXPECT_TRUE(tx.try_send(std::uint64_t{i}).ok());
  std::optional<leanchan::Permit<std::uint64_t, kBlock>> permit;
  std::optional<leanchan::PermitBatch<std::uint64_t, kBlock>> batch;
  if (held == Held::kPermit) {
    permit.emplace(tx.try_reserve());
    EXPECT_TRUE(static_cast<bool>(*permit));
  } else if (held == Held::kBatchOf64) {
    batch.emplace(tx.try_reserve_many(64));
    EXPECT_TRUE(static_cast<bool>(*batch));
  }
  locks = 0;
  walked = 0;
  stepped = 0;
  {
    const leanchan::testing::ScopedTestPointHook hook(&count);
    for (long i = 0; i < kSends; ++i) {
      EXPECT_TRUE(tx.try_send(depth + static_cast<std::uint64_t>(i)).ok());
    }
  }
  const Cost cost{locks.load(), walked.load(), stepped.load()};
  permit.reset();
  batch.reset();
  for (std::uint64_t i = 0; i < depth + kSends; ++i) EXPECT_EQ(rx.try_recv().value(), i);
  EXPECT_FALSE(rx.try_recv().ok());
  return cost;
}

class HeldPermitCost : public ::testing::TestWithParam<std::size_t> {};

// With nothing held a send locks only to number the block it enters: once
// per block of 32, where the senders' block steps on to it; it walks
// nothing.
TEST_P(HeldPermitCost, NothingHeldLocksOncePerBlock) {
  const Cost cost = sends_beside(Held::kNothing, GetParam());
  EXPECT_EQ(cost.locks, kSends / static_cast<long>(kBlock));
  EXPECT_EQ(cost.walked, 0);
  EXPECT_EQ(cost.stepped, kSends / static_cast<long>(kBlock));
}

// With a permit or 64 held, a send locks at most twice per block (once to
// number the block the held permits may need, once to enter the block its
// own claim lies in, numbered before: one step of the senders' block) and
// walks nothing from the head: within twice the nothing-held figures, at
// any depth.
TEST_P(HeldPermitCost, APermitHeldCostsAtMostTwiceNothingHeld) {
  const Cost none = sends_beside(Held::kNothing, GetParam());
  for (const Held held : {Held::kPermit, Held::kBatchOf64}) {
    SCOPED_TRACE(held == Held::kPermit ? "one Permit" : "reserve_many(64)");
    const Cost cost = sends_beside(held, GetParam());
    std::printf("depth %zu, %s: %ld locks, %ld walked, %ld stepped for %ld sends\n", GetParam(),
                held == Held::kPermit ? "one Permit" : "reserve_many(64)", cost.locks, cost.walked,
                cost.stepped, kSends);
    EXPECT_LE(cost.locks, 2 * none.locks);
    EXPECT_EQ(cost.walked, 0);
    EXPECT_LE(cost.stepped, 2 * none.stepped);
  }
}

INSTANTIATE_TEST_SUITE_P(Depths, HeldPermitCost, ::testing::Values(1000, 100000));

}  // namespace
