// SPDX-License-Identifier: MIT
// Producers on several channels sharing one budget, racing the receivers'
// drains: the held figure never passes the limit on any sample, refused
// sends are retried with the value handed back, and every message arrives
// exactly once, in each producer's order. Over the default upstream and
// over a BlockPool (so the pool's pages are also taken on senders' threads
// and given back on receivers').
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory_resource>
#include <optional>
#include <thread>
#include <vector>

#include "leanchan/block_pool.h"
#include "leanchan/channel.h"
#include "leanchan/memory_budget.h"
#include "memory_support.h"
#include "test_support.h"

namespace {

using leanchan::BlockPool;
using leanchan::ChannelOptions;
using leanchan::MemoryBudget;
using leanchan::Retention;
using leanchan::SendStatus;
using leanchan::testing::block_bytes;
using leanchan::testing::kControlBytes;
using leanchan::testing::Tracked;

constexpr int kProducers = 4;
constexpr int kChannels = 3;
constexpr std::size_t kCapacity = 64;
constexpr std::size_t kB = 4;
constexpr std::size_t kBlock = block_bytes<Tracked, kB>(kCapacity);
// The controls and 6 blocks among 3 channels that could hold 48 between
// them: the producers are refused again and again.
constexpr std::size_t kLimit = kChannels * kControlBytes + 6 * kBlock;

struct Outcome {
  std::uint64_t refusals = 0;
  std::size_t max_sampled = 0;
  std::uint64_t samples = 0;
};

Outcome run(std::pmr::memory_resource* upstream, std::uint64_t per_producer) {
  Tracked::reset();
  MemoryBudget budget(kLimit, upstream);
  Outcome outcome;
  {
    std::vector<leanchan::Sender<Tracked, kB>> senders;
    std::vector<leanchan::Receiver<Tracked, kB>> receivers;
    // A message's value: producer << 32 | its sequence number.
    for (int c = 0; c < kChannels; ++c) {
      // Keep-none and keep-one: blocks come and go at every drain, or stay.
      const Retention retention = c == 0 ? Retention::kKeepOne : Retention::kKeepNone;
      auto [tx, rx] = leanchan::channel<Tracked, kB>(
          kCapacity, ChannelOptions{.retention = retention, .memory = &budget});
      senders.push_back(std::move(tx));
      receivers.push_back(std::move(rx));
    }
    std::atomic<int> producers_left{kProducers};
    std::atomic<bool> refused_elsewhere{false};  // kNoMemory not from this budget
    std::atomic<bool> out_of_order{false};
    std::vector<std::thread> threads;
    for (int p = 0; p < kProducers; ++p) {
      threads.emplace_back([&, senders, p]() mutable {
        for (std::uint64_t i = 0; i < per_producer; ++i) {
          std::optional<Tracked> message(std::in_place, (static_cast<std::uint64_t>(p) << 32) | i);
          auto& tx = senders[i % kChannels];
          for (;;) {
            auto r = tx.send(std::move(*message));
            if (r.ok()) break;
            if (r.status() != SendStatus::kNoMemory || !budget.refused_on_this_thread()) {
              refused_elsewhere = true;
            }
            message.emplace(std::move(r).value());
            std::this_thread::yield();  // back-off only; correctness does not depend on it
          }
        }
        senders.clear();
        producers_left.fetch_sub(1);
      });
    }
    senders.clear();  // the producers' copies keep the channels open
    std::vector<std::vector<std::uint64_t>> next(kChannels,
                                                 std::vector<std::uint64_t>(kProducers, 0));
    for (int c = 0; c < kChannels; ++c) {
      threads.emplace_back([&, c] {
        auto& expected = next[static_cast<std::size_t>(c)];
        while (auto message = receivers[static_cast<std::size_t>(c)].recv()) {
          const auto p = static_cast<std::size_t>(message->value >> 32);
          const std::uint64_t i = message->value & 0xFFFFFFFFu;
          // This channel gets producer p's i with i % kChannels == c, in order.
          if (p >= static_cast<std::size_t>(kProducers) ||
              i != expected[p] * kChannels + static_cast<std::uint64_t>(c)) {
            out_of_order = true;  // keep draining: the producers must finish
            continue;
          }
          ++expected[p];
        }
      });
    }
    // The sampler: every read of the held figure is within the limit.
    while (producers_left.load() > 0) {
      const std::size_t held = budget.held();
      EXPECT_LE(held, kLimit);
      outcome.max_sampled = std::max(outcome.max_sampled, held);
      ++outcome.samples;
      std::this_thread::yield();  // leaves the cores to the producers; not synchronization
    }
    for (auto& thread : threads) thread.join();
    EXPECT_FALSE(refused_elsewhere) << "a send failed other than by this budget's refusal";
    EXPECT_FALSE(out_of_order) << "a message lost, doubled or out of its producer's order";
    for (int c = 0; c < kChannels; ++c) {
      for (int p = 0; p < kProducers; ++p) {
        const auto cu = static_cast<std::uint64_t>(c);
        // ceil((per_producer - c) / kChannels) messages of each producer.
        const std::uint64_t share =
            per_producer > cu ? (per_producer - cu + kChannels - 1) / kChannels : 0;
        EXPECT_EQ(next[static_cast<std::size_t>(c)][static_cast<std::size_t>(p)], share);
      }
    }
    const auto figures = budget.figures();
    EXPECT_LE(figures.high_water, kLimit);
    EXPECT_EQ(figures.held, budget.held());
    outcome.refusals = figures.refusals;
    receivers.clear();
  }
  EXPECT_EQ(budget.held(), 0u);
  EXPECT_EQ(budget.figures().live_allocations, 0u);
  EXPECT_EQ(Tracked::live(), 0);  // each value destroyed exactly once
  return outcome;
}

std::uint64_t messages_per_producer() {
  return static_cast<std::uint64_t>(std::max(1000.0, 20000.0 * leanchan::testing::stress_scale()));
}

TEST(MemoryBudgetStress, ProducersSharingABudgetNeverPassItAndDeliverExactlyOnce) {
  const Outcome outcome = run(std::pmr::new_delete_resource(), messages_per_producer());
  EXPECT_GT(outcome.refusals, 0u) << "the limit was never reached: the test tested nothing";
  EXPECT_GT(outcome.samples, 0u);
  std::printf("%llu refusals, %llu samples, most held %zu of %zu\n",
              static_cast<unsigned long long>(outcome.refusals),
              static_cast<unsigned long long>(outcome.samples), outcome.max_sampled, kLimit);
  EXPECT_LE(outcome.max_sampled, kLimit);
}

TEST(MemoryBudgetStress, OverABlockPoolPagesTakenAndGivenBackAcrossThreads) {
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  const Outcome outcome = run(&pool, messages_per_producer());
  EXPECT_GT(outcome.refusals, 0u);
  const auto figures = pool.figures();
  EXPECT_EQ(figures.live_allocations, 0u);
  EXPECT_EQ(figures.live_bytes, 0u);
  EXPECT_EQ(figures.resident_pages, 0u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_GT(figures.pages_given_back, 0u);
  }
}

}  // namespace
