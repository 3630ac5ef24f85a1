// SPDX-License-Identifier: MIT
// The Tokio-style baseline keeps its own contract: exactly-once, in-order
// delivery under many producers, and Tokio 1.24's memory formula to the byte
// (docs/tokio_style.md sections 4 and 6).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "leanchan/profiler/heap_probe.h"
#include "test_support.h"
#include "tokio_style/channel.h"

namespace {

using leanchan::profiler::HeapProbe;
using leanchan::testing::Tracked;

template <std::size_t S>
struct Message {
  std::array<unsigned char, S> bytes{};
};

static_assert(sizeof(tokio_style::Chan<Message<8>>) == 176, "Tokio 1.24's ArcInner<Chan>");
static_assert(sizeof(tokio_style::Block<Message<8>>) == 32 + 32 * 8);
static_assert(sizeof(tokio_style::Block<Message<1024>>) == 32 + 32 * 1024);

TEST(Baseline, CreateCostsTheChanPlusAFullBlock) {
  for (int repeat = 0; repeat < 2; ++repeat) {
    HeapProbe probe;
    auto [tx, rx] = tokio_style::channel<Message<1024>>(1);
    EXPECT_EQ(probe.live_bytes(), 176 + 32 + 32 * 1024);  // 32,976 B, as Tokio measures
    EXPECT_EQ(probe.allocations(), 2u);
  }
}

// Reference section 4: T = 8 bytes, block = 288 bytes, Chan = 176.
TEST(Baseline, FillAndDrain1024KeepsFourBlocks) {
  HeapProbe probe;
  auto [tx, rx] = tokio_style::channel<Message<8>>(1024);
  for (int i = 0; i < 1024; ++i) ASSERT_TRUE(tx.try_send(Message<8>{}).ok());
  EXPECT_EQ(probe.live_bytes(), 9392);  // 176 + 32 * 288
  for (int i = 0; i < 1024; ++i) ASSERT_TRUE(rx.try_recv().ok());
  EXPECT_EQ(probe.live_bytes(), 1328);  // 176 + 4 * 288: head + 3 recycled
}

TEST(Baseline, FillAndDrain100KeepsAllFourBlocks) {
  HeapProbe probe;
  auto [tx, rx] = tokio_style::channel<Message<8>>(100);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(tx.try_send(Message<8>{}).ok());
  EXPECT_EQ(probe.live_bytes(), 176 + 4 * 288);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(rx.try_recv().ok());
  EXPECT_EQ(probe.live_bytes(), 176 + 4 * 288);
}

TEST(Baseline, RoundTripsSettleAtTwoBlocksAfterOneExtraAllocation) {
  HeapProbe probe;
  auto [tx, rx] = tokio_style::channel<Message<8>>(16);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(tx.try_send(Message<8>{}).ok());
    ASSERT_TRUE(rx.try_recv().ok());
  }
  EXPECT_EQ(probe.live_bytes(), 752);  // 176 + 2 * 288
  EXPECT_EQ(probe.allocations(), 3u);  // Chan, first block, one more
}

TEST(Baseline, ErrorPathsHandTheValueBack) {
  auto [tx, rx] = tokio_style::channel<int>(1);
  ASSERT_TRUE(tx.try_send(1).ok());
  auto full = tx.try_send(2);
  EXPECT_EQ(full.status(), leanchan::SendStatus::kFull);
  EXPECT_EQ(full.value(), 2);
  auto late = tx.send_for(3, std::chrono::milliseconds(2));
  EXPECT_EQ(late.status(), leanchan::SendStatus::kTimedOut);
  rx.close();
  auto closed = tx.send(4);
  EXPECT_EQ(closed.status(), leanchan::SendStatus::kClosed);
  EXPECT_EQ(rx.recv(), std::optional<int>(1));
  EXPECT_EQ(rx.recv(), std::nullopt);
  EXPECT_THROW((void)tokio_style::channel<int>(0), std::invalid_argument);
}

class BaselineWaiting : public ::testing::TestWithParam<tokio_style::Waiting> {};

TEST_P(BaselineWaiting, ManyProducersDeliverEveryMessageOnceInOrder) {
  Tracked::reset();
  for (std::size_t capacity : {1u, 3u, 64u}) {
    for (int producers : {1, 4, 8}) {
      SCOPED_TRACE(::testing::Message() << "capacity=" << capacity << " producers=" << producers);
      const auto per_producer = static_cast<std::uint64_t>(
          std::max(1.0, 10000.0 / producers * leanchan::testing::stress_scale()));
      auto [tx, rx] = tokio_style::channel<Tracked>(capacity, GetParam());
      std::vector<std::thread> threads;
      for (int p = 0; p < producers; ++p) {
        threads.emplace_back([tx = tx, p, per_producer]() mutable {
          for (std::uint64_t i = 0; i < per_producer; ++i) {
            ASSERT_TRUE(tx.send(Tracked(static_cast<std::uint64_t>(p) << 32 | i)).ok());
          }
        });
      }
      { auto gone = std::move(tx); }
      std::vector<std::uint64_t> next(static_cast<std::size_t>(producers), 0);
      std::vector<Tracked> batch;
      while (rx.recv_many(batch, 8) > 0) {
        for (const Tracked& message : batch) {
          const std::uint64_t producer = message.value >> 32;
          ASSERT_EQ(message.value & 0xffffffffu, next[producer]);
          ++next[producer];
        }
        batch.clear();
      }
      for (auto& t : threads) t.join();
      for (auto count : next) EXPECT_EQ(count, per_producer);
    }
  }
  EXPECT_EQ(Tracked::live(), 0);
}

TEST_P(BaselineWaiting, SleepingSenderAndReceiverAreWokenAndTimeOut) {
  // A sender blocked on a full channel past any watching sleeps, and is
  // woken by the receive that frees a slot; a receiver likewise. The
  // deadlines bound a lost wake-up: with one, the test fails on kTimedOut
  // instead of hanging.
  auto tx_rx = tokio_style::channel<int>(1, GetParam());  // not bound: Clang 14 cannot capture
  auto& tx = tx_rx.first;                                 // a structured binding
  auto& rx = tx_rx.second;
  ASSERT_TRUE(tx.try_send(0).ok());
  std::thread sender([&tx] {
    EXPECT_TRUE(tx.send_for(1, std::chrono::seconds(60)).ok());
    EXPECT_TRUE(tx.send_for(2, std::chrono::seconds(60)).ok());
  });
  for (int expected = 0; expected < 3; ++expected) {
    EXPECT_EQ(rx.recv_for(std::chrono::seconds(60)).value(), expected);
  }
  sender.join();
  // Nothing comes: both sides time out and the channel stays usable.
  EXPECT_EQ(rx.recv_for(std::chrono::milliseconds(2)).status(), leanchan::RecvStatus::kTimedOut);
  ASSERT_TRUE(tx.try_send(3).ok());
  EXPECT_EQ(tx.send_for(4, std::chrono::milliseconds(2)).status(), leanchan::SendStatus::kTimedOut);
  EXPECT_EQ(rx.recv_for(std::chrono::seconds(60)).value(), 3);
}

INSTANTIATE_TEST_SUITE_P(Policies, BaselineWaiting,
                         ::testing::Values(tokio_style::Waiting::kWatchThenSleep,
                                           tokio_style::Waiting::kParkAtOnce),
                         [](const auto& param_info) {
                           return param_info.param == tokio_style::Waiting::kParkAtOnce
                                      ? std::string("ParkAtOnce")
                                      : std::string("WatchThenSleep");
                         });

TEST(Baseline, DroppingTheReceiverDestroysQueuedMessagesOnce) {
  Tracked::reset();
  {
    auto [tx, rx] = tokio_style::channel<Tracked>(40);
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(tx.send(Tracked(1)).ok());
    { auto gone = std::move(rx); }
    EXPECT_EQ(Tracked::live(), 0);
  }
  EXPECT_EQ(Tracked::live(), 0);
}

}  // namespace
