// SPDX-License-Identifier: MIT
// Every message is constructed once and destroyed exactly once, by whoever
// holds it last (leanchan/receiver.h): the receiver, the sender it was handed back to,
// or the channel's last handle.
#include <gtest/gtest.h>

#include <optional>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using leanchan::testing::Tracked;

class LifetimeTest : public ::testing::Test {
 protected:
  void SetUp() override { Tracked::reset(); }
  void TearDown() override { EXPECT_EQ(Tracked::live(), 0) << "a message leaked or died twice"; }
};

TEST_F(LifetimeTest, DropReceiverDestroysQueuedMessagesOnce) {
  auto [tx, rx] = leanchan::channel<Tracked, 2>(8);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(tx.send(Tracked(i)).ok());
  EXPECT_EQ(Tracked::live(), 5);  // the moved-from temporaries are gone already
  { auto gone = std::move(rx); }
  EXPECT_EQ(Tracked::live(), 0);  // destroyed by the receiver, sender still alive
  EXPECT_TRUE(tx.is_closed());
}

TEST_F(LifetimeTest, DroppingSendersKeepsQueuedMessagesForTheReceiver) {
  auto [tx, rx] = leanchan::channel<Tracked, 3>(8);
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(tx.send(Tracked(i)).ok());
  { auto gone = std::move(tx); }
  EXPECT_EQ(Tracked::live(), 7);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rx.recv()->value, static_cast<std::uint64_t>(i));
  EXPECT_EQ(Tracked::live(), 3);
  // The receiver's destruction takes care of the remaining three.
}

TEST_F(LifetimeTest, CloseThenDropDestroysQueuedMessagesOnce) {
  auto [tx, rx] = leanchan::channel<Tracked, 1>(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(tx.send(Tracked(i)).ok());
  rx.close();
  auto refused = tx.send(Tracked(99));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.value().value, 99u);
  EXPECT_EQ(Tracked::live(), 5);  // four queued + the one handed back
}

TEST_F(LifetimeTest, ChannelDestructionDestroysWhatAPermitSentAfterTheReceiverLeft) {
  auto [tx, rx] = leanchan::channel<Tracked, 4>(4);
  auto permit = tx.reserve();
  ASSERT_TRUE(tx.send(Tracked(1)).ok());
  { auto gone = std::move(rx); }
  EXPECT_EQ(Tracked::live(), 0);
  permit.send(Tracked(2));  // cannot fail; it waits in the channel...
  EXPECT_EQ(Tracked::live(), 1);
  { auto gone = std::move(tx); }  // ...until the last handle destroys it
  EXPECT_EQ(Tracked::live(), 0);
}

TEST_F(LifetimeTest, AWeakSenderOutlivingEverythingHoldsNoMessage) {
  std::optional<leanchan::WeakSender<Tracked, 2>> weak;
  {
    auto [tx, rx] = leanchan::channel<Tracked, 2>(4);
    ASSERT_TRUE(tx.send(Tracked(1)).ok());
    weak = tx.downgrade();
  }
  EXPECT_EQ(Tracked::live(), 0);
  EXPECT_FALSE(weak->upgrade().has_value());
}

TEST_F(LifetimeTest, ReceivedMessagesBelongToTheCaller) {
  auto [tx, rx] = leanchan::channel<Tracked, 2>(4);
  ASSERT_TRUE(tx.send(Tracked(1)).ok());
  ASSERT_TRUE(tx.send(Tracked(2)).ok());
  std::optional<Tracked> first = rx.recv();
  std::vector<Tracked> rest;
  EXPECT_EQ(rx.recv_many(rest, 4), 1u);
  EXPECT_EQ(Tracked::live(), 2);  // one in `first`, one in `rest`
  EXPECT_FALSE(first->moved_from);
}

TEST_F(LifetimeTest, ConcurrentSendersAndADroppedReceiverLoseNothingTwice) {
  for (int round = 0; round < 50; ++round) {
    auto [tx, rx] = leanchan::channel<Tracked, 3>(5);
    std::vector<std::thread> producers;
    std::atomic<int> handed_back{0};
    for (int p = 0; p < 3; ++p) {
      producers.emplace_back([&handed_back, tx = tx, p]() mutable {
        for (int i = 0; i < 200; ++i) {
          auto result = tx.send(Tracked(static_cast<std::uint64_t>(p * 1000 + i)));
          if (!result.ok()) handed_back.fetch_add(1);
        }
      });
    }
    { auto gone = std::move(tx); }
    int received = 0;
    for (int i = 0; i < 100; ++i) {
      if (rx.recv()) ++received;
    }
    { auto gone = std::move(rx); }
    for (auto& t : producers) t.join();
    EXPECT_EQ(received, 100);
    EXPECT_EQ(Tracked::live(), 0) << "round " << round;
  }
}

}  // namespace
