// SPDX-License-Identifier: MIT
// Every method of the channel contract (the headers under channel/include/leanchan/), including its
// error paths: full, closed, timed out, and the value handed back each time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "leanchan/channel.h"

namespace {

using namespace std::chrono_literals;
using leanchan::RecvStatus;
using leanchan::SendStatus;

TEST(ChannelApi, TrySendAndTryRecvRoundTrip) {
  auto [tx, rx] = leanchan::channel<int, 4>(8);
  EXPECT_EQ(rx.try_recv().status(), RecvStatus::kEmpty);
  ASSERT_TRUE(tx.try_send(7).ok());
  auto got = rx.try_recv();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value(), 7);
  EXPECT_EQ(rx.try_recv().status(), RecvStatus::kEmpty);
}

TEST(ChannelApi, TrySendOnFullChannelHandsTheValueBack) {
  auto [tx, rx] = leanchan::channel<std::string, 1>(2);
  ASSERT_TRUE(tx.try_send("a").ok());
  ASSERT_TRUE(tx.try_send("b").ok());
  auto full = tx.try_send("c");
  EXPECT_EQ(full.status(), SendStatus::kFull);
  EXPECT_EQ(full.value(), "c");
  EXPECT_EQ(*rx.recv(), "a");
  EXPECT_TRUE(tx.try_send(std::move(full).value()).ok());
  EXPECT_EQ(*rx.recv(), "b");
  EXPECT_EQ(*rx.recv(), "c");
}

TEST(ChannelApi, SendAfterReceiverDroppedIsClosedAndHandsTheValueBack) {
  auto [tx, rx] = leanchan::channel<std::string>(4);
  { auto gone = std::move(rx); }
  EXPECT_TRUE(tx.is_closed());
  auto sent = tx.send("x");
  EXPECT_EQ(sent.status(), SendStatus::kClosed);
  EXPECT_EQ(sent.value(), "x");
  auto tried = tx.try_send("y");
  EXPECT_EQ(tried.status(), SendStatus::kClosed);
  EXPECT_EQ(tried.value(), "y");
  auto timed = tx.send_for("z", 1s);
  EXPECT_EQ(timed.status(), SendStatus::kClosed);
  EXPECT_EQ(timed.value(), "z");
  EXPECT_EQ(tx.reserve().status(), SendStatus::kClosed);
  EXPECT_EQ(tx.try_reserve().status(), SendStatus::kClosed);
}

TEST(ChannelApi, CloseRefusesSendsButKeepsQueuedMessagesDeliverable) {
  auto [tx, rx] = leanchan::channel<int, 2>(8);
  ASSERT_TRUE(tx.send(1).ok());
  ASSERT_TRUE(tx.send(2).ok());
  rx.close();
  rx.close();  // idempotent
  EXPECT_TRUE(tx.is_closed());
  auto refused = tx.send(3);
  EXPECT_EQ(refused.status(), SendStatus::kClosed);
  EXPECT_EQ(refused.value(), 3);
  EXPECT_EQ(rx.recv(), std::optional<int>(1));
  EXPECT_EQ(rx.try_recv().value(), 2);
  EXPECT_EQ(rx.recv(), std::nullopt);  // the sender is alive, but closed + drained
  EXPECT_EQ(rx.try_recv().status(), RecvStatus::kDisconnected);
}

TEST(ChannelApi, SendForTimesOutOnAFullChannelAndHandsTheValueBack) {
  auto [tx, rx] = leanchan::channel<std::string, 1>(1);
  ASSERT_TRUE(tx.send("first").ok());
  auto late = tx.send_for("second", 5ms);
  EXPECT_EQ(late.status(), SendStatus::kTimedOut);
  EXPECT_EQ(late.value(), "second");
  auto past = tx.send_until("third", std::chrono::system_clock::now() - 1s);
  EXPECT_EQ(past.status(), SendStatus::kTimedOut);
  EXPECT_EQ(past.value(), "third");
  EXPECT_EQ(*rx.recv(), "first");
  EXPECT_TRUE(tx.send_for("fourth", 0s).ok());  // room now: no wait needed
}

TEST(ChannelApi, BlockedSendCompletesWhenTheReceiverMakesRoom) {
  auto tx_rx = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  ASSERT_TRUE(tx.send(1).ok());
  std::thread producer([&tx] {
    EXPECT_TRUE(tx.send(2).ok());
    EXPECT_TRUE(tx.send_until(3, std::chrono::steady_clock::now() + 60s).ok());
  });
  EXPECT_EQ(rx.recv(), std::optional<int>(1));
  EXPECT_EQ(rx.recv(), std::optional<int>(2));
  EXPECT_EQ(rx.recv(), std::optional<int>(3));
  producer.join();
}

TEST(ChannelApi, RecvForTimesOutWhileSendersRemain) {
  auto [tx, rx] = leanchan::channel<int>(4);
  EXPECT_EQ(rx.recv_for(5ms).status(), RecvStatus::kTimedOut);
  EXPECT_EQ(rx.recv_until(std::chrono::system_clock::now() - 1s).status(), RecvStatus::kTimedOut);
  ASSERT_TRUE(tx.send(5).ok());
  auto got = rx.recv_for(60s);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value(), 5);
}

TEST(ChannelApi, RecvForReportsDisconnectedOnceTheSendersAreGone) {
  auto [tx, rx] = leanchan::channel<int>(4);
  ASSERT_TRUE(tx.send(1).ok());
  { auto gone = std::move(tx); }
  EXPECT_EQ(rx.recv_for(60s).value(), 1);
  EXPECT_EQ(rx.recv_for(60s).status(), RecvStatus::kDisconnected);
  EXPECT_EQ(rx.recv(), std::nullopt);
}

TEST(ChannelApi, RecvWakesWhenTheLastSenderLeaves) {
  auto [tx, rx] = leanchan::channel<int>(4);
  std::thread leaver([tx = std::move(tx)]() mutable {
    ASSERT_TRUE(tx.send(9).ok());
    auto copy = tx;  // two senders; both leave at the end of this scope
  });
  EXPECT_EQ(rx.recv(), std::optional<int>(9));
  EXPECT_EQ(rx.recv(), std::nullopt);
  leaver.join();
}

TEST(ChannelApi, PermitSendCannotFailAndDropGivesTheSlotBack) {
  auto [tx, rx] = leanchan::channel<int, 2>(2);
  auto permit = tx.reserve();
  ASSERT_TRUE(permit);
  EXPECT_EQ(permit.status(), SendStatus::kOk);
  EXPECT_EQ(tx.capacity(), 1u);
  {
    auto second = tx.try_reserve();
    ASSERT_TRUE(second);
    EXPECT_EQ(tx.capacity(), 0u);
    auto third = tx.try_reserve();
    EXPECT_FALSE(third);
    EXPECT_EQ(third.status(), SendStatus::kFull);
    EXPECT_EQ(tx.try_send(1).status(), SendStatus::kFull);
  }  // `second` dropped unused: its slot comes back
  EXPECT_EQ(tx.capacity(), 1u);
  rx.close();  // a permit still delivers after close
  permit.send(42);
  EXPECT_FALSE(permit);
  EXPECT_EQ(rx.recv(), std::optional<int>(42));
  EXPECT_EQ(rx.recv(), std::nullopt);
}

TEST(ChannelApi, AnOutstandingPermitKeepsTheChannelOpen) {
  auto [tx, rx] = leanchan::channel<int>(4);
  auto permit = tx.reserve();
  { auto gone = std::move(tx); }
  EXPECT_EQ(rx.try_recv().status(), RecvStatus::kEmpty);  // not disconnected yet
  std::thread sender([permit = std::move(permit)]() mutable { permit.send(3); });
  EXPECT_EQ(rx.recv(), std::optional<int>(3));
  EXPECT_EQ(rx.recv(), std::nullopt);
  sender.join();
}

TEST(ChannelApi, DroppingTheLastPermitAfterCloseEndsTheChannel) {
  auto [tx, rx] = leanchan::channel<int>(4);
  auto permit = tx.reserve();
  rx.close();
  EXPECT_EQ(rx.try_recv().status(), RecvStatus::kEmpty);
  std::thread dropper([permit = std::move(permit)]() mutable { auto gone = std::move(permit); });
  EXPECT_EQ(rx.recv(), std::nullopt);
  dropper.join();
}

TEST(ChannelApi, BlockedReserveFailsWhenTheChannelCloses) {
  auto tx_rx = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  ASSERT_TRUE(tx.send(1).ok());
  std::thread waiter([&tx] {
    auto permit = tx.reserve();
    EXPECT_FALSE(permit);
    EXPECT_EQ(permit.status(), SendStatus::kClosed);
  });
  rx.close();
  waiter.join();
  EXPECT_EQ(rx.recv(), std::optional<int>(1));
}

TEST(ChannelApi, CapacityLenAndIsEmptyTrackTheQueue) {
  auto [tx, rx] = leanchan::channel<int, 4>(10);
  EXPECT_EQ(tx.max_capacity(), 10u);
  EXPECT_EQ(rx.max_capacity(), 10u);
  EXPECT_EQ(tx.capacity(), 10u);
  EXPECT_TRUE(rx.is_empty());
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(tx.send(i).ok());
  EXPECT_EQ(tx.capacity(), 4u);
  EXPECT_EQ(rx.len(), 6u);
  EXPECT_FALSE(rx.is_empty());
  (void)rx.recv();
  EXPECT_EQ(rx.len(), 5u);
  EXPECT_EQ(tx.capacity(), 5u);
  EXPECT_FALSE(tx.is_closed());
}

TEST(ChannelApi, SameChannelComparesTheUnderlyingChannel) {
  auto [tx, rx] = leanchan::channel<int>(1);
  auto [other, other_rx] = leanchan::channel<int>(1);
  auto copy = tx;
  EXPECT_TRUE(tx.same_channel(copy));
  EXPECT_FALSE(tx.same_channel(other));
}

TEST(ChannelApi, WeakSenderUpgradesOnlyWhileASenderLives) {
  auto [tx, rx] = leanchan::channel<int>(4);
  auto weak = tx.downgrade();
  auto weak_copy = weak;
  {
    auto strong = weak.upgrade();
    ASSERT_TRUE(strong.has_value());
    EXPECT_TRUE(strong->same_channel(tx));
    ASSERT_TRUE(strong->send(1).ok());
  }
  { auto gone = std::move(tx); }
  EXPECT_FALSE(weak.upgrade().has_value());
  EXPECT_FALSE(weak_copy.upgrade().has_value());
  EXPECT_EQ(rx.recv(), std::optional<int>(1));
  EXPECT_EQ(rx.recv(), std::nullopt);  // the weak senders do not keep it open
}

TEST(ChannelApi, RecvManyAppendsUpToTheLimit) {
  auto [tx, rx] = leanchan::channel<int, 3>(16);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(tx.send(i).ok());
  std::vector<int> out = {-1};
  EXPECT_EQ(rx.recv_many(out, 0), 0u);
  EXPECT_EQ(rx.recv_many(out, 4), 4u);
  EXPECT_EQ(out, (std::vector<int>{-1, 0, 1, 2, 3}));
  EXPECT_EQ(rx.recv_many(out, 100), 6u);
  EXPECT_EQ(out.size(), 11u);
  EXPECT_EQ(out.back(), 9);
  { auto gone = std::move(tx); }
  EXPECT_EQ(rx.recv_many(out, 100), 0u);  // ended
}

// A vector that collects across many calls grows geometrically, as with
// push_back: 4,096 messages taken one call at a time reallocate it about
// log2(4,096) times, not once a call (recv_many grew it by the call's
// limit, copying it whole each time: quadratic). A small first call still
// reserves no more than its limit.
TEST(ChannelApi, RecvManyGrowsACollectingVectorGeometrically) {
  constexpr int kMessages = 4096;
  auto [tx, rx] = leanchan::channel<int>(64);
  std::vector<int> out;
  int reallocations = 0;
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(tx.try_send(int{i}).ok());
    const std::size_t before = out.capacity();
    ASSERT_EQ(rx.recv_many(out, 1), 1u);
    if (out.capacity() != before) ++reallocations;
  }
  ASSERT_EQ(out.size(), static_cast<std::size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], i);
  // 1, 2, ..., 8 one at a time, then 16, 32, ..., 4,096: 8 + 9.
  EXPECT_LE(reallocations, 17);
  std::vector<int> small;
  ASSERT_TRUE(tx.try_send(1).ok());
  ASSERT_EQ(rx.recv_many(small, 3), 1u);
  EXPECT_EQ(small.capacity(), 3u);
}

TEST(ChannelApi, MoveOnlyMessagesWork) {
  auto [tx, rx] = leanchan::channel<std::unique_ptr<int>, 2>(3);
  ASSERT_TRUE(tx.send(std::make_unique<int>(1)).ok());
  ASSERT_TRUE(tx.send(std::make_unique<int>(2)).ok());
  ASSERT_TRUE(tx.send(std::make_unique<int>(3)).ok());
  auto back = tx.try_send(std::make_unique<int>(4));
  ASSERT_EQ(back.status(), SendStatus::kFull);
  EXPECT_EQ(*back.value(), 4);
  EXPECT_EQ(**rx.recv(), 1);
  EXPECT_EQ(*rx.try_recv().value(), 2);
  std::vector<std::unique_ptr<int>> many;
  EXPECT_EQ(rx.recv_many(many, 5), 1u);
  EXPECT_EQ(*many[0], 3);
}

TEST(ChannelApi, MessagesWithoutDefaultConstructorWork) {
  struct NoDefault {
    explicit NoDefault(int v) : value(v) {}
    int value;
  };
  auto [tx, rx] = leanchan::channel<NoDefault, 1>(1);
  ASSERT_TRUE(tx.send(NoDefault(5)).ok());
  EXPECT_EQ(rx.recv()->value, 5);
}

TEST(ChannelApi, OverAlignedMessagesAreAligned) {
  struct alignas(64) Wide {
    int value;
  };
  auto [tx, rx] = leanchan::channel<Wide, 3>(8);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(tx.send(Wide{i}).ok());
  for (int i = 0; i < 8; ++i) {
    auto got = rx.recv();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->value, i);
  }
}

TEST(ChannelApi, CapacityZeroIsRejectedWithAClearMessage) {
  try {
    (void)leanchan::channel<int>(0);
    FAIL() << "capacity 0 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "leanchan::channel: capacity must be at least 1, got 0");
  }
}

TEST(ChannelApi, CapacityAboveTheMaximumIsRejectedWithAClearMessage) {
  try {
    (void)leanchan::channel<int>(leanchan::kMaxCapacity + 1);
    FAIL() << "an oversized capacity was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()),
              "leanchan::channel: capacity 16777217 exceeds leanchan::kMaxCapacity (16777216)");
  }
  auto [tx, rx] = leanchan::channel<int>(leanchan::kMaxCapacity);  // the maximum itself is fine
  EXPECT_EQ(tx.max_capacity(), leanchan::kMaxCapacity);
}

TEST(ChannelApi, DefaultBlockSizeFollowsTheDocumentedFormula) {
  // bit_floor(clamp(4096 / sizeof(T), 1, 32)): at most a page of slots.
  EXPECT_EQ(leanchan::default_block_size<std::uint64_t>, 32u);
  EXPECT_EQ((leanchan::default_block_size<std::array<char, 24>>), 32u);
  EXPECT_EQ((leanchan::default_block_size<std::array<char, 128>>), 32u);
  EXPECT_EQ((leanchan::default_block_size<std::array<char, 250>>), 16u);
  EXPECT_EQ((leanchan::default_block_size<std::array<char, 1024>>), 4u);
  EXPECT_EQ((leanchan::default_block_size<std::array<char, 4096>>), 1u);
  EXPECT_EQ((leanchan::default_block_size<std::array<char, 8192>>), 1u);
}

TEST(ChannelApi, StatusesHaveNames) {
  EXPECT_EQ(leanchan::to_string(SendStatus::kFull), "full");
  EXPECT_EQ(leanchan::to_string(SendStatus::kClosed), "closed");
  EXPECT_EQ(leanchan::to_string(SendStatus::kTimedOut), "timed out");
  EXPECT_EQ(leanchan::to_string(SendStatus::kNoMemory), "no memory");
  EXPECT_EQ(leanchan::to_string(RecvStatus::kEmpty), "empty");
  EXPECT_EQ(leanchan::to_string(RecvStatus::kDisconnected), "disconnected");
}

}  // namespace

namespace {

TEST(ChannelApi, MoveAssigningAReceiverClosesTheChannelItHeld) {
  auto [tx_a, rx_a] = leanchan::channel<int>(4);
  auto [tx_b, rx_b] = leanchan::channel<int>(4);
  ASSERT_TRUE(tx_b.send(2).ok());
  rx_a = std::move(rx_b);  // channel a loses its receiver: closed
  EXPECT_TRUE(tx_a.is_closed());
  EXPECT_EQ(tx_a.send(1).status(), leanchan::SendStatus::kClosed);
  EXPECT_EQ(rx_a.recv(), std::optional<int>(2));  // channel b's message
}

TEST(ChannelApi, CopyAssigningASenderMovesItToTheOtherChannel) {
  auto [tx_a, rx_a] = leanchan::channel<int>(4);
  auto [tx_b, rx_b] = leanchan::channel<int>(4);
  auto extra = tx_a;
  extra = tx_b;  // channel a keeps tx_a; extra now feeds b
  EXPECT_TRUE(extra.same_channel(tx_b));
  { auto gone = std::move(tx_b); }
  ASSERT_TRUE(extra.send(5).ok());
  { auto gone = std::move(extra); }
  EXPECT_EQ(rx_b.recv(), std::optional<int>(5));
  EXPECT_EQ(rx_b.recv(), std::nullopt);  // b's last sender went with `extra`
  EXPECT_EQ(rx_a.try_recv().status(), leanchan::RecvStatus::kEmpty);  // a still open
}

TEST(ChannelApi, MemoryUsageIsTheSameFromEitherEnd) {
  auto [tx, rx] = leanchan::channel<std::uint64_t, 4>(16);
  EXPECT_EQ(tx.memory_usage(), 64u);
  for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(tx.send(i).ok());
  EXPECT_EQ(tx.memory_usage(), rx.memory_usage());
  EXPECT_EQ(rx.memory_usage(), 64u + 2 * (16 + 4 * 8));  // ceil(6/4) blocks
}

}  // namespace
