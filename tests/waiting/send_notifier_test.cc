// SPDX-License-Identifier: MIT
// Send notifiers that carry their value (leanchan::SendNotifier): the
// thread that frees a slot moves the value in before calling back; a sent
// value is reported once; close, cancellation and a refused block leave
// the value to its owner; FIFO with the other waiting senders.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using leanchan::SendNotifier;
using leanchan::SendStatus;
using leanchan::testing::Tracked;

using Counter = leanchan::testing::CallCounter;

TEST(SendNotifier, SendsAtOnceWhenThereIsRoom) {
  Counter counter;
  SendNotifier notifier(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<std::unique_ptr<int>>(2);
  auto value = std::make_unique<int>(7);
  EXPECT_EQ(tx.send_or_notify(value, notifier), SendStatus::kOk);
  EXPECT_EQ(value, nullptr);  // moved into the channel
  EXPECT_EQ(*rx.try_recv().value(), 7);
  EXPECT_EQ(counter.calls.load(), 0);
}

TEST(SendNotifier, TheThreadThatFreesTheSlotMovesTheValueIn) {
  Counter counter;
  SendNotifier notifier(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<std::unique_ptr<int>>(1);
  ASSERT_TRUE(tx.try_send(std::make_unique<int>(0)).ok());  // full
  auto value = std::make_unique<int>(1);
  ASSERT_EQ(tx.send_or_notify(value, notifier), SendStatus::kFull);
  ASSERT_NE(value, nullptr);  // lent to the channel, not taken
  EXPECT_EQ(*value, 1);
  EXPECT_EQ(*rx.try_recv().value(), 0);  // frees the slot: 1 goes in, then the callback
  EXPECT_EQ(counter.calls.load(), 1);
  EXPECT_EQ(value, nullptr);
  EXPECT_EQ(*rx.try_recv().value(), 1);  // there before the owner looked
  // The owner looks: sent, once.
  auto next = std::make_unique<int>(2);
  EXPECT_EQ(tx.send_or_notify(value, notifier), SendStatus::kOk);
  EXPECT_EQ(tx.send_or_notify(next, notifier), SendStatus::kOk);  // a new send, with room
  EXPECT_EQ(next, nullptr);
  EXPECT_EQ(*rx.try_recv().value(), 2);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(tx.capacity(), 0u + tx.max_capacity());
}

TEST(SendNotifier, WaitsInLineWithTheOtherWaitingSenders) {
  Counter first_calls;
  Counter third_calls;
  Counter plain_calls;
  SendNotifier first(&Counter::bump, &first_calls);
  leanchan::Notifier plain(&Counter::bump, &plain_calls);
  SendNotifier third(&Counter::bump, &third_calls);
  auto [tx, rx] = leanchan::channel<int>(1);
  ASSERT_TRUE(tx.try_send(0).ok());
  int a = 1;
  int c = 3;
  ASSERT_EQ(tx.send_or_notify(a, first), SendStatus::kFull);
  ASSERT_EQ(tx.notify_when_room(plain), leanchan::RoomStatus::kArmed);
  ASSERT_EQ(tx.send_or_notify(c, third), SendStatus::kFull);
  EXPECT_EQ(rx.try_recv().value(), 0);  // the slot to `first`, filled
  EXPECT_EQ(rx.try_recv().value(), 1);  // the slot to `plain`: held, not filled
  EXPECT_EQ(plain_calls.calls.load(), 1);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(third_calls.calls.load(), 0);
  EXPECT_TRUE(tx.try_send(2, plain).ok());  // redeems it
  EXPECT_EQ(rx.try_recv().value(), 2);      // the slot to `third`, filled
  EXPECT_EQ(rx.try_recv().value(), 3);
  EXPECT_EQ(tx.send_or_notify(a, first), SendStatus::kOk);
  EXPECT_EQ(tx.send_or_notify(c, third), SendStatus::kOk);
}

TEST(SendNotifier, CloseCallsItWithoutSending) {
  Counter counter;
  SendNotifier notifier(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<std::unique_ptr<int>>(1);
  ASSERT_TRUE(tx.try_send(std::make_unique<int>(0)).ok());
  auto value = std::make_unique<int>(1);
  ASSERT_EQ(tx.send_or_notify(value, notifier), SendStatus::kFull);
  rx.close();
  EXPECT_EQ(counter.calls.load(), 1);
  EXPECT_EQ(tx.send_or_notify(value, notifier), SendStatus::kClosed);
  ASSERT_NE(value, nullptr);  // still the owner's
  EXPECT_EQ(*value, 1);
  EXPECT_EQ(*rx.try_recv().value(), 0);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kDisconnected);
}

TEST(SendNotifier, CancelSaysWhetherTheValueWentIn) {
  Counter counter;
  SendNotifier notifier(&Counter::bump, &counter);
  SendNotifier behind(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<std::unique_ptr<int>>(1);
  ASSERT_TRUE(tx.try_send(std::make_unique<int>(0)).ok());
  auto value = std::make_unique<int>(1);
  auto other = std::make_unique<int>(2);
  ASSERT_EQ(tx.send_or_notify(value, notifier), SendStatus::kFull);
  ASSERT_EQ(tx.send_or_notify(other, behind), SendStatus::kFull);
  EXPECT_FALSE(tx.cancel_notify(notifier));  // queued: withdrawn, the value kept
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(*rx.try_recv().value(), 0);  // the slot goes to the one behind
  EXPECT_EQ(*rx.try_recv().value(), 2);
  EXPECT_TRUE(tx.cancel_notify(behind));   // its value went in first
  EXPECT_FALSE(tx.cancel_notify(behind));  // reported once
  EXPECT_EQ(counter.calls.load(), 1);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(tx.capacity(), tx.max_capacity());
}

TEST(SendNotifier, ABlockRefusedAtTheHandOffLeavesTheSlotAndTheValueToItsOwner) {
  leanchan::testing::FailingResource memory;
  Counter counter;
  SendNotifier notifier(&Counter::bump, &counter);
  Tracked::reset();
  {
    // kKeepNone: the receive that frees the slot frees its block too, so
    // the hand-off needs a new one.
    auto [tx, rx] = leanchan::channel<Tracked>(
        1, {.retention = leanchan::Retention::kKeepNone, .memory = &memory});
    ASSERT_TRUE(tx.try_send(Tracked(0)).ok());
    Tracked value(1);
    ASSERT_EQ(tx.send_or_notify(value, notifier), SendStatus::kFull);
    memory.fail = true;
    EXPECT_EQ(rx.try_recv().value().value, 0u);
    EXPECT_EQ(counter.calls.load(), 1);
    EXPECT_FALSE(value.moved_from);
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
    // The slot is the owner's now; its block is still refused.
    EXPECT_EQ(tx.send_or_notify(value, notifier), SendStatus::kNoMemory);
    EXPECT_FALSE(value.moved_from);
    EXPECT_EQ(tx.capacity(), tx.max_capacity());  // the slot went back
    memory.fail = false;
    EXPECT_EQ(tx.send_or_notify(value, notifier), SendStatus::kOk);
    EXPECT_TRUE(value.moved_from);
    EXPECT_EQ(rx.try_recv().value().value, 1u);
  }
  EXPECT_EQ(Tracked::live(), 0);
}

// Producers that send only through SendNotifiers (a callback sets a flag
// the producer waits on): every message exactly once, each producer's in
// order, no wake-up lost.
TEST(SendNotifier, ProducersRacingTheReceiverLoseNothing) {
  constexpr int kProducers = 4;
  constexpr std::uint64_t kPerProducer = 20000;
  auto [tx, rx] = leanchan::channel<std::uint64_t, 4>(2);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([tx = tx, p]() mutable {
      Counter fired;
      SendNotifier notifier(&Counter::bump, &fired);
      for (std::uint64_t i = 0; i < kPerProducer; ++i) {
        std::uint64_t value = (static_cast<std::uint64_t>(p) << 32) | i;
        for (;;) {
          const int seen = fired.calls.load();
          const SendStatus status = tx.send_or_notify(value, notifier);
          if (status == SendStatus::kOk) break;
          ASSERT_EQ(status, SendStatus::kFull);
          fired.calls.wait(seen);  // the callback comes: the value went in, or not yet
        }
      }
    });
  }
  std::vector<std::uint64_t> next(kProducers, 0);
  for (std::uint64_t received = 0; received < kProducers * kPerProducer; ++received) {
    const std::uint64_t value = rx.recv().value();
    const auto producer = static_cast<std::size_t>(value >> 32);
    ASSERT_LT(producer, next.size());
    ASSERT_EQ(value & 0xffffffffu, next[producer]) << "producer " << producer;
    ++next[producer];
  }
  for (auto& t : producers) t.join();
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
}

// As above, with producers that give up on some waits (cancel_notify):
// a cancelled send is either in the channel (cancel_notify said so) or
// still its owner's, never both, never neither.
TEST(SendNotifier, CancelRacingTheHandOffSaysTheTruth) {
  constexpr int kProducers = 3;
  constexpr std::uint64_t kPerProducer = 20000;
  auto [tx, rx] = leanchan::channel<std::uint64_t, 4>(1);
  std::atomic<std::uint64_t> sent{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([tx = tx, p, &sent]() mutable {
      Counter fired;
      SendNotifier notifier(&Counter::bump, &fired);
      std::uint64_t mine = 0;
      for (std::uint64_t i = 0; i < kPerProducer; ++i) {
        std::uint64_t value = (static_cast<std::uint64_t>(p) << 32) | i;
        const SendStatus status = tx.send_or_notify(value, notifier);
        ASSERT_TRUE(status == SendStatus::kOk || status == SendStatus::kFull);
        if (status == SendStatus::kOk || tx.cancel_notify(notifier)) ++mine;
      }
      sent.fetch_add(mine);
    });
  }
  std::uint64_t received = 0;
  std::vector<std::uint64_t> last(kProducers, 0);
  // Until every producer is done and gone: then recv() ends.
  { auto drop = std::move(tx); }
  while (std::optional<std::uint64_t> value = rx.recv()) {
    const auto producer = static_cast<std::size_t>(*value >> 32);
    ASSERT_LT(producer, last.size());
    const std::uint64_t index = (*value & 0xffffffffu) + 1;
    ASSERT_GT(index, last[producer]) << "producer " << producer;  // in order, once
    last[producer] = index;
    ++received;
  }
  for (auto& t : producers) t.join();
  EXPECT_EQ(received, sent.load());
}

void destroy_a_queued_send_notifier() {
  auto [tx, rx] = leanchan::channel<int>(1);
  (void)tx.try_send(0);
  int value = 1;
  auto notifier = std::make_unique<SendNotifier>([](void*) {}, nullptr);
  (void)tx.send_or_notify(value, *notifier);
  notifier.reset();
}

TEST(SendNotifierDeathTest, DestroyingAQueuedOneAbortsWithAMessage) {
  EXPECT_DEATH(destroy_a_queued_send_notifier(), "leanchan: SendNotifier destroyed while queued");
}

void look_through_another_channel_or_value(bool other_channel) {
  auto [tx, rx] = leanchan::channel<int>(1);
  auto [tx2, rx2] = leanchan::channel<int>(1);
  (void)tx.try_send(0);
  int value = 1;
  int other = 2;
  SendNotifier notifier([](void*) {}, nullptr);
  (void)tx.send_or_notify(value, notifier);
  if (other_channel) {
    (void)tx2.send_or_notify(value, notifier);
  } else {
    (void)tx.send_or_notify(other, notifier);
  }
}

TEST(SendNotifierDeathTest, LookingThroughAnotherChannelOrValueAbortsWithAMessage) {
  EXPECT_DEATH(look_through_another_channel_or_value(true),
               "leanchan: send_or_notify with a SendNotifier queued");
  EXPECT_DEATH(look_through_another_channel_or_value(false),
               "leanchan: send_or_notify with a SendNotifier queued");
}

}  // namespace
