// SPDX-License-Identifier: MIT
// ChannelRegistry: listed channels' exact figures (88-byte control block,
// memory_usage() of each), the top n in order, unlisting on the last
// handle, nothing listed when creation fails, and walks racing channels
// created and destroyed on other threads.
#include "leanchan/channel_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/memory_budget.h"
#include "memory_support.h"

namespace {

using leanchan::ChannelRegistry;
using leanchan::ChannelUsage;
using leanchan::MemoryBudget;
using leanchan::Receiver;
using leanchan::Retention;
using leanchan::Sender;
using leanchan::testing::block_bytes;
using leanchan::testing::kControlBytes;
using leanchan::testing::kRegisteredControlBytes;

constexpr std::size_t kCapacity = 16;
constexpr std::size_t kB = 4;
constexpr std::size_t kBlock = block_bytes<std::uint64_t, kB>(kCapacity);  // 16 + 4 * 8
using Ends = std::pair<Sender<std::uint64_t, kB>, Receiver<std::uint64_t, kB>>;

Ends listed(ChannelRegistry& registry, std::uint64_t tag,
            std::pmr::memory_resource* memory = nullptr) {
  return leanchan::channel<std::uint64_t, kB>(kCapacity, {.retention = Retention::kKeepNone,
                                                          .memory = memory,
                                                          .registry = &registry,
                                                          .registry_tag = tag});
}

void send(Ends& ends, std::size_t messages) {
  for (std::size_t i = 0; i < messages; ++i) ASSERT_TRUE(ends.first.try_send(i).ok());
}

TEST(ChannelRegistry, AListedChannelsControlBlockIs88BytesAnUnlistedOneIsUnchanged) {
  ChannelRegistry registry;
  auto plain = leanchan::channel<std::uint64_t, kB>(kCapacity);
  EXPECT_EQ(plain.second.memory_usage(), 64u);
  MemoryBudget budget(1 << 20);
  auto with_memory = leanchan::channel<std::uint64_t, kB>(kCapacity, {.memory = &budget});
  EXPECT_EQ(with_memory.second.memory_usage(), kControlBytes);
  EXPECT_EQ(registry.channels(), 0u);

  auto ends = listed(registry, 7);
  EXPECT_EQ(kRegisteredControlBytes, 88u);
  EXPECT_EQ(ends.second.memory_usage(), kRegisteredControlBytes);
  send(ends, 5);  // ceil(5 / 4) = 2 blocks
  EXPECT_EQ(ends.second.memory_usage(), kRegisteredControlBytes + 2 * kBlock);
  const auto figures = registry.figures(1);
  EXPECT_EQ(figures.channels, 1u);
  EXPECT_EQ(figures.bytes, kRegisteredControlBytes + 2 * kBlock);
  ASSERT_EQ(figures.top.size(), 1u);
  EXPECT_EQ(figures.top[0], (ChannelUsage{7, kRegisteredControlBytes + 2 * kBlock}));
}

TEST(ChannelRegistry, ABudgetCountsAListedChannelAsAChannel) {
  ChannelRegistry registry;
  MemoryBudget budget(1 << 20);
  {
    auto ends = listed(registry, 1, &budget);
    send(ends, 1);
    EXPECT_EQ(budget.held(), kRegisteredControlBytes + kBlock);
    EXPECT_EQ(budget.held(), ends.second.memory_usage());
    EXPECT_EQ(budget.figures().channels, 1u);
    EXPECT_EQ(budget.figures().blocks, 1u);
  }
  EXPECT_EQ(budget.held(), 0u);
  EXPECT_EQ(registry.channels(), 0u);
}

TEST(ChannelRegistry, TopIsTheLargestFirstTiesBySmallerTag) {
  ChannelRegistry registry;
  std::vector<Ends> channels;
  // Tag t holds t % 5 messages: 0..4 messages, so 0, 1, 1, 1, 1 blocks.
  for (std::uint64_t tag = 0; tag < 20; ++tag) {
    channels.push_back(listed(registry, tag));
    send(channels.back(), tag % 5);
  }
  // Tag 19 also gets a fifth message (a second block) and tag 3 a burst of
  // the whole capacity (4 blocks).
  ASSERT_TRUE(channels[19].first.try_send(99).ok());
  send(channels[3], kCapacity - 3);
  const auto figures = registry.figures(4);
  EXPECT_EQ(figures.channels, 20u);
  // 20 control blocks; blocks: 16 channels of t % 5 != 0 hold one each,
  // tag 19 one more, tag 3 three more.
  EXPECT_EQ(figures.bytes, 20 * kRegisteredControlBytes + (16 + 1 + 3) * kBlock);
  const std::vector<ChannelUsage> expected{{3, kRegisteredControlBytes + 4 * kBlock},
                                           {19, kRegisteredControlBytes + 2 * kBlock},
                                           {1, kRegisteredControlBytes + kBlock},
                                           {2, kRegisteredControlBytes + kBlock}};
  EXPECT_EQ(figures.top, expected);
  // More asked than listed: all of them, in order; none asked: the sums only.
  EXPECT_EQ(registry.figures(100).top.size(), 20u);
  EXPECT_EQ(registry.figures(100).top.back(), (ChannelUsage{15, kRegisteredControlBytes}));
  EXPECT_TRUE(registry.figures(0).top.empty());
  EXPECT_EQ(registry.figures(0).bytes, figures.bytes);
}

TEST(ChannelRegistry, TheLastHandleUnlistsItAndTheOthersStayListed) {
  ChannelRegistry registry;
  std::vector<std::optional<Ends>> channels;
  for (std::uint64_t tag = 0; tag < 6; ++tag) {
    channels.emplace_back(listed(registry, tag));
    send(*channels.back(), tag);  // tag t: t messages
  }
  channels[0].reset();  // the first entry: the last one moves into its place
  channels[3].reset();
  auto sender_only = std::move(channels[5]->first);
  channels[5].reset();  // the receiver is gone, a sender is not: still listed
  EXPECT_EQ(registry.channels(), 4u);
  const auto figures = registry.figures(10);
  // Tags 1, 2 and 4 hold one block each; tag 5's receiver dropped its five
  // messages and their blocks.
  const std::vector<ChannelUsage> expected{{1, kRegisteredControlBytes + kBlock},
                                           {2, kRegisteredControlBytes + kBlock},
                                           {4, kRegisteredControlBytes + kBlock},
                                           {5, kRegisteredControlBytes}};
  EXPECT_EQ(figures.top, expected);
  { auto dropped = std::move(sender_only); }
  EXPECT_EQ(registry.channels(), 3u);
  channels.clear();
  EXPECT_EQ(registry.channels(), 0u);
  EXPECT_EQ(registry.figures(10).bytes, 0u);
}

TEST(ChannelRegistry, AFailedCreationListsNothing) {
  ChannelRegistry registry;
  MemoryBudget budget(kRegisteredControlBytes - 1);
  EXPECT_THROW((void)listed(registry, 1, &budget), leanchan::BudgetExceeded);
  auto tried = leanchan::try_channel<std::uint64_t, kB>(
      kCapacity, {.memory = &budget, .registry = &registry, .registry_tag = 2});
  EXPECT_EQ(tried.error, leanchan::ChannelError::kNoMemory);
  EXPECT_EQ(registry.channels(), 0u);
  EXPECT_EQ(budget.held(), 0u);
  auto ok = leanchan::try_channel<std::uint64_t, kB>(kCapacity, {.registry = &registry});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(registry.channels(), 1u);
}

// Walks race channels created, filled, drained and destroyed on two other
// threads (run under TSan in CI): every figure a walk reads is one a
// listed channel can hold, and nothing is left listed.
TEST(ChannelRegistry, WalksRacingCreationSendsAndDestruction) {
  ChannelRegistry registry;
  constexpr int kRounds = 2000;
  std::atomic<int> running{2};
  auto churn = [&registry, &running](std::uint64_t base) {
    for (int round = 0; round < kRounds; ++round) {
      auto ends = listed(registry, base + static_cast<std::uint64_t>(round));
      for (std::uint64_t i = 0; i < kCapacity; ++i) (void)ends.first.try_send(i);
      while (ends.second.try_recv().ok()) {
      }
    }
    running.fetch_sub(1);
  };
  std::thread a(churn, 0), b(churn, 1'000'000);
  std::size_t walks = 0;
  do {
    const auto figures = registry.figures(2);
    EXPECT_LE(figures.channels, 2u);
    EXPECT_LE(figures.top.size(), figures.channels);
    for (const auto& usage : figures.top) {
      const std::size_t blocks = (usage.bytes - kRegisteredControlBytes) / kBlock;
      EXPECT_EQ(usage.bytes, kRegisteredControlBytes + blocks * kBlock);
      EXPECT_LE(blocks, kCapacity / kB + 1);
    }
    ++walks;
  } while (running.load() != 0);
  a.join();
  b.join();
  EXPECT_GT(walks, 0u);
  EXPECT_EQ(registry.channels(), 0u);
}

#if !defined(NDEBUG) && GTEST_HAS_DEATH_TEST
TEST(ChannelRegistryDeathTest, DestroyedWhileChannelsAreListedAsserts) {
  EXPECT_DEATH(
      {
        auto* registry = new ChannelRegistry;
        auto ends = listed(*registry, 1);
        delete registry;
      },
      "destroyed while channels are listed");
}
#endif

}  // namespace
