// SPDX-License-Identifier: MIT
// How often a receiver that keeps up takes the list lock. It empties the
// queue in the middle of nearly every block; step 10 (free the spare) runs
// only when it finds the channel empty, not at those momentary drains, and
// reads the shared line and takes the lock only when there is a spare to
// free: under Retention::keep(n) with n >= 2 there never is (a drain keeps
// as many spares as the chain can hold). Counted with the test-points
// build's kListLocked point, on one thread, so the counts are exact bounds.
// Also what attaching the receiver's notifier costs, alone and under a
// coroutine receive.
#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <optional>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"

namespace {

using leanchan::internal::TestPoint;

std::atomic<long> locks{0};

void count(TestPoint point) {
  if (point == TestPoint::kListLocked) locks.fetch_add(1, std::memory_order_relaxed);
}

// Sends 3 then receives 3, `messages` in all (each group drains the channel,
// mid-block 7 times in 8, and the sender opens a block while the receiver
// is still in the one before, so a spare exists), after a burst that leaves
// spares; returns the list-lock acquisitions during that part.
long locks_while_keeping_up(leanchan::Retention retention, std::size_t messages) {
  auto [tx, rx] = leanchan::channel<int, 8>(64, leanchan::ChannelOptions{retention});
  for (int i = 0; i < 40; ++i) EXPECT_TRUE(tx.try_send(int{i}).ok());
  for (int i = 0; i < 40; ++i) EXPECT_EQ(rx.try_recv().value(), i);
  locks = 0;
  leanchan::internal::test_point_hook.store(&count);
  for (std::size_t i = 0; i < messages; i += 3) {
    for (std::size_t k = i; k < i + 3; ++k) EXPECT_TRUE(tx.try_send(static_cast<int>(k)).ok());
    for (std::size_t k = i; k < i + 3; ++k) EXPECT_EQ(rx.try_recv().value(), static_cast<int>(k));
  }
  leanchan::internal::test_point_hook.store(nullptr);
  return locks.load();
}

// Per block of 8 messages: the sender numbers the next block (1 lock) and
// the receiver finishes one (1 lock). Before the spare stayed across
// momentary drains, kKeepOne took a third (step 10 freeing the spare the
// finished block had become, which the sender then allocated again); before
// the receiver kept the "a drain can free a spare" constant, keep(n >= 2)
// also locked on every mid-block drain while a spare was chained.
constexpr std::size_t kMessages = 792;  // 99 blocks, 264 groups of 3

TEST(ListLocks, KeepOneLocksAtMostTwicePerBlock) {
  EXPECT_LE(locks_while_keeping_up(leanchan::Retention::kKeepOne, kMessages),
            kMessages / 8 * 2 + 3);
}

TEST(ListLocks, KeepTwoAndMoreLockAtMostTwicePerBlock) {
  for (unsigned n : {2u, 4u}) {
    SCOPED_TRACE(n);
    EXPECT_LE(locks_while_keeping_up(leanchan::Retention::keep(n), kMessages),
              kMessages / 8 * 2 + 3);
  }
}

// A receiver that drains the channel at a block's end renumbers that block
// in place as the next one, in the lock it takes to finish it, so the next
// sender finds its block numbered and locks not at all: one lock per block
// (each message at b = 1, capacity 1), where the sender used to take a
// second one to renumber it. `rounds` rounds of `per_round` sends then as
// many receives, after one block's worth that creates the block and
// leaves the receiver at the next block's start.
template <std::size_t B>
long locks_in_lockstep(std::size_t capacity, std::size_t per_round, std::size_t rounds,
                       leanchan::Retention retention) {
  auto [tx, rx] = leanchan::channel<int, B>(capacity, leanchan::ChannelOptions{retention});
  for (std::size_t i = 0; i < B; ++i) {
    EXPECT_TRUE(tx.try_send(-1).ok());
    EXPECT_EQ(rx.try_recv().value(), -1);
  }
  locks = 0;
  leanchan::internal::test_point_hook.store(&count);
  for (std::size_t r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < per_round; ++i) EXPECT_TRUE(tx.try_send(static_cast<int>(i)).ok());
    for (std::size_t i = 0; i < per_round; ++i) {
      EXPECT_EQ(rx.try_recv().value(), static_cast<int>(i));
    }
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  }
  leanchan::internal::test_point_hook.store(nullptr);
  return locks.load();
}

TEST(ListLocks, DrainingAtABlocksEndLocksOncePerBlock) {
  constexpr std::size_t kRounds = 100;
  for (const leanchan::Retention retention :
       {leanchan::Retention::kKeepOne, leanchan::Retention::keep(2)}) {
    EXPECT_EQ(locks_in_lockstep<1>(1, 1, kRounds, retention), static_cast<long>(kRounds));
    EXPECT_EQ(locks_in_lockstep<8>(8, 8, kRounds, retention), static_cast<long>(kRounds));
  }
  // Nothing changes for kKeepNone, which keeps no block: the finishing
  // receiver frees it, the next sender allocates one under the lock, and
  // the receiver finds that new head under the lock: three per block.
  EXPECT_EQ(locks_in_lockstep<1>(1, 1, kRounds, leanchan::Retention::kKeepNone),
            static_cast<long>(3 * kRounds));
}

// Destroying a channel that never held a message (the creation benchmark's
// whole life) takes no lock: the receiver has no consumed slot to forget
// and no block to free. Before, its destruction always locked once. A
// channel that held messages and kept a block locks once: the dropped
// receiver frees the block (Receiver::reset), so no consumed slot's bit is
// left to clear.
TEST(ListLocks, ANeverUsedChannelIsDestroyedWithoutTheLock) {
  locks = 0;
  leanchan::internal::test_point_hook.store(&count);
  { auto [tx, rx] = leanchan::channel<int, 8>(16); }
  const long never_used = locks.exchange(0);
  {
    auto [tx, rx] = leanchan::channel<int, 8>(16);
    EXPECT_TRUE(tx.try_send(1).ok());
    EXPECT_EQ(rx.try_recv().value(), 1);
    locks = 0;
  }
  const long used = locks.load();
  leanchan::internal::test_point_hook.store(nullptr);
  EXPECT_EQ(never_used, 0);
  EXPECT_EQ(used, 1);
}

}  // namespace

namespace {

// Deep queues: with 2^16 - 1 or more permits in use the provisioning check
// cannot rebuild the receiver's returned position from the 16 bits it
// keeps, and before it also read the receiver's block word it fell back
// to a bound far past the tail: every send took the list lock (2,048 locks
// per 2,048 try_sends at about 70,000 in use). Now a send locks only to
// number a block, as in a shallow queue: once per 32 messages.
long locks_per_sends_at_depth(std::size_t depth, std::size_t sends) {
  auto [tx, rx] = leanchan::channel<int, 32>(std::size_t{1} << 17);
  for (std::size_t i = 0; i < depth; ++i) EXPECT_TRUE(tx.try_send(static_cast<int>(i)).ok());
  // The receiver takes a few, so its returned position is not 0.
  for (std::size_t i = 0; i < 40; ++i) EXPECT_EQ(rx.try_recv().value(), static_cast<int>(i));
  locks = 0;
  leanchan::internal::test_point_hook.store(&count);
  for (std::size_t i = 0; i < sends; ++i) EXPECT_TRUE(tx.try_send(static_cast<int>(i)).ok());
  leanchan::internal::test_point_hook.store(nullptr);
  return locks.load();
}

TEST(ListLocks, ADeepQueueLocksOncePerBlockLikeAShallowOne) {
  constexpr std::size_t kSends = 2048;
  const long shallow = locks_per_sends_at_depth(2000, kSends);
  const long deep = locks_per_sends_at_depth(70000, kSends);
  EXPECT_LE(shallow, static_cast<long>(kSends / 32 + 2));
  EXPECT_LE(deep, static_cast<long>(kSends / 32 + 2)) << "shallow: " << shallow;
}

}  // namespace

namespace {

// While a reservation whose positions reach past the receiver's block is
// held, the receiver finding the channel empty must not lock: the blocks
// numbered for it are needed (the cheap look at the permits says so).
TEST(ListLocks, EmptyPollsWhileAReservationIsHeldTakeNoLock) {
  auto [tx, rx] = leanchan::channel<int, 4>(16);
  ASSERT_TRUE(tx.try_send(1).ok());
  ASSERT_EQ(rx.try_recv().value(), 1);
  auto held = tx.try_reserve_many(5);
  ASSERT_EQ(held.size(), 5u);
  locks = 0;
  leanchan::internal::test_point_hook.store(&count);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
    EXPECT_EQ(rx.poll_recv().status(), leanchan::PollStatus::kEmpty);
  }
  leanchan::internal::test_point_hook.store(nullptr);
  EXPECT_EQ(locks.load(), 0);
}

}  // namespace

namespace {

// Attaching the receiver's notifier takes the list lock once, whether one
// was attached before or not (before: a detach, a second lock, even with
// nothing attached), and a replaced one no longer fires.
void count_firing(void* fired) {
  ++*static_cast<int*>(fired);
}

TEST(ListLocks, AttachingANotifierLocksOnce) {
  auto [tx, rx] = leanchan::channel<int, 4>(16);
  ASSERT_TRUE(tx.try_send(0).ok());  // the block is numbered before counting
  ASSERT_EQ(rx.try_recv().value(), 0);
  int first_fired = 0;
  int second_fired = 0;
  leanchan::Notifier first(&count_firing, &first_fired);
  leanchan::Notifier second(&count_firing, &second_fired);
  locks = 0;
  leanchan::internal::test_point_hook.store(&count);
  rx.set_notifier(first);
  const long attach = locks.exchange(0);
  rx.set_notifier(second);
  const long replace = locks.exchange(0);
  rx.clear_notifier();
  const long detach = locks.exchange(0);
  rx.set_notifier(first);  // none attached again
  const long attach_again = locks.exchange(0);
  leanchan::internal::test_point_hook.store(nullptr);
  EXPECT_EQ(attach, 1);
  EXPECT_EQ(replace, 1);
  EXPECT_EQ(detach, 1);
  EXPECT_EQ(attach_again, 1);
  rx.set_notifier(second);  // replaces `first` again
  ASSERT_FALSE(rx.arm_notifier());
  ASSERT_TRUE(tx.try_send(1).ok());  // fires the attached notifier only
  EXPECT_EQ(second_fired, 1);
  EXPECT_EQ(first_fired, 0);
  EXPECT_EQ(rx.try_recv().value(), 1);
  rx.clear_notifier();
}

leanchan::testing::Task receive_one(leanchan::Receiver<int, 4>& rx, leanchan::Executor& executor,
                                    std::optional<int>& out) {
  out = co_await rx.async_recv(executor);
}

// Starts a coroutine on the executor (its first resume runs there).
struct Starter : leanchan::ExecutorTask {
  explicit Starter(std::coroutine_handle<> h) : handle(h) {
    run = [](leanchan::ExecutorTask* self) { static_cast<Starter*>(self)->handle.resume(); };
  }
  std::coroutine_handle<> handle;
};

// A coroutine receive that waits takes the list lock twice: attaching its
// notifier when it suspends and detaching it when it resumes (it was three).
TEST(ListLocks, ACoroutineReceiveThatWaitsLocksTwice) {
  auto [tx, rx] = leanchan::channel<int, 4>(16);
  ASSERT_TRUE(tx.try_send(0).ok());  // the block is numbered before counting
  ASSERT_EQ(rx.try_recv().value(), 0);
  leanchan::ManualExecutor executor;
  std::optional<int> out;
  leanchan::testing::Task task = receive_one(rx, executor, out);
  Starter start(task.handle);
  executor.schedule(start);
  locks = 0;
  leanchan::internal::test_point_hook.store(&count);
  ASSERT_EQ(executor.run_pending(), 1u);  // suspends: attaches
  const long suspend = locks.exchange(0);
  ASSERT_TRUE(tx.try_send(7).ok());  // fires the notifier: schedules
  const long send = locks.exchange(0);
  ASSERT_EQ(executor.run_pending(), 1u);  // takes the message, detaches, resumes
  const long resume = locks.exchange(0);
  leanchan::internal::test_point_hook.store(nullptr);
  EXPECT_TRUE(task.done());
  EXPECT_EQ(out, 7);
  EXPECT_EQ(suspend, 1);
  EXPECT_EQ(send, 0);
  EXPECT_EQ(resume, 1);
}

}  // namespace
