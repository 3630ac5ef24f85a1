// SPDX-License-Identifier: MIT
// Many producers, one consumer: nothing lost, nothing duplicated, each
// producer's order kept, every message destroyed once. Parameters: producers
// {1,2,4,8} x block size {1,2,7,32} x capacity {1,3,64}. Each producer mixes
// send, try_send, send_for and reserve+send, chosen by a seeded generator; the
// seed is printed with any failure. LEANCHAN_STRESS_SCALE sizes the rounds.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using leanchan::testing::Tracked;
using namespace std::chrono_literals;

constexpr std::uint64_t encode(std::uint64_t producer, std::uint64_t sequence) {
  return producer << 32 | sequence;
}

// Sends `count` messages one way or another; returns only when all are in.
template <std::size_t B>
void produce(leanchan::Sender<Tracked, B> tx, std::uint64_t producer, std::uint64_t count,
             std::uint32_t seed) {
  std::mt19937 random(seed);
  for (std::uint64_t i = 0; i < count; ++i) {
    Tracked message(encode(producer, i));
    switch (random() % 3 == 0 ? 0 : (random() % 3 == 0 ? 3 : 1)) {
      case 0: {
        auto result = tx.send(std::move(message));
        ASSERT_TRUE(result.ok());
        break;
      }
      case 1:
      case 2: {
        // The value handed back is sent again (T need not be assignable,
        // so it is carried in an optional and re-emplaced).
        const bool timed = random() % 2 == 0;
        std::optional<Tracked> carry(std::move(message));
        for (;;) {
          auto result =
              timed ? tx.send_for(std::move(*carry), 50us) : tx.try_send(std::move(*carry));
          carry.reset();
          if (result.ok()) break;
          ASSERT_EQ(result.status(),
                    timed ? leanchan::SendStatus::kTimedOut : leanchan::SendStatus::kFull);
          if (!timed) std::this_thread::yield();
          carry.emplace(std::move(result).value());
        }
        break;
      }
      default: {
        auto permit = tx.reserve();
        ASSERT_TRUE(permit);
        permit.send(std::move(message));
        break;
      }
    }
  }
}

template <std::size_t B>
void run_stress(int producers, std::size_t capacity, std::uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "producers=" << producers << " B=" << B
                                    << " capacity=" << capacity << " seed=" << seed);
  Tracked::reset();
  const auto per_producer = static_cast<std::uint64_t>(
      std::max(1.0, 24000.0 / producers * leanchan::testing::stress_scale()));
  std::vector<std::uint64_t> next(static_cast<std::size_t>(producers), 0);
  {
    auto [tx, rx] = leanchan::channel<Tracked, B>(capacity);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back(produce<B>, tx, static_cast<std::uint64_t>(p), per_producer,
                           seed + static_cast<std::uint32_t>(p));
    }
    { auto gone = std::move(tx); }
    std::mt19937 random(seed);
    std::uint64_t received = 0;
    std::vector<Tracked> batch;
    for (;;) {
      bool ended = false;
      batch.clear();
      switch (random() % 3) {
        case 0: {
          auto message = rx.recv();
          if (message)
            batch.push_back(std::move(*message));
          else
            ended = true;
          break;
        }
        case 1: {
          auto result = rx.recv_for(1ms);
          if (result.ok())
            batch.push_back(std::move(result).value());
          else
            ended = result.status() == leanchan::RecvStatus::kDisconnected;
          break;
        }
        default: ended = rx.recv_many(batch, 1 + random() % 16) == 0;
      }
      if (ended) break;
      for (const Tracked& message : batch) {
        const std::uint64_t producer = message.value >> 32;
        const std::uint64_t sequence = message.value & 0xffffffffu;
        ASSERT_LT(producer, static_cast<std::uint64_t>(producers));
        ASSERT_EQ(sequence, next[producer]) << "producer " << producer << " out of order";
        ++next[producer];
        ++received;
      }
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(received, per_producer * static_cast<std::uint64_t>(producers));
    const std::size_t b = std::min(B, capacity);  // slots per block
    EXPECT_LE(rx.memory_usage(), 64 + (16 + b * sizeof(Tracked)) * ((capacity + b - 1) / b + 1));
  }
  for (auto count : next) EXPECT_EQ(count, per_producer);
  EXPECT_EQ(Tracked::live(), 0);
}

using StressParams = std::tuple<int, int, std::size_t>;  // producers, block size, capacity

class StressTest : public ::testing::TestWithParam<StressParams> {};

TEST_P(StressTest, EveryMessageArrivesOnceInProducerOrder) {
  const auto [producers, block_size, capacity] = GetParam();
  const auto seed = static_cast<std::uint32_t>(
      std::random_device{}() ^ static_cast<std::uint32_t>(producers * 131 + capacity));
  switch (block_size) {
    case 1: run_stress<1>(producers, capacity, seed); break;
    case 2: run_stress<2>(producers, capacity, seed); break;
    case 7: run_stress<7>(producers, capacity, seed); break;
    default: run_stress<32>(producers, capacity, seed); break;
  }
}

INSTANTIATE_TEST_SUITE_P(
    ProducersBlocksCapacities, StressTest,
    ::testing::Combine(::testing::Values(1, 2, 4, 8), ::testing::Values(1, 2, 7, 32),
                       ::testing::Values(std::size_t{1}, std::size_t{3}, std::size_t{64})),
    [](const ::testing::TestParamInfo<StressParams>& param_info) {
      return "P" + std::to_string(std::get<0>(param_info.param)) + "_B" +
             std::to_string(std::get<1>(param_info.param)) + "_C" +
             std::to_string(std::get<2>(param_info.param));
    });

}  // namespace
