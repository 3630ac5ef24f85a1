// SPDX-License-Identifier: MIT
// MemoryBudget: every channel byte charged by the documented formula, a
// refusal that hands the value back (kNoMemory) from every send form
// without waiting, recovery once memory comes back, and a refusal told
// apart from an upstream failure.
#include "leanchan/memory_budget.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <vector>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "memory_support.h"
#include "test_support.h"

namespace {

using leanchan::BudgetExceeded;
using leanchan::ChannelOptions;
using leanchan::MemoryBudget;
using leanchan::Retention;
using leanchan::SendStatus;
using leanchan::testing::block_bytes;
using leanchan::testing::drain;
using leanchan::testing::kControlBytes;
using leanchan::testing::Tracked;

constexpr std::size_t kCapacity = 16;
constexpr std::size_t kB = 4;
// channel<uint64_t, 4>(16): 72 + k * (16 + 4 * 8).
constexpr std::size_t kU64Block = block_bytes<std::uint64_t, kB>(kCapacity);
// channel<Tracked, 4>(16): 72 + k * (16 + 4 * sizeof(Tracked)).
constexpr std::size_t kTrackedBlock = block_bytes<Tracked, kB>(kCapacity);

TEST(MemoryBudget, ChargesEachChannelByteByTheDocumentedFormula) {
  MemoryBudget budget(1 << 20);
  {
    auto [tx, rx] = leanchan::channel<std::uint64_t, kB>(kCapacity, {.memory = &budget});
    EXPECT_EQ(budget.held(), kControlBytes);
    EXPECT_EQ(budget.figures().live_allocations, 1u);
    ASSERT_TRUE(tx.try_send(1).ok());
    EXPECT_EQ(budget.held(), kControlBytes + kU64Block);
    for (std::uint64_t i = 1; i < kCapacity; ++i) ASSERT_TRUE(tx.try_send(i).ok());
    // Full: ceil(16 / 4) = 4 blocks.
    EXPECT_EQ(budget.held(), kControlBytes + 4 * kU64Block);
    EXPECT_EQ(budget.held(), rx.memory_usage());
    EXPECT_EQ(budget.figures().live_allocations, 1u + 4u);
    EXPECT_EQ(drain(rx), kCapacity);
    // Retention::kKeepOne: the drained channel keeps one block, still charged.
    EXPECT_EQ(budget.held(), kControlBytes + kU64Block);
    EXPECT_EQ(budget.held(), rx.memory_usage());
    EXPECT_EQ(rx.shrink_to_fit(), kU64Block);
    EXPECT_EQ(budget.held(), kControlBytes);
    const auto figures = budget.figures();
    EXPECT_EQ(figures.high_water, kControlBytes + 4 * kU64Block);
    EXPECT_EQ(figures.refusals, 0u);
    EXPECT_EQ(figures.limit, 1u << 20);
  }
  EXPECT_EQ(budget.held(), 0u);
  EXPECT_EQ(budget.figures().live_allocations, 0u);
}

TEST(MemoryBudget, BlocksNumberedForAReservationAreChargedFromTheGrant) {
  MemoryBudget budget(1 << 20);
  auto [tx, rx] = leanchan::channel<std::uint64_t, kB>(kCapacity, {.memory = &budget});
  {
    // 8 slots from position 0: ceil(8 / 4) = 2 blocks, before any send.
    auto batch = tx.reserve_many(8);
    ASSERT_EQ(batch.status(), SendStatus::kOk);
    EXPECT_EQ(budget.held(), kControlBytes + 2 * kU64Block);
    EXPECT_EQ(budget.held(), rx.memory_usage());
  }
  // Given back unused: the blocks stay until the receiver finds the channel
  // empty, then Retention::kKeepOne keeps one.
  EXPECT_EQ(budget.held(), kControlBytes + 2 * kU64Block);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(budget.held(), kControlBytes + kU64Block);
  // A permit over a full budget: refused at the grant, not at its send.
  MemoryBudget tight(kControlBytes + kU64Block);
  auto [tx2, rx2] = leanchan::channel<std::uint64_t, kB>(kCapacity, {.memory = &tight});
  EXPECT_EQ(tx2.reserve_many(kB + 1).status(), SendStatus::kNoMemory);  // needs 2 blocks
  // Refused whole: the first block, which fitted, is not kept (it stayed
  // charged until the receiver found the channel empty).
  EXPECT_EQ(tight.held(), kControlBytes);
  EXPECT_EQ(rx2.memory_usage(), kControlBytes);
  auto batch = tx2.reserve_many(kB);
  ASSERT_EQ(batch.status(), SendStatus::kOk);
  for (std::uint64_t i = 0; i < kB; ++i) batch.send(i);  // cannot fail
  EXPECT_EQ(drain(rx2), kB);
}

TEST(MemoryBudget, TheLimitItselfIsAllowedOneByteMoreIsRefused) {
  MemoryBudget budget(100);
  void* all = budget.allocate(100, 8);
  EXPECT_EQ(budget.held(), 100u);
  EXPECT_THROW((void)budget.allocate(1, 1), BudgetExceeded);
  EXPECT_TRUE(budget.refused_on_this_thread());
  EXPECT_EQ(budget.held(), 100u);  // the refused charge is not held
  budget.deallocate(all, 100, 8);
  void* part = budget.allocate(60, 8);
  EXPECT_FALSE(budget.refused_on_this_thread());               // the latest allocation went through
  EXPECT_THROW((void)budget.allocate(41, 8), std::bad_alloc);  // BudgetExceeded is a bad_alloc
  void* rest = budget.allocate(40, 8);
  EXPECT_EQ(budget.held(), 100u);
  budget.deallocate(part, 60, 8);
  budget.deallocate(rest, 40, 8);
  const auto figures = budget.figures();
  EXPECT_EQ(figures.held, 0u);
  EXPECT_EQ(figures.high_water, 100u);
  EXPECT_EQ(figures.refusals, 2u);
  EXPECT_EQ(figures.live_allocations, 0u);
}

TEST(MemoryBudget, ALimitAboveTheMaximumActsAsTheMaximum) {
  MemoryBudget budget(~std::size_t{0});
  EXPECT_EQ(budget.limit(), MemoryBudget::kMaxLimit);
  EXPECT_THROW((void)budget.allocate(MemoryBudget::kMaxLimit + 1, 8), BudgetExceeded);
  EXPECT_EQ(budget.held(), 0u);
}

// Hands out one static byte for every request and takes nothing back.
class OneByteResource : public std::pmr::memory_resource {
  void* do_allocate(std::size_t, std::size_t) override { return &byte_; }
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  unsigned char byte_ = 0;
};

TEST(MemoryBudget, HoldsAtMostKMaxAllocations) {
  OneByteResource upstream;
  MemoryBudget budget(MemoryBudget::kMaxLimit, &upstream);
  void* p = nullptr;
  for (std::size_t i = 0; i < MemoryBudget::kMaxAllocations; ++i) p = budget.allocate(0, 1);
  EXPECT_EQ(budget.figures().live_allocations, MemoryBudget::kMaxAllocations);
  EXPECT_THROW((void)budget.allocate(0, 1), BudgetExceeded);
  EXPECT_EQ(budget.figures().live_allocations, MemoryBudget::kMaxAllocations);
  EXPECT_EQ(budget.held(), 0u);  // zero-byte requests: the count alone was full
  for (std::size_t i = 0; i < MemoryBudget::kMaxAllocations; ++i) budget.deallocate(p, 0, 1);
  EXPECT_EQ(budget.figures().live_allocations, 0u);
}

TEST(MemoryBudget, HighWaterResetsToTheBytesHeldNow) {
  MemoryBudget budget(1000);
  void* a = budget.allocate(300, 8);
  void* b = budget.allocate(500, 8);
  budget.deallocate(b, 500, 8);
  EXPECT_EQ(budget.figures().high_water, 800u);
  budget.reset_high_water();
  EXPECT_EQ(budget.figures().high_water, 300u);
  budget.deallocate(a, 300, 8);
  EXPECT_EQ(budget.figures().high_water, 300u);
}

TEST(MemoryBudget, ARefusedSendReturnsKNoMemoryWithItsValueNothingLostOrDoubled) {
  Tracked::reset();
  // The control block and one block: the fifth message needs a second.
  MemoryBudget budget(kControlBytes + kTrackedBlock);
  {
    auto [tx, rx] = leanchan::channel<Tracked, kB>(kCapacity, {.memory = &budget});
    for (std::uint64_t i = 0; i < kB; ++i) ASSERT_TRUE(tx.try_send(Tracked(i)).ok());
    auto refused = tx.try_send(Tracked(kB));
    ASSERT_EQ(refused.status(), SendStatus::kNoMemory);
    EXPECT_EQ(refused.value().value, kB);
    EXPECT_FALSE(refused.value().moved_from);
    EXPECT_TRUE(budget.refused_on_this_thread());
    EXPECT_EQ(budget.figures().refusals, 1u);
    EXPECT_EQ(budget.figures().refused_blocks, 1u);  // a send refused, not a channel
    EXPECT_EQ(budget.figures().refused_channels, 0u);
    EXPECT_EQ(budget.held(), budget.limit());
    // Live: the 4 queued, and the one handed back (moved-from temporaries
    // have been destroyed).
    EXPECT_EQ(Tracked::live(), static_cast<std::int64_t>(kB) + 1);
    for (std::uint64_t i = 0; i < kB; ++i) {
      auto r = rx.try_recv();
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r.value().value, i);
    }
    // The drained block is reused in place: the handed-back value goes in.
    ASSERT_TRUE(tx.try_send(std::move(refused).value()).ok());
    auto r = rx.try_recv();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().value, kB);
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  }
  EXPECT_EQ(Tracked::live(), 0);
  EXPECT_EQ(budget.held(), 0u);
}

TEST(MemoryBudget, BlockingSendAndReserveFailRatherThanWaitForMemory) {
  Tracked::reset();
  MemoryBudget budget(kControlBytes + kTrackedBlock);
  {
    auto [tx, rx] = leanchan::channel<Tracked, kB>(kCapacity, {.memory = &budget});
    for (std::uint64_t i = 0; i < kB; ++i) ASSERT_TRUE(tx.send(Tracked(i)).ok());
    // Room (12 free slots) but no memory: each returns at once (a wait
    // here would hang the test).
    auto sent = tx.send(Tracked(100));
    ASSERT_EQ(sent.status(), SendStatus::kNoMemory);
    EXPECT_EQ(sent.value().value, 100u);
    auto timed = tx.send_for(Tracked(101), std::chrono::hours(1));
    ASSERT_EQ(timed.status(), SendStatus::kNoMemory);
    EXPECT_EQ(timed.value().value, 101u);
    auto permit = tx.reserve();
    EXPECT_EQ(permit.status(), SendStatus::kNoMemory);
    EXPECT_EQ(budget.figures().refusals, 3u);
    EXPECT_EQ(tx.capacity(), kCapacity - kB);  // nothing claimed by the failures
    EXPECT_EQ(drain(rx), kB);
  }
  EXPECT_EQ(Tracked::live(), 0);
}

TEST(MemoryBudget, CoroutineSendCompletesWithKNoMemoryWithoutSuspending) {
  Tracked::reset();
  MemoryBudget budget(kControlBytes + kTrackedBlock);
  {
    auto tx_rx = leanchan::channel<Tracked, kB>(kCapacity, ChannelOptions{.memory = &budget});
    auto& tx = tx_rx.first;
    for (std::uint64_t i = 0; i < kB; ++i) ASSERT_TRUE(tx.try_send(Tracked(i)).ok());
    leanchan::ManualExecutor executor;
    std::optional<leanchan::SendResult<Tracked>> result;
    auto task = [](leanchan::Sender<Tracked, kB>& sender, leanchan::Executor& ex,
                   std::optional<leanchan::SendResult<Tracked>>& out) -> leanchan::testing::Task {
      out.emplace(co_await sender.async_send(Tracked(9), ex));
    }(tx, executor, result);
    task.handle.resume();
    ASSERT_TRUE(task.done()) << "the send suspended instead of failing";
    EXPECT_EQ(executor.run_pending(), 0u);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->status(), SendStatus::kNoMemory);
    EXPECT_EQ(result->value().value, 9u);
    EXPECT_TRUE(budget.refused_on_this_thread());
    EXPECT_EQ(drain(tx_rx.second), kB);
  }
  EXPECT_EQ(Tracked::live(), 0);
}

TEST(MemoryBudget, OtherChannelsKeepWorkingAndARefusedOneRecoversWhenMemoryComesBack) {
  // Two channels, two controls and one block between them.
  MemoryBudget budget(2 * kControlBytes + kU64Block);
  auto [tx_a, rx_a] = leanchan::channel<std::uint64_t, kB>(
      kCapacity, {.retention = Retention::kKeepNone, .memory = &budget});
  auto [tx_b, rx_b] = leanchan::channel<std::uint64_t, kB>(kCapacity, {.memory = &budget});
  ASSERT_TRUE(tx_a.try_send(1).ok());  // a takes the block
  auto refused = tx_b.try_send(2);
  ASSERT_EQ(refused.status(), SendStatus::kNoMemory);
  // a keeps working inside its block.
  for (std::uint64_t i = 2; i <= kB; ++i) ASSERT_TRUE(tx_a.try_send(i).ok());
  EXPECT_EQ(drain(rx_a), kB);  // kKeepNone: a's block goes back to the budget
  EXPECT_EQ(budget.held(), 2 * kControlBytes);
  ASSERT_TRUE(tx_b.try_send(std::move(refused).value()).ok());
  EXPECT_FALSE(budget.refused_on_this_thread());
  EXPECT_EQ(rx_b.try_recv().value(), 2u);
  EXPECT_EQ(budget.held(), 2 * kControlBytes + kU64Block);
  EXPECT_EQ(tx_a.try_send(7).status(), SendStatus::kNoMemory);  // now b holds it
}

// figures().channels counts control blocks, blocks the rest, by the
// request alone (a control block's 72 bytes aligned to 16 is no block's).
TEST(MemoryBudget, CountsChannelsAndBlocksApart) {
  MemoryBudget budget(1 << 20);
  {
    auto [tx1, rx1] = leanchan::channel<std::uint64_t, kB>(kCapacity, {.memory = &budget});
    auto [tx2, rx2] = leanchan::channel<Tracked, kB>(kCapacity, {.memory = &budget});
    // A block of 72 bytes (16 + 56), as many as a control block, but
    // requested aligned to 8.
    struct Words7 {
      std::uint64_t words[7];
    };
    static_assert(block_bytes<Words7, 1>(1) == kControlBytes);
    auto [tx3, rx3] = leanchan::channel<Words7, 1>(1, {.memory = &budget});
    EXPECT_EQ(budget.figures().channels, 3u);
    EXPECT_EQ(budget.figures().blocks, 0u);
    for (std::uint64_t i = 0; i < kCapacity; ++i) ASSERT_TRUE(tx1.try_send(i).ok());
    ASSERT_TRUE(tx2.try_send(Tracked(1)).ok());
    ASSERT_TRUE(tx3.try_send(Words7{}).ok());
    auto figures = budget.figures();
    EXPECT_EQ(figures.channels, 3u);
    EXPECT_EQ(figures.blocks, 4u + 1u + 1u);  // ceil(16 / 4), one, one
    EXPECT_EQ(figures.live_allocations, figures.channels + figures.blocks);
    EXPECT_EQ(figures.held, 3 * kControlBytes + 4 * kU64Block + kTrackedBlock + 72);
    EXPECT_EQ(drain(rx1), kCapacity);
    EXPECT_EQ(rx1.shrink_to_fit(), kU64Block);  // kKeepOne kept one
    EXPECT_EQ(budget.figures().blocks, 2u);
  }
  EXPECT_EQ(budget.figures().channels, 0u);
  EXPECT_EQ(budget.figures().blocks, 0u);
  EXPECT_EQ(budget.held(), 0u);
}

TEST(MemoryBudget, AControlBlockOverTheLimitFailsCreation) {
  MemoryBudget budget(kControlBytes - 1);
  EXPECT_THROW((void)leanchan::channel<std::uint64_t>(kCapacity, {.memory = &budget}),
               BudgetExceeded);
  auto tried = leanchan::try_channel<std::uint64_t>(kCapacity, {.memory = &budget});
  EXPECT_EQ(tried.error, leanchan::ChannelError::kNoMemory);
  EXPECT_EQ(budget.figures().refusals, 2u);
  EXPECT_EQ(budget.figures().refused_channels, 2u);  // two channels not created
  EXPECT_EQ(budget.figures().refused_blocks, 0u);
  EXPECT_EQ(budget.held(), 0u);
}

TEST(MemoryBudget, AnUpstreamFailureIsNotARefusalAndLeavesNothingCharged) {
  MemoryBudget budget(1 << 20, std::pmr::null_memory_resource());
  try {
    (void)budget.allocate(64, 8);
    ADD_FAILURE() << "the null resource allocated";
  } catch (const BudgetExceeded&) {
    ADD_FAILURE() << "an upstream failure reported as a refusal";
  } catch (const std::bad_alloc&) {
  }
  EXPECT_FALSE(budget.refused_on_this_thread());
  EXPECT_EQ(budget.figures().refusals, 0u);
  EXPECT_EQ(budget.held(), 0u);
  auto tried = leanchan::try_channel<std::uint64_t>(kCapacity, {.memory = &budget});
  EXPECT_EQ(tried.error, leanchan::ChannelError::kNoMemory);
  EXPECT_FALSE(budget.refused_on_this_thread());
  EXPECT_EQ(budget.held(), 0u);
}

TEST(MemoryBudget, AStackedBudgetNamesTheOneThatRefused) {
  MemoryBudget outer(100);
  MemoryBudget inner(1000, &outer);
  void* p = inner.allocate(80, 8);
  EXPECT_THROW((void)inner.allocate(40, 8), BudgetExceeded);  // inner has room; outer has not
  EXPECT_TRUE(outer.refused_on_this_thread());
  EXPECT_FALSE(inner.refused_on_this_thread());
  EXPECT_EQ(outer.figures().refusals, 1u);
  EXPECT_EQ(inner.figures().refusals, 0u);  // an upstream failure for inner
  EXPECT_EQ(inner.held(), 80u);
  EXPECT_EQ(outer.held(), 80u);
  inner.deallocate(p, 80, 8);
  EXPECT_EQ(outer.held(), 0u);
}

TEST(MemoryBudget, TheRefusalIsRecordedPerThread) {
  MemoryBudget budget(10);
  EXPECT_THROW((void)budget.allocate(11, 1), BudgetExceeded);
  bool seen_elsewhere = true;
  std::thread other([&] { seen_elsewhere = budget.refused_on_this_thread(); });
  other.join();
  EXPECT_FALSE(seen_elsewhere);
  EXPECT_TRUE(budget.refused_on_this_thread());
  MemoryBudget unrelated(10);
  EXPECT_FALSE(unrelated.refused_on_this_thread());
}

TEST(MemoryBudget, IsEqualIsIdentity) {
  MemoryBudget a(10);
  MemoryBudget b(10);
  EXPECT_TRUE(a.is_equal(a));
  EXPECT_FALSE(a.is_equal(b));
}

#ifndef NDEBUG
TEST(MemoryBudgetDeathTest, DestroyedWhileHoldingAsserts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto* budget = new MemoryBudget(100);
        (void)budget->allocate(10, 8);
        delete budget;
      },
      "destroyed while it still holds");
}
#endif

}  // namespace
