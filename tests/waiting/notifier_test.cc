// SPDX-License-Identifier: MIT
// Readiness notifiers (leanchan/notifier.h): one-shot, never lost, never
// running after clear/cancel returns, and free of allocation.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/profiler/heap_probe.h"
#include "test_support.h"

namespace {

using Counter = leanchan::testing::CallCounter;

// A receive notifier is declared before the channel it serves: it must
// outlive the Receiver it is attached to, whose destructor detaches it
// (destroyed while attached, it aborts with a message).

TEST(Notifier, ArmingReportsWhatIsAlreadyThere) {
  Counter counter;
  leanchan::Notifier notifier(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<int, 4>(8);
  rx.set_notifier(notifier);
  EXPECT_FALSE(rx.arm_notifier());  // empty: armed
  EXPECT_TRUE(rx.disarm_notifier());
  ASSERT_TRUE(tx.send(1).ok());
  EXPECT_TRUE(rx.arm_notifier());  // a message is there: not armed
  EXPECT_EQ(counter.calls.load(), 0);
}

TEST(Notifier, FiresOnceWhenAMessageArrives) {
  Counter counter;
  leanchan::Notifier notifier(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<int, 2>(8);
  rx.set_notifier(notifier);
  ASSERT_FALSE(rx.arm_notifier());
  ASSERT_TRUE(tx.send(1).ok());
  EXPECT_EQ(counter.calls.load(), 1);
  ASSERT_TRUE(tx.send(2).ok());
  EXPECT_EQ(counter.calls.load(), 1);  // one-shot
  EXPECT_EQ(rx.try_recv().value(), 1);
  EXPECT_TRUE(rx.arm_notifier());  // still one queued
  EXPECT_EQ(rx.try_recv().value(), 2);
  ASSERT_FALSE(rx.arm_notifier());
  auto permit = tx.reserve();
  permit.send(3);
  EXPECT_EQ(counter.calls.load(), 2);
}

TEST(Notifier, FiresWhenTheLastSenderLeaves) {
  Counter counter;
  leanchan::Notifier notifier(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<int>(8);
  rx.set_notifier(notifier);
  auto copy = tx;
  ASSERT_FALSE(rx.arm_notifier());
  { auto gone = std::move(tx); }
  EXPECT_EQ(counter.calls.load(), 0);  // a sender remains
  { auto gone = std::move(copy); }
  EXPECT_EQ(counter.calls.load(), 1);
  EXPECT_TRUE(rx.arm_notifier());  // ended: nothing to wait for
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kDisconnected);
}

TEST(Notifier, ClearedNotifierIsNeverCalled) {
  auto [tx, rx] = leanchan::channel<int>(8);
  Counter counter;
  {
    leanchan::Notifier notifier(&Counter::bump, &counter);
    rx.set_notifier(notifier);
    ASSERT_FALSE(rx.arm_notifier());
    rx.clear_notifier();
  }
  ASSERT_TRUE(tx.send(1).ok());
  EXPECT_EQ(counter.calls.load(), 0);
}

TEST(Notifier, BlockingReceiveDisarmsIt) {
  Counter counter;
  leanchan::Notifier notifier(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<int>(8);
  rx.set_notifier(notifier);
  ASSERT_FALSE(rx.arm_notifier());
  EXPECT_EQ(rx.recv_for(std::chrono::milliseconds(1)).status(), leanchan::RecvStatus::kTimedOut);
  ASSERT_TRUE(tx.send(1).ok());
  EXPECT_EQ(counter.calls.load(), 0);
}

TEST(Notifier, SendNotifierFiresWhenRoomAppearsOrTheChannelCloses) {
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  Counter counter;
  leanchan::Notifier notifier(&Counter::bump, &counter);
  EXPECT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kRoom);  // not armed
  ASSERT_TRUE(tx.send(1).ok());
  ASSERT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kArmed);
  EXPECT_EQ(counter.calls.load(), 0);
  ASSERT_TRUE(rx.recv().has_value());
  EXPECT_EQ(counter.calls.load(), 1);
  // The freed slot was handed to the notifier: nobody else can take it.
  EXPECT_EQ(tx.try_send(2).status(), leanchan::SendStatus::kFull);
  EXPECT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kHoldsSlot);  // not armed
  ASSERT_TRUE(tx.try_send(2, notifier).ok());                                  // redeemed
  ASSERT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kArmed);
  EXPECT_TRUE(tx.cancel_notify(notifier));  // not fired: cancelled
  ASSERT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kArmed);
  rx.close();
  EXPECT_EQ(counter.calls.load(), 2);
  EXPECT_FALSE(tx.cancel_notify(notifier));  // already fired
}

TEST(Notifier, AttachedAndArmedNotifiersAllocateNothing) {
  leanchan::profiler::HeapProbe probe;
  auto [tx, rx] = leanchan::channel<int, 4>(8);
  Counter counter;
  leanchan::Notifier receive(&Counter::bump, &counter);
  leanchan::Notifier room(&Counter::bump, &counter);
  rx.set_notifier(receive);
  ASSERT_FALSE(rx.arm_notifier());
  EXPECT_EQ(probe.live_bytes(), 64);  // an idle channel with an armed notifier
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(tx.send(i).ok());
  ASSERT_EQ(tx.notify_when_room(room), leanchan::RoomStatus::kArmed);
  const auto allocations = probe.allocations();
  ASSERT_TRUE(rx.try_recv().ok());
  EXPECT_EQ(counter.calls.load(), 2);
  EXPECT_EQ(probe.allocations(), allocations);
  EXPECT_FALSE(tx.cancel_notify(room));  // gives back the slot it was handed
  rx.clear_notifier();
}

// The lost-wakeup race: the consumer drains, arms, and waits only for the
// callback; producers race it. Every message must arrive (a lost wake-up
// would hang this test until its timeout).
template <std::size_t B>
void run_lost_wakeup_round(int producers, std::size_t capacity, int per_producer) {
  Counter counter;
  leanchan::Notifier notifier(&Counter::bump, &counter);
  auto [tx, rx] = leanchan::channel<std::uint64_t, B>(capacity);
  rx.set_notifier(notifier);
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([sender = tx, per_producer]() mutable {
      for (int i = 0; i < per_producer; ++i) ASSERT_TRUE(sender.send(1).ok());
    });
  }
  { auto gone = std::move(tx); }
  int received = 0;
  for (;;) {
    for (;;) {
      auto result = rx.try_recv();
      if (!result.ok()) {
        if (result.status() == leanchan::RecvStatus::kDisconnected) goto done;
        break;
      }
      ++received;
    }
    const int seen = counter.calls.load();
    if (rx.arm_notifier()) continue;
    counter.calls.wait(seen);  // no timeout: the callback must come
  }
done:
  for (auto& t : threads) t.join();
  EXPECT_EQ(received, producers * per_producer);
}

TEST(Notifier, NoWakeupIsLostWhileProducersRace) {
  const int per_producer = std::max(50, static_cast<int>(2000 * leanchan::testing::stress_scale()));
  for (int round = 0; round < 5; ++round) {
    for (std::size_t capacity : {1u, 4u, 64u}) {
      SCOPED_TRACE(::testing::Message() << "round " << round << " capacity " << capacity);
      run_lost_wakeup_round<1>(4, capacity, per_producer);
      run_lost_wakeup_round<8>(2, capacity, per_producer);
    }
  }
}

// The same race on the send side: a producer that only try_sends and waits
// for its room notifier.
TEST(Notifier, NoRoomNotificationIsLost) {
  const int total = std::max(100, static_cast<int>(20000 * leanchan::testing::stress_scale()));
  for (std::size_t capacity : {1u, 3u}) {
    auto tx_rx =
        leanchan::channel<int, 2>(capacity);  // not bound: Clang 14 cannot capture a binding
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    std::thread producer([&tx, total] {
      Counter counter;
      leanchan::Notifier notifier(&Counter::bump, &counter);
      for (int i = 0; i < total; ++i) {
        for (;;) {
          auto result = tx.try_send(i, notifier);  // uses a slot handed to it
          if (result.ok()) break;
          const int seen = counter.calls.load();
          if (tx.notify_when_room(notifier) != leanchan::RoomStatus::kArmed) continue;
          counter.calls.wait(seen);
        }
      }
      { auto gone = std::move(tx); }
    });
    int expected = 0;
    while (auto value = rx.recv()) {
      ASSERT_EQ(*value, expected);
      ++expected;
    }
    producer.join();
    EXPECT_EQ(expected, total);
  }
}

}  // namespace

namespace {

// notify_when_room says why it did not arm: a full channel whose notifier
// was handed the slot reports kHoldsSlot (a plain try_send keeps failing
// with kFull: the slot is reserved), a closed one kClosed, so a loop that
// waits only on kArmed never spins: it redeems, or it stops.
TEST(Notifier, NotifyWhenRoomSaysWhyItDidNotArm) {
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  Counter counter;
  leanchan::Notifier notifier(&Counter::bump, &counter);
  ASSERT_TRUE(tx.try_send(1).ok());
  ASSERT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kArmed);
  ASSERT_EQ(rx.try_recv().value(), 1);  // the slot goes to the notifier
  for (int attempt = 0; attempt < 3; ++attempt) {
    EXPECT_EQ(tx.try_send(2).status(), leanchan::SendStatus::kFull);
    EXPECT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kHoldsSlot);
  }
  ASSERT_TRUE(tx.try_send(2, notifier).ok());
  rx.close();
  EXPECT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kClosed);
  EXPECT_EQ(leanchan::to_string(leanchan::RoomStatus::kHoldsSlot), "holds a slot");
}

// Two producers run the loop notify_when_room documents into a
// one-slot channel until the receiver closes it: both end (the loop
// leaves on kClosed), and every message sent is received once.
TEST(Notifier, TheDocumentedSendLoopEndsWhenTheChannelCloses) {
  constexpr int kPerProducer = 500;
  auto tx_rx = leanchan::channel<int, 1>(1);
  auto& rx = tx_rx.second;
  std::atomic<int> sent{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([tx = tx_rx.first, &sent]() mutable {
      Counter counter;
      leanchan::Notifier notifier(&Counter::bump, &counter);
      for (int i = 0;; ++i) {
        int value = i;
        leanchan::RoomStatus room = leanchan::RoomStatus::kRoom;
        for (;;) {
          auto r = tx.try_send(std::move(value), notifier);
          if (r.ok()) {
            sent.fetch_add(1);
            break;
          }
          if (r.status() == leanchan::SendStatus::kClosed) return;
          value = std::move(r).value();
          const int seen = counter.calls.load();
          room = tx.notify_when_room(notifier);
          if (room == leanchan::RoomStatus::kArmed) counter.calls.wait(seen);
          if (room == leanchan::RoomStatus::kClosed) return;
        }
      }
    });
  }
  int received = 0;
  while (received < 2 * kPerProducer) {
    ASSERT_TRUE(rx.recv().has_value());
    ++received;
  }
  rx.close();
  while (rx.recv().has_value()) ++received;
  for (auto& producer : producers) producer.join();
  EXPECT_EQ(received, sent.load());
}

}  // namespace

namespace {

// A deliberate difference from Tokio (docs/differences.md): a slot handed
// to a send notifier before close() is the notifier's, and try_send(value,
// notifier) uses it after close(); the receiver gets that message, then
// the end. (Tokio's PollSender fails the re-poll after close.)
TEST(Notifier, ASlotHandedBeforeCloseIsRedeemableAfterIt) {
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  Counter counter;
  leanchan::Notifier notifier(&Counter::bump, &counter);
  ASSERT_TRUE(tx.try_send(1).ok());
  ASSERT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kArmed);
  ASSERT_EQ(rx.try_recv().value(), 1);  // hands the slot to the notifier
  rx.close();
  EXPECT_EQ(tx.try_send(2).status(), leanchan::SendStatus::kClosed);
  EXPECT_TRUE(tx.try_send(3, notifier).ok());
  EXPECT_EQ(rx.try_recv().value(), 3);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kDisconnected);
}

}  // namespace
