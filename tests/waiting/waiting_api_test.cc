// SPDX-License-Identifier: MIT
// The API that rides on the waiter queue: reserve_many / try_reserve_many,
// closed() and its timed and awaitable forms, strong and weak counts,
// Receiver::is_closed, async_reserve and async_recv_many; and the queue's
// guarantees for blocked threads: FIFO hand-off, a timed-out waiter passing
// its partial grant on, and the slots all coming back.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <coroutine>
#include <exception>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using namespace std::chrono_literals;
using leanchan::SendStatus;
using leanchan::testing::Task;

TEST(ReserveMany, TakesAllOrNothingAndGivesBackWhatIsUnused) {
  auto [tx, rx] = leanchan::channel<int, 2>(4);
  ASSERT_TRUE(tx.try_send(0).ok());
  EXPECT_EQ(tx.try_reserve_many(4).status(), SendStatus::kFull);  // 3 free: none taken
  EXPECT_EQ(tx.capacity(), 3u);
  {
    auto batch = tx.try_reserve_many(3);
    ASSERT_EQ(batch.status(), SendStatus::kOk);
    EXPECT_EQ(batch.size(), 3u);
    EXPECT_EQ(tx.capacity(), 0u);
    EXPECT_EQ(tx.strong_count(), 2u);  // the batch keeps the channel open
    batch.send(1);
    EXPECT_EQ(batch.size(), 2u);
  }  // two unused slots come back
  EXPECT_EQ(tx.capacity(), 2u);
  EXPECT_EQ(tx.strong_count(), 1u);
  EXPECT_EQ(rx.try_recv().value(), 0);
  EXPECT_EQ(rx.try_recv().value(), 1);
  EXPECT_EQ(tx.capacity(), 4u);
}

TEST(ReserveMany, MoreThanTheCapacityFailsAtOnceAndZeroSucceeds) {
  auto [tx, rx] = leanchan::channel<int>(4);
  EXPECT_EQ(tx.reserve_many(5).status(), SendStatus::kExceedsCapacity);
  EXPECT_EQ(tx.try_reserve_many(5).status(), SendStatus::kExceedsCapacity);
  EXPECT_EQ(leanchan::to_string(SendStatus::kExceedsCapacity), "exceeds capacity");
  auto none = tx.reserve_many(0);
  EXPECT_EQ(none.status(), SendStatus::kOk);
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(tx.capacity(), 4u);
}

TEST(ReserveMany, WaitsForAllItsSlotsInOrder) {
  auto [tx, rx] = leanchan::channel<int, 1>(3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tx.try_send(i).ok());
  std::atomic<bool> reserved{false};
  std::thread waiter([sender = tx, &reserved]() mutable {
    auto batch = sender.reserve_many(3);
    ASSERT_EQ(batch.status(), SendStatus::kOk);
    reserved = true;
    for (int i = 10; i < 13; ++i) batch.send(i);
  });
  // Each message taken is collected by the waiter (first in line); nobody
  // else can take one meanwhile.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rx.recv().value(), i);
  }
  for (int i = 10; i < 13; ++i) EXPECT_EQ(rx.recv().value(), i);
  waiter.join();
  EXPECT_TRUE(reserved.load());
  EXPECT_EQ(tx.capacity(), 3u);
}

// A waiter that wanted several slots and gives up with some of them passes
// those on to the next waiter: nothing is lost, nothing leaks.
TEST(ReserveMany, TimedOutWaiterPassesItsPartialGrantOn) {
  auto [tx, rx] = leanchan::channel<int, 1>(2);
  ASSERT_TRUE(tx.try_send(0).ok());
  ASSERT_TRUE(tx.try_send(1).ok());
  // Two permits are out of reach for a time-limited reserve of 2 slots when
  // only one message is ever taken: it collects one slot, then times out.
  leanchan::Sender<int, 1> other = tx;
  std::thread big([sender = tx]() mutable {
    auto result = sender.send_for(99, 24h);  // behind the batch: served after it gives up
    EXPECT_TRUE(result.ok());
  });
  // The batch waits first; the single send behind it.
  EXPECT_EQ(rx.recv().value(), 0);  // one slot: handed to whoever is first
  EXPECT_EQ(rx.recv().value(), 1);
  EXPECT_EQ(rx.recv().value(), 99);
  big.join();
  EXPECT_EQ(tx.capacity(), 2u);
}

TEST(Closed, ClosedReturnsWhenTheReceiverClosesOrGoes) {
  auto [tx, rx] = leanchan::channel<int>(2);
  EXPECT_FALSE(tx.closed_for(1ms));  // open: times out
  std::thread watcher([sender = tx]() mutable { sender.closed(); });
  std::thread timed([sender = tx]() mutable { EXPECT_TRUE(sender.closed_for(24h)); });
  rx.close();
  watcher.join();
  timed.join();
  EXPECT_TRUE(tx.closed_for(0ms));  // closed already: true at once
  EXPECT_TRUE(tx.closed_until(std::chrono::steady_clock::now()));

  auto [tx2, rx2] = leanchan::channel<int>(2);
  std::thread watcher2([sender = tx2]() mutable { sender.closed(); });
  { auto gone = std::move(rx2); }
  watcher2.join();
  EXPECT_TRUE(tx2.is_closed());
}

TEST(Closed, ManyWatchersAndASendWaiterAllWake) {
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(0).ok());
  std::vector<std::thread> threads;
  std::atomic<int> woken{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([sender = tx, &woken]() mutable {
      sender.closed();
      woken.fetch_add(1);
    });
  }
  threads.emplace_back([sender = tx, &woken]() mutable {
    EXPECT_EQ(sender.send(1).status(), SendStatus::kClosed);
    woken.fetch_add(1);
  });
  rx.close();
  for (auto& t : threads) t.join();
  EXPECT_EQ(woken.load(), 7);
  EXPECT_EQ(rx.recv().value(), 0);  // queued messages stay deliverable
  EXPECT_FALSE(rx.recv().has_value());
}

TEST(Counts, StrongAndWeakCountsFollowTheHandles) {
  auto [tx, rx] = leanchan::channel<int>(4);
  EXPECT_EQ(tx.strong_count(), 1u);
  EXPECT_EQ(tx.weak_count(), 0u);
  auto copy = tx;
  auto weak = tx.downgrade();
  auto weak2 = weak;
  EXPECT_EQ(tx.strong_count(), 2u);
  EXPECT_EQ(tx.weak_count(), 2u);
  {
    auto permit = tx.reserve();
    EXPECT_EQ(tx.strong_count(), 3u);  // a permit keeps the channel open
    EXPECT_EQ(tx.weak_count(), 2u);
  }
  { auto gone = std::move(rx); }
  EXPECT_EQ(tx.weak_count(), 2u);  // the receiver is not a weak sender
  { auto gone = std::move(weak2); }
  EXPECT_EQ(tx.weak_count(), 1u);
}

TEST(Counts, ReceiverIsClosedOnceClosedOrSenderless) {
  auto [tx, rx] = leanchan::channel<int>(4);
  EXPECT_FALSE(rx.is_closed());
  ASSERT_TRUE(tx.send(1).ok());
  { auto gone = std::move(tx); }
  EXPECT_TRUE(rx.is_closed());  // no sender left, a message still queued
  EXPECT_EQ(rx.recv().value(), 1);

  auto [tx2, rx2] = leanchan::channel<int>(4);
  rx2.close();
  EXPECT_TRUE(rx2.is_closed());
  EXPECT_TRUE(tx2.is_closed());
}

// Waiting senders are served in the order they queued, so a stream of
// try_send calls cannot overtake them: once a sender is queued, the
// messages taken before its turn are at most the senders ahead of it (7)
// plus the capacity. Measured with send notifiers, whose queueing is
// observable (notify_when_room returns kArmed once queued); the blocked
// threads' version, whose queueing time is not observable from outside, is
// WaiterQueue.BlockedSendersFinishWhileTrySendersStream.
TEST(Fairness, QueuedSenderWaitsAtMostTheQueueLength) {
  constexpr int kWaiters = 8;
  constexpr int kPerWaiter = 300;
  constexpr long kCapacity = 1;
  auto [tx, rx] = leanchan::channel<int>(kCapacity);
  std::atomic<long> taken{0};
  std::atomic<long> worst_wait{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  struct Signal {
    std::atomic<long>* taken;
    std::atomic<long> fired_at{0};  // messages taken when the slot was handed over
    std::atomic<int> fired{0};
    static void fire(void* self) {
      auto* signal = static_cast<Signal*>(self);
      signal->fired_at = signal->taken->load();
      signal->fired.fetch_add(1);
      signal->fired.notify_one();
    }
  };
  for (int w = 0; w < kWaiters; ++w) {
    threads.emplace_back([sender = tx, &taken, &worst_wait]() mutable {
      Signal signal{&taken};
      leanchan::Notifier notifier(&Signal::fire, &signal);
      for (int i = 0; i < kPerWaiter; ++i) {
        for (;;) {
          if (sender.try_send(i, notifier).ok()) break;
          const int seen = signal.fired.load();
          if (sender.notify_when_room(notifier) != leanchan::RoomStatus::kArmed) continue;
          const long queued_at = taken.load();  // queued by now
          signal.fired.wait(seen);
          const long wait = signal.fired_at.load() - queued_at;
          long worst = worst_wait.load();
          while (wait > worst && !worst_wait.compare_exchange_weak(worst, wait)) {
          }
        }
      }
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([sender = tx, &stop]() mutable {
      while (!stop.load(std::memory_order_relaxed)) (void)sender.try_send(-1);
    });
  }
  int from_waiters = 0;
  long from_try_send = 0;
  const auto give_up = std::chrono::steady_clock::now() + 30s;  // a hang fails, not hangs
  while (from_waiters < kWaiters * kPerWaiter) {
    auto r = rx.recv_until(give_up);
    ASSERT_TRUE(r.ok()) << "queued senders starved";
    if (r.value() < 0) {
      ++from_try_send;
    } else {
      ++from_waiters;
    }
    taken.fetch_add(1);
  }
  stop = true;
  for (auto& t : threads) t.join();
  std::printf("worst wait of a queued sender: %ld messages (%ld try_sends got in)\n",
              worst_wait.load(), from_try_send);
  EXPECT_LE(worst_wait.load(), (kWaiters - 1) + kCapacity);
}

// The slots always come back: after a storm of blocked sends, timed sends,
// reservations, notifiers and cancellations, draining the channel leaves
// every slot free.
TEST(Slots, AllComeBackAfterMixedWaiters) {
  const int rounds = std::max(20, static_cast<int>(300 * leanchan::testing::stress_scale()));
  for (int round = 0; round < rounds; ++round) {
    auto [tx, rx] = leanchan::channel<int, 2>(3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([sender = tx, t]() mutable {
        for (int i = 0; i < 20; ++i) {
          switch ((i + t) % 4) {
            case 0: (void)sender.send(i); break;
            case 1: (void)sender.send_for(i, std::chrono::microseconds(50)); break;
            case 2: {
              auto batch = sender.reserve_many(2);
              if (batch) batch.send(i);
              break;
            }
            default: {
              auto permit = sender.reserve();
              (void)permit;  // dropped unused
            }
          }
        }
      });
    }
    for (;;) {
      auto r = rx.recv_for(50ms);
      if (!r.ok()) break;
    }
    for (auto& t : threads) t.join();
    while (rx.try_recv().ok()) {
    }
    ASSERT_EQ(tx.capacity(), 3u) << "round " << round;
  }
}

Task reserve_then_send(leanchan::Sender<int, 1>& tx, leanchan::Executor& executor, int value,
                       SendStatus& status) {
  auto permit = co_await tx.async_reserve(executor);
  status = permit.status();
  if (permit) permit.send(value);
}

TEST(AsyncReserve, WaitsForRoomThenSends) {
  leanchan::ManualExecutor executor;
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(1).ok());
  SendStatus status = SendStatus::kFull;
  Task task = reserve_then_send(tx, executor, 2, status);
  task.handle.resume();  // suspends: full
  EXPECT_FALSE(task.handle.done());
  EXPECT_EQ(rx.try_recv().value(), 1);  // the slot is handed to the coroutine
  EXPECT_EQ(tx.try_send(3).status(), SendStatus::kFull);
  EXPECT_EQ(executor.run_pending(), 1u);
  EXPECT_TRUE(task.handle.done());
  EXPECT_EQ(status, SendStatus::kOk);
  EXPECT_EQ(rx.try_recv().value(), 2);
}

TEST(AsyncReserve, DestroyedWaiterPassesItsSlotOn) {
  leanchan::ManualExecutor executor;
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(1).ok());
  SendStatus first = SendStatus::kFull, second = SendStatus::kFull;
  std::optional<Task> a(reserve_then_send(tx, executor, 2, first));
  Task b = reserve_then_send(tx, executor, 3, second);
  a->handle.resume();
  b.handle.resume();
  EXPECT_EQ(rx.try_recv().value(), 1);    // the slot goes to a
  a.reset();                              // a is destroyed before it runs
  EXPECT_EQ(executor.run_pending(), 1u);  // b was handed a's slot
  EXPECT_TRUE(b.handle.done());
  EXPECT_EQ(second, SendStatus::kOk);
  EXPECT_EQ(rx.try_recv().value(), 3);
}

Task watch_close(leanchan::Sender<int, 1>& tx, leanchan::Executor& executor, bool& resumed) {
  co_await tx.async_closed(executor);
  resumed = true;
}

TEST(AsyncClosed, ResumesWhenTheReceiverGoes) {
  leanchan::ManualExecutor executor;
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  bool resumed = false;
  Task task = watch_close(tx, executor, resumed);
  task.handle.resume();
  EXPECT_FALSE(resumed);
  EXPECT_EQ(executor.run_pending(), 0u);
  { auto gone = std::move(rx); }
  EXPECT_EQ(executor.run_pending(), 1u);
  EXPECT_TRUE(resumed);
}

Task take_many(leanchan::Receiver<int, 2>& rx, leanchan::Executor& executor, std::vector<int>& out,
               std::size_t& got) {
  got = co_await rx.async_recv_many(out, 8, executor);
}

TEST(AsyncRecvMany, TakesWhatIsThereOnceSomethingArrives) {
  leanchan::ManualExecutor executor;
  auto [tx, rx] = leanchan::channel<int, 2>(8);
  std::vector<int> out;
  std::size_t got = 0;
  Task task = take_many(rx, executor, out, got);
  task.handle.resume();
  EXPECT_FALSE(task.handle.done());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tx.send(i).ok());
  EXPECT_EQ(executor.run_pending(), 1u);
  EXPECT_TRUE(task.handle.done());
  EXPECT_EQ(got, 3u);
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2}));
}

}  // namespace

namespace {

// Deadlines saturate instead of overflowing (leanchan/internal/futex.h):
// anything past the clock's range is "no deadline", anything already past
// is now or earlier, whatever the duration type or clock.
TEST(Deadlines, SaturateAtTheClocksRange) {
  using leanchan::internal::Deadline;
  using leanchan::internal::deadline_after;
  using leanchan::internal::to_steady_deadline;
  EXPECT_EQ(deadline_after(std::chrono::nanoseconds::max()), Deadline::max());
  EXPECT_EQ(deadline_after(std::chrono::hours::max()), Deadline::max());
  EXPECT_EQ(deadline_after(std::chrono::years(1000)), Deadline::max());
  EXPECT_EQ(deadline_after(std::chrono::duration<double>(1e300)), Deadline::max());
  const Deadline before = std::chrono::steady_clock::now();
  const Deadline long_ago = deadline_after(std::chrono::hours::min());
  EXPECT_LE(long_ago, std::chrono::steady_clock::now());
  EXPECT_GE(deadline_after(std::chrono::seconds(0)), before);
  const Deadline in_a_second = deadline_after(std::chrono::seconds(1));
  EXPECT_GT(in_a_second, before + std::chrono::milliseconds(999));
  EXPECT_EQ(to_steady_deadline(std::chrono::steady_clock::time_point::max()), Deadline::max());
  EXPECT_EQ(to_steady_deadline(std::chrono::system_clock::time_point::max()), Deadline::max());
  EXPECT_EQ(to_steady_deadline(
                std::chrono::time_point<std::chrono::steady_clock, std::chrono::hours>::max()),
            Deadline::max());
  const Deadline system_min = to_steady_deadline(std::chrono::system_clock::time_point::min());
  EXPECT_LE(system_min, std::chrono::steady_clock::now());
}

// closed_until with a deadline on another clock, and one far past its range.
TEST(Closed, ClosedUntilTakesAnyClock) {
  auto channel_pair = leanchan::channel<int>(2);
  auto& tx = channel_pair.first;
  EXPECT_FALSE(tx.closed_until(std::chrono::system_clock::now() + std::chrono::milliseconds(1)));
  std::thread closer([&channel_pair] { channel_pair.second.close(); });
  EXPECT_TRUE(tx.closed_until(std::chrono::system_clock::time_point::max()));
  closer.join();
}

}  // namespace
