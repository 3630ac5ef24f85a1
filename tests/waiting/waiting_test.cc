// SPDX-License-Identifier: MIT
// The waiting layer: who is woken when a slot frees or a message lands, in
// what order, and what a timeout means. Regression tests for defects of the
// first waiting layer; public API only.
//
// No test sleeps to synchronise. A bounded wait (FallbackAction, recv_until)
// only ends a wait that would otherwise last forever: a hang of a broken
// build becomes a failure, and a call that rightly waits "forever" is ended
// from outside. It never is the pass condition itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using namespace std::chrono_literals;
using leanchan::testing::Detached;

std::string name(leanchan::SendStatus status) {
  return std::string(leanchan::to_string(status));
}
std::string name(leanchan::RecvStatus status) {
  return std::string(leanchan::to_string(status));
}

// A send notifier that remembers how often it fired and in which place
// among the waiters sharing `order` (0 for the first to fire).
struct Waiter {
  explicit Waiter(std::atomic<int>* order_counter = nullptr) : order(order_counter) {}
  static void fire(void* self) {
    auto* waiter = static_cast<Waiter*>(self);
    if (waiter->order != nullptr) waiter->place = waiter->order->fetch_add(1);
    waiter->calls.fetch_add(1);
    waiter->calls.notify_all();
  }
  std::atomic<int>* order;
  int place = -1;
  std::atomic<int> calls{0};
  leanchan::Notifier notifier{&Waiter::fire, this};
};

// Runs `action` on its own thread once finish() is called or `limit` has
// passed, whichever comes first. The limit only keeps a broken build from
// hanging (the test then fails on what it observed); a call that waits as
// it should is ended by the limit, never passed by it.
class FallbackAction {
 public:
  template <class F>
  FallbackAction(std::chrono::milliseconds limit, F action)
      : thread_([this, limit, action = std::move(action)]() mutable {
          {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait_for(lock, limit, [this] { return finished_; });
          }
          action();
        }) {}
  FallbackAction(const FallbackAction&) = delete;
  FallbackAction& operator=(const FallbackAction&) = delete;
  ~FallbackAction() {
    finish();
    thread_.join();
  }
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// A message whose move constructor can be held: after Gated::gate.arm(),
// the next move of any Gated (the one into a channel slot, when a send is
// the next to move one) stops until release(). A send moves its value into
// the slot after claiming the position and before publishing it, so a held
// send has a claimed, unpublished position.
struct Gate {
  std::atomic<bool> armed{false};
  std::atomic<bool> entered{false};
  std::atomic<bool> released{false};

  void arm() {
    entered = false;
    released = false;
    armed = true;
  }
  void pass() {
    if (!armed.exchange(false)) return;
    entered = true;
    entered.notify_all();
    released.wait(false);
  }
  void wait_until_entered() { entered.wait(false); }
  void release() {
    released = true;
    released.notify_all();
  }
};

struct Gated {
  static inline Gate gate;
  explicit Gated(int v) noexcept : value(v) {}
  Gated(Gated&& other) noexcept : value(other.value) { gate.pass(); }
  Gated& operator=(Gated&&) = delete;
  int value;
};

// ---- The send-side waiter queue ----------------------------------------------

// Contract: any number of armed send notifiers are each called exactly once
// when the channel closes; a single receive wakes exactly one of them.
TEST(WaiterQueue, SixtyFiveThousandArmedSendNotifiersAllFire) {
  constexpr int kWaiters = 65536;
  std::deque<Waiter> waiters;  // before the channel: outlives it
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(0).ok());  // full
  for (int i = 0; i < kWaiters; ++i) {
    ASSERT_EQ(tx.notify_when_room(waiters.emplace_back().notifier), leanchan::RoomStatus::kArmed)
        << "waiter " << i;
  }
  ASSERT_TRUE(rx.try_recv().ok());
  int fired = 0;
  for (const Waiter& w : waiters) fired += w.calls.load();
  EXPECT_EQ(fired, 1) << "one freed slot wakes exactly one of " << kWaiters << " waiters";

  rx.close();
  int never = 0;
  int twice = 0;
  for (const Waiter& w : waiters) {
    never += w.calls.load() == 0;
    twice += w.calls.load() > 1;
  }
  EXPECT_EQ(never, 0) << "armed send notifiers not called after close()";
  EXPECT_EQ(twice, 0) << "send notifiers called more than once";
  for (Waiter& w : waiters) tx.cancel_notify(w.notifier);  // unlink whatever is left
}

// Contract: a send notifier woken for a freed slot holds that slot; if it is
// then cancelled (cancel_notify returns false: it had fired) without sending,
// the slot passes on to the next armed waiter, which is then called.
TEST(WaiterQueue, CancelledFiredNotifierPassesItsSlotOn) {
  Waiter a;
  Waiter b;
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(0).ok());  // full
  ASSERT_EQ(tx.notify_when_room(a.notifier), leanchan::RoomStatus::kArmed);
  ASSERT_EQ(tx.notify_when_room(b.notifier), leanchan::RoomStatus::kArmed);

  ASSERT_TRUE(rx.try_recv().ok());
  ASSERT_EQ(a.calls.load(), 1) << "the first waiter is woken for the freed slot";
  ASSERT_EQ(b.calls.load(), 0);

  EXPECT_FALSE(tx.cancel_notify(a.notifier)) << "a had fired";
  EXPECT_EQ(b.calls.load(), 1) << "a gave its slot up without sending: b must be woken";

  // b gives the slot back as well: it is free for anyone now.
  EXPECT_FALSE(tx.cancel_notify(b.notifier));
  EXPECT_EQ(name(tx.try_send(1).status()), "ok");
}

// Contract: send notifiers are woken in the order they were armed, one per
// freed slot.
TEST(WaiterQueue, SendNotifiersFireInArmingOrder) {
  constexpr int kWaiters = 8;
  std::atomic<int> order{0};
  std::deque<Waiter> waiters;
  auto [tx, rx] = leanchan::channel<int, 1>(kWaiters);
  for (int i = 0; i < kWaiters; ++i) ASSERT_TRUE(tx.try_send(i).ok());  // full
  for (int i = 0; i < kWaiters; ++i) {
    ASSERT_EQ(tx.notify_when_room(waiters.emplace_back(&order).notifier),
              leanchan::RoomStatus::kArmed);
  }
  for (int k = 0; k < kWaiters; ++k) {
    auto taken = rx.try_recv();
    ASSERT_TRUE(taken.ok()) << "receive " << k;
    for (int j = 0; j < kWaiters; ++j) {
      const Waiter& w = waiters[static_cast<std::size_t>(j)];
      if (j <= k) {
        EXPECT_EQ(w.calls.load(), 1) << "after receive " << k << ", waiter " << j;
        EXPECT_EQ(w.place, j) << "waiter " << j << " fired out of arming order";
      } else {
        EXPECT_EQ(w.calls.load(), 0) << "after receive " << k << ", waiter " << j;
      }
    }
  }
  for (Waiter& w : waiters) EXPECT_FALSE(tx.cancel_notify(w.notifier));
}

// Contract: a slot freed while send notifiers are armed belongs to the
// notifier woken for it; a try_send that arrives meanwhile cannot take it
// (kFull) until that notifier gives it back with cancel_notify.
TEST(WaiterQueue, FreedSlotBelongsToTheWokenNotifierNotToTrySend) {
  constexpr int kWaiters = 8;
  std::deque<Waiter> waiters;
  auto [tx, rx] = leanchan::channel<int, 1>(kWaiters);
  for (int i = 0; i < kWaiters; ++i) ASSERT_TRUE(tx.try_send(i).ok());  // full
  for (int i = 0; i < kWaiters; ++i) {
    ASSERT_EQ(tx.notify_when_room(waiters.emplace_back().notifier), leanchan::RoomStatus::kArmed);
  }
  for (int k = 0; k < kWaiters; ++k) {
    auto taken = rx.try_recv();
    ASSERT_TRUE(taken.ok()) << "receive " << k;
    ASSERT_EQ(taken.value(), k);
    ASSERT_EQ(waiters[static_cast<std::size_t>(k)].calls.load(), 1) << "waiter " << k;
    ASSERT_EQ(name(tx.try_send(100 + k).status()), "full")
        << "after receive " << k << ": the freed slot was granted to waiter " << k
        << ", yet try_send took it";
  }
  // Giving the slots back makes them free for anyone.
  for (Waiter& w : waiters) EXPECT_FALSE(tx.cancel_notify(w.notifier));
  for (int i = 0; i < kWaiters; ++i) EXPECT_EQ(name(tx.try_send(i).status()), "ok") << i;
  EXPECT_EQ(name(tx.try_send(kWaiters).status()), "full");
}

// Contract: senders blocked in send() are served first-come first-served, so
// a stream of try_send calls cannot starve them: every blocked send finishes.
TEST(WaiterQueue, BlockedSendersFinishWhileTrySendersStream) {
  struct Message {
    int sender;  // -1: from a try_send thread
    int seq;
  };
  constexpr int kBlocked = 8;
  constexpr int kPerSender = 50;
  constexpr int kTrySenders = 2;
  auto [tx, rx] = leanchan::channel<Message>(1);
  ASSERT_TRUE(tx.try_send(Message{-1, 0}).ok());  // full
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> try_sent{0};
  std::vector<std::thread> threads;
  for (int s = 0; s < kBlocked; ++s) {
    threads.emplace_back([sender = tx, s]() mutable {
      for (int i = 0; i < kPerSender; ++i) {
        if (!sender.send(Message{s, i}).ok()) return;  // closed: the test gave up
      }
    });
  }
  for (int t = 0; t < kTrySenders; ++t) {
    threads.emplace_back([sender = tx, &stop, &try_sent]() mutable {
      while (!stop.load(std::memory_order_relaxed)) {
        if (sender.try_send(Message{-1, 0}).ok()) try_sent.fetch_add(1);
      }
    });
  }

  // The bound only turns starvation into a failure instead of a hang.
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  std::vector<int> next(kBlocked, 0);
  int blocked_received = 0;
  while (blocked_received < kBlocked * kPerSender) {
    auto r = rx.recv_until(give_up);
    if (!r.ok()) break;
    const Message m = r.value();
    if (m.sender < 0) continue;
    EXPECT_EQ(m.seq, next[static_cast<std::size_t>(m.sender)]++) << "sender " << m.sender;
    ++blocked_received;
  }
  EXPECT_EQ(blocked_received, kBlocked * kPerSender)
      << "blocked senders starved within 10 s; " << try_sent.load() << " try_sends got in";
  stop = true;
  rx.close();  // releases any sender still blocked
  for (auto& t : threads) t.join();
}

// ---- The receive side --------------------------------------------------------

// Contract: arm_notifier() returns true only if a message (or the end) is
// there to take. A send that has claimed its position but not yet published
// it is not there: arming succeeds (false), and the publish calls the
// notifier exactly once; the message is then taken.
TEST(ReceiveNotifier, ArmsWhileAClaimedSendIsUnpublished) {
  Waiter ready;
  auto [tx, rx] = leanchan::channel<Gated>(4);
  Gated::gate.arm();
  std::thread sender([s = tx]() mutable { EXPECT_TRUE(s.send(Gated(7)).ok()); });
  Gated::gate.wait_until_entered();  // the send holds position 0, unpublished

  rx.set_notifier(ready.notifier);
  const bool ready_now = rx.arm_notifier();
  EXPECT_FALSE(ready_now) << "nothing is published yet: the notifier must be armed";
  Gated::gate.release();
  sender.join();  // the publishing send calls the notifier before returning
  EXPECT_EQ(ready.calls.load(), 1) << "the publish must call the armed notifier once";
  auto r = rx.try_recv();
  ASSERT_EQ(name(r.status()), "ok");
  EXPECT_EQ(r.value().value, 7);
  rx.clear_notifier();
}

// Contract: try_recv is linearizable: once a later position has been
// published (try_send returned ok), try_recv does not report kEmpty; it
// returns the first message in order, waiting if needed for an earlier
// claimed send to publish. (A releaser lets the held send go once try_recv
// returned, or after 300 ms so that a waiting try_recv finishes.)
TEST(TryRecv, DoesNotReportEmptyBehindAClaimedSend) {
  auto [tx, rx] = leanchan::channel<Gated>(4);
  Gated::gate.arm();
  std::thread sender_a([s = tx]() mutable { EXPECT_TRUE(s.send(Gated(1)).ok()); });
  Gated::gate.wait_until_entered();  // A holds position 0, unpublished
  ASSERT_TRUE(tx.try_send(Gated(2)).ok()) << "B publishes position 1";

  std::optional<leanchan::RecvResult<Gated>> first;
  {
    FallbackAction releaser(300ms, [] { Gated::gate.release(); });
    first.emplace(rx.try_recv());
    releaser.finish();
  }
  sender_a.join();
  ASSERT_EQ(name(first->status()), "ok") << "B's message is published: the channel is not empty";
  EXPECT_EQ(first->value().value, 1) << "position 0 (A's message) comes first";
}

// Contract: try_recv may be called from the receive notifier's own
// callback (draining there is legal). When it must wait for an earlier
// claimed send, it does so without disarming the notifier, which would wait
// for the firing in progress: its own caller. (Found by review: the wait
// deadlocked the sender thread running the callback.)
TEST(TryRecv, WaitsInsideTheReceiveCallbackWithoutDeadlock) {
  auto [tx, rx] = leanchan::channel<Gated>(4);
  struct Drain {
    leanchan::Receiver<Gated>* rx;
    std::atomic<int> value{-1};
    static void fire(void* self) {
      auto* drain = static_cast<Drain*>(self);
      auto r = drain->rx->try_recv();
      drain->value = r.ok() ? r.value().value : -2;
    }
  } drain{&rx};
  leanchan::Notifier notifier(&Drain::fire, &drain);
  rx.set_notifier(notifier);
  ASSERT_FALSE(rx.arm_notifier());
  Gated::gate.arm();
  std::thread sender_a([s = tx]() mutable { EXPECT_TRUE(s.send(Gated(1)).ok()); });
  Gated::gate.wait_until_entered();  // A holds position 0, unpublished
  {
    FallbackAction releaser(300ms, [] { Gated::gate.release(); });
    // B publishes position 1 and fires the notifier on this thread; the
    // callback's try_recv waits for A (released by the fallback).
    ASSERT_TRUE(tx.send(Gated(2)).ok());
    releaser.finish();
  }
  sender_a.join();
  EXPECT_EQ(drain.value.load(), 1) << "the callback takes position 0 first";
  EXPECT_EQ(rx.try_recv().value().value, 2);
  rx.clear_notifier();
}

// ---- "Forever" timeouts --------------------------------------------------------
// A timeout too large to add to now() means "no deadline": the call waits
// (here until the helper ends it) instead of timing out at once.

TEST(ForeverTimeouts, RecvForMaxNanosecondsWaits) {
  auto [tx, rx] = leanchan::channel<int>(4);
  std::optional<leanchan::Sender<int>> keep(std::move(tx));
  leanchan::RecvStatus status;
  {
    FallbackAction drop(200ms, [&keep] { keep.reset(); });
    status = rx.recv_for(std::chrono::nanoseconds::max()).status();
    drop.finish();
  }
  EXPECT_EQ(name(status), "disconnected");
}

TEST(ForeverTimeouts, RecvForMaxHoursWaits) {
  auto [tx, rx] = leanchan::channel<int>(4);
  std::optional<leanchan::Sender<int>> keep(std::move(tx));
  leanchan::RecvStatus status;
  {
    FallbackAction drop(200ms, [&keep] { keep.reset(); });
    status = rx.recv_for(std::chrono::hours::max()).status();
    drop.finish();
  }
  EXPECT_EQ(name(status), "disconnected");
}

TEST(ForeverTimeouts, SendForAThousandYearsWaits) {
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(0).ok());  // full
  leanchan::Receiver<int, 1>& receiver = rx;
  leanchan::SendStatus status;
  {
    FallbackAction close(200ms, [&receiver] { receiver.close(); });
    status = tx.send_for(1, std::chrono::years(1000)).status();
    close.finish();
  }
  EXPECT_EQ(name(status), "closed");
}

TEST(ForeverTimeouts, SendForMaxNanosecondsWaits) {
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(0).ok());  // full
  leanchan::Receiver<int, 1>& receiver = rx;
  leanchan::SendStatus status;
  {
    FallbackAction close(200ms, [&receiver] { receiver.close(); });
    status = tx.send_for(1, std::chrono::nanoseconds::max()).status();
    close.finish();
  }
  EXPECT_EQ(name(status), "closed");
}

// ---- Coroutines ----------------------------------------------------------------

// Counts coroutines in flight, so that the test keeps only a few at once:
// the race needs a coroutine that arms while the receiver frees the slot it
// waits for, not a long queue of waiters.
class InFlight {
 public:
  void add() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++count_;
  }
  void remove() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --count_;
    }
    cv_.notify_all();
  }
  // False if the count stayed at `limit` or above for 5 s (a lost wake-up).
  bool wait_below(int limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, 5s, [&] { return count_ < limit; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_ = 0;
};

Detached send_one(leanchan::Sender<int, 1> tx, leanchan::Executor& executor, int value,
                  std::atomic<int>& sent, std::atomic<int>& failed, InFlight& in_flight) {
  auto result = co_await tx.async_send(value, executor);
  (result.ok() ? sent : failed).fetch_add(1);
  in_flight.remove();
}  // the frame (and its awaitable) is freed here, on whichever thread resumed it

// Contract: a coroutine may start on any thread; once async_send's
// await_suspend has armed the notifier, the executor may resume (and
// finish, and free) the coroutine at once, and the starting thread touches
// nothing of the frame afterwards. Every message is delivered exactly once.
// (A race: AddressSanitizer reports a use after free when it is hit.)
TEST(AsyncSend, CoroutineStartedOffTheExecutorMayFinishBeforeSuspendReturns) {
  const int total = std::max(1000, static_cast<int>(20000 * leanchan::testing::stress_scale()));
  constexpr int kMaxInFlight = 2;
  leanchan::ManualExecutor executor;  // before the channel: outlives it
  InFlight in_flight;
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  std::atomic<int> sent{0};
  std::atomic<int> failed{0};
  std::vector<int> seen(static_cast<std::size_t>(total), 0);
  int received = 0;
  std::thread loop([&executor] { executor.run(); });
  std::thread receiver([r = &rx, &seen, &received, total] {
    while (received < total) {
      auto value = r->recv_for(5s);  // bound: a lost message fails, not hangs
      if (!value.ok()) break;
      ++seen[static_cast<std::size_t>(value.value())];
      ++received;
    }
  });
  int started = 0;
  for (; started < total; ++started) {
    if (!in_flight.wait_below(kMaxInFlight)) break;
    in_flight.add();
    Detached task = send_one(tx, executor, started, sent, failed, in_flight);
    task.handle.resume();  // on this thread, not the executor's
  }
  EXPECT_EQ(started, total) << "a suspended coroutine was not resumed within 5 s";
  receiver.join();
  rx.close();  // any coroutine still waiting resumes with kClosed
  executor.stop();
  loop.join();
  executor.run_pending();

  EXPECT_EQ(received, total);
  EXPECT_EQ(sent.load(), started);
  EXPECT_EQ(failed.load(), 0);
  int wrong = 0;
  for (int i = 0; i < started; ++i) wrong += seen[static_cast<std::size_t>(i)] != 1;
  EXPECT_EQ(wrong, 0) << "messages not delivered exactly once";
}

}  // namespace
