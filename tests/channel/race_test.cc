// SPDX-License-Identifier: MIT
// Races on close and drop: each scenario repeats many rounds, ends on its
// own (no sleep synchronizes anything), and accounts for every message.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using leanchan::testing::Tracked;
using namespace std::chrono_literals;

int rounds(int base) {
  return std::max(1, static_cast<int>(base * leanchan::testing::stress_scale()));
}

class RaceTest : public ::testing::Test {
 protected:
  void SetUp() override { Tracked::reset(); }
  void TearDown() override { EXPECT_EQ(Tracked::live(), 0); }
};

// Producers keep sending while the receiver takes a few and is destroyed:
// every message is received, handed back, or destroyed by the channel, once.
TEST_F(RaceTest, SendsRaceTheReceiversDestruction) {
  for (int round = 0; round < rounds(200); ++round) {
    auto [tx, rx] = leanchan::channel<Tracked, 2>(3);
    std::atomic<int> accepted{0};
    std::atomic<int> refused{0};
    std::vector<std::thread> producers;
    for (int p = 0; p < 4; ++p) {
      producers.emplace_back([&, tx = tx]() mutable {
        for (int i = 0; i < 50; ++i) {
          auto result = (i % 2 == 0) ? tx.send(Tracked(1)) : tx.try_send(Tracked(1));
          if (result.ok()) {
            accepted.fetch_add(1);
          } else {
            ASSERT_NE(result.status(), leanchan::SendStatus::kTimedOut);
            ASSERT_FALSE(result.value().moved_from);  // handed back intact
            refused.fetch_add(1);
          }
        }
      });
    }
    { auto gone = std::move(tx); }
    for (int i = 0; i < round % 20; ++i) ASSERT_TRUE(rx.recv().has_value());
    { auto gone = std::move(rx); }
    for (auto& t : producers) t.join();
    EXPECT_EQ(accepted.load() + refused.load(), 200) << "round " << round;
    EXPECT_EQ(Tracked::live(), 0) << "round " << round;
  }
}

// Senders sleep on a full channel; close() wakes every one of them with
// kClosed, and what was queued before stays deliverable.
TEST_F(RaceTest, CloseWakesEveryBlockedSender) {
  for (int round = 0; round < rounds(200); ++round) {
    auto [tx, rx] = leanchan::channel<Tracked, 1>(1);
    std::atomic<int> sent{0};
    std::atomic<int> closed{0};
    std::vector<std::thread> producers;
    for (int p = 0; p < 4; ++p) {
      producers.emplace_back([&, tx = tx]() mutable {
        for (int i = 0; i < 10; ++i) {
          auto result = tx.send(Tracked(1));
          (result.ok() ? sent : closed).fetch_add(1);
        }
      });
    }
    int received = 0;
    for (int i = 0; i < round % 8; ++i) {
      ASSERT_TRUE(rx.recv().has_value());
      ++received;
    }
    rx.close();
    for (auto& t : producers) t.join();
    while (rx.recv()) ++received;
    EXPECT_EQ(received, sent.load());
    EXPECT_EQ(sent.load() + closed.load(), 40);
  }
}

// The receiver sleeps in recv() while the last sender leaves: it must wake
// and see the end after exactly the messages sent.
TEST_F(RaceTest, LastSenderDropWakesABlockedRecv) {
  for (int round = 0; round < rounds(500); ++round) {
    auto tx_rx = leanchan::channel<Tracked, 4>(8);  // not bound: Clang 14 cannot capture a binding
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    const int to_send = round % 5;
    std::thread receiver([&rx, to_send] {
      int received = 0;
      while (rx.recv()) ++received;
      EXPECT_EQ(received, to_send);
    });
    std::thread producer([tx = std::move(tx), to_send]() mutable {
      for (int i = 0; i < to_send; ++i) ASSERT_TRUE(tx.send(Tracked(1)).ok());
    });
    producer.join();
    receiver.join();
  }
}

// A weak sender upgrading while the last strong sender leaves either gets a
// sender (and its message arrives) or gets nothing; the receiver always ends.
TEST_F(RaceTest, UpgradeRacesTheLastSendersDrop) {
  for (int round = 0; round < rounds(500); ++round) {
    auto [tx, rx] = leanchan::channel<Tracked, 2>(4);
    auto weak = tx.downgrade();
    std::atomic<bool> upgraded{false};
    std::thread upgrader([&weak, &upgraded] {
      if (auto strong = weak.upgrade()) {
        upgraded = true;
        ASSERT_TRUE(strong->send(Tracked(7)).ok());
      }
    });
    std::thread dropper([tx = std::move(tx)]() mutable { auto gone = std::move(tx); });
    int received = 0;
    while (rx.recv()) ++received;
    upgrader.join();
    dropper.join();
    EXPECT_EQ(received, upgraded.load() ? 1 : 0);
  }
}

// Timed and blocking senders on a capacity-1 channel: a wake handed to a
// sender that timed out must not strand the others (this would hang).
TEST_F(RaceTest, TimedOutSendersDoNotLoseWakeups) {
  auto [tx, rx] = leanchan::channel<Tracked, 1>(1);
  const int per_producer = std::max(10, rounds(2000));
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&, tx = tx, p]() mutable {
      for (int i = 0; i < per_producer; ++i) {
        if (p % 2 == 0) {
          ASSERT_TRUE(tx.send(Tracked(1)).ok());
        } else {
          std::optional<Tracked> carry(Tracked(1));
          for (;;) {
            auto result = tx.send_for(std::move(*carry), 20us);
            carry.reset();
            if (result.ok()) break;
            ASSERT_EQ(result.status(), leanchan::SendStatus::kTimedOut);
            carry.emplace(std::move(result).value());
          }
        }
      }
    });
  }
  { auto gone = std::move(tx); }
  int received = 0;
  while (rx.recv()) ++received;
  for (auto& t : producers) t.join();
  EXPECT_EQ(received, 4 * per_producer);
}

// A receiver that sleeps with a deadline while messages trickle in from
// several producers sees all of them (the announce / re-check / sleep step).
TEST_F(RaceTest, TimedReceiveSeesEveryMessage) {
  auto [tx, rx] = leanchan::channel<Tracked, 3>(2);
  const int per_producer = std::max(10, rounds(3000));
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&, tx = tx]() mutable {
      for (int i = 0; i < per_producer; ++i) ASSERT_TRUE(tx.send(Tracked(1)).ok());
    });
  }
  { auto gone = std::move(tx); }
  int received = 0;
  for (;;) {
    auto result = rx.recv_for(100us);
    if (result.ok()) {
      ++received;
    } else if (result.status() == leanchan::RecvStatus::kDisconnected) {
      break;
    }
  }
  for (auto& t : producers) t.join();
  EXPECT_EQ(received, 3 * per_producer);
}

}  // namespace
