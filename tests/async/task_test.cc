// SPDX-License-Identifier: MIT
// leanchan::async::Task and spawn(): a spawned task frees its frame (and
// the handles it took by value) when it ends, so the program shape a
// newcomer writes first (a producer holding its Sender, a receive loop
// waiting for the end) ends; join() and async_join() return the result or
// rethrow; awaited tasks run inline and pass results and exceptions up; an
// exception nobody joins terminates with a message.
#include "leanchan/async/task.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "leanchan/executor.h"
#include "test_support.h"

namespace {

namespace async = leanchan::async;

async::Task<> produce(leanchan::Sender<int> tx, leanchan::Executor& executor, int count) {
  for (int i = 1; i <= count; ++i) {
    if (!(co_await tx.async_send(i, executor)).ok()) co_return;
  }
}

async::Task<long> consume_any(leanchan::Receiver<int> rx, leanchan::Executor& executor) {
  long sum = 0;
  while (std::optional<int> v = co_await rx.async_recv(executor)) sum += *v;
  co_return sum;
}

async::Task<long> consume(leanchan::Receiver<int> rx, leanchan::Executor& executor) {
  long sum = 0;
  int last = 0;
  while (std::optional<int> v = co_await rx.async_recv(executor)) {
    EXPECT_EQ(*v, last + 1);  // one producer: its order
    last = *v;
    sum += *v;
  }
  co_return sum;
}

// The newcomer's program: the producer takes its Sender by value and is
// detached; the consumer's loop ends only when the producer's frame (and
// its Sender) is gone. With a task that kept its frame after the end the
// join below would wait for ever.
TEST(Task, ASpawnedProducerEndsTheChannelWhenItEnds) {
  leanchan::ThreadPoolExecutor pool(2);
  auto [tx, rx] = leanchan::channel<int>(4);
  async::JoinHandle<long> total = async::spawn(pool, consume(std::move(rx), pool));
  async::JoinHandle<> producer = async::spawn(pool, produce(std::move(tx), pool, 1000));
  producer.join();
  EXPECT_FALSE(producer);
  EXPECT_EQ(total.join(), 1000L * 1001 / 2);
}

// The frame, with its by-value parameters, is freed before join() returns.
TEST(Task, TheFrameIsFreedBeforeJoinReturns) {
  leanchan::ManualExecutor executor;
  auto [tx, rx] = leanchan::channel<int>(1);
  auto watched = std::make_shared<int>(7);
  std::weak_ptr<int> alive = watched;
  auto task = [](std::shared_ptr<int> held, leanchan::Sender<int>) -> async::Task<int> {
    co_return *held;
  }(std::move(watched), std::move(tx));
  async::JoinHandle<int> handle = async::spawn(executor, std::move(task));
  EXPECT_FALSE(handle.is_finished());
  EXPECT_FALSE(rx.is_closed());
  EXPECT_EQ(executor.run_pending(), 1u);
  EXPECT_TRUE(handle.is_finished());
  EXPECT_TRUE(alive.expired());
  EXPECT_TRUE(rx.is_closed());  // the Sender went with the frame
  EXPECT_EQ(handle.join(), 7);
}

async::Task<int> doubled(int x) {
  co_return 2 * x;
}
async::Task<int> sum_of_doubles(int n) {
  int sum = 0;
  for (int i = 1; i <= n; ++i) sum += co_await doubled(i);
  co_return sum;
}
async::Task<> fails() {
  throw std::runtime_error("boom");
  co_return;
}
async::Task<std::string> catches() {
  try {
    co_await fails();
  } catch (const std::runtime_error& e) {
    co_return std::string("caught ") + e.what();
  }
  co_return "not caught";
}

TEST(Task, AnAwaitedTaskPassesItsResultAndItsExceptionUp) {
  leanchan::ManualExecutor executor;
  async::JoinHandle<int> sum = async::spawn(executor, sum_of_doubles(10));
  async::JoinHandle<std::string> caught = async::spawn(executor, catches());
  executor.run_pending();
  EXPECT_EQ(sum.join(), 110);
  EXPECT_EQ(caught.join(), "caught boom");
}

TEST(Task, JoinRethrowsTheTasksException) {
  leanchan::ManualExecutor executor;
  async::JoinHandle<> handle = async::spawn(executor, fails());
  executor.run_pending();
  EXPECT_THROW(handle.join(), std::runtime_error);
  EXPECT_FALSE(handle);
}

TEST(Task, ATaskNeverSpawnedNeverRuns) {
  std::atomic<int> runs{0};
  {
    auto task = [](std::atomic<int>& r) -> async::Task<> {
      r.fetch_add(1);
      co_return;
    }(runs);
    EXPECT_TRUE(task);
  }
  EXPECT_EQ(runs.load(), 0);
}

// A coroutine joins another task: it is resumed on its executor with the
// result, whether the task ended before the await or after it.
TEST(Task, AsyncJoinResumesTheAwaiterWithTheResult) {
  for (bool ended_first : {true, false}) {
    leanchan::ManualExecutor executor;
    auto [tx, rx] = leanchan::channel<int>(1);
    async::JoinHandle<long> summed = async::spawn(executor, consume(std::move(rx), executor));
    auto joiner = [](async::JoinHandle<long> handle, leanchan::Executor& ex) -> async::Task<long> {
      co_return 1 + co_await handle.async_join(ex);
    };
    if (ended_first) {
      ASSERT_TRUE(tx.try_send(1).ok());
      { auto gone = std::move(tx); }
      executor.run_pending();
      ASSERT_TRUE(summed.is_finished());
    }
    async::JoinHandle<long> result = async::spawn(executor, joiner(std::move(summed), executor));
    executor.run_pending();
    if (!ended_first) {
      EXPECT_FALSE(result.is_finished());  // waits in async_join
      ASSERT_TRUE(tx.try_send(1).ok());
      { auto gone = std::move(tx); }
      executor.run_pending();
    }
    ASSERT_TRUE(result.is_finished()) << ended_first;
    EXPECT_EQ(result.join(), 2) << ended_first;
  }
}

// A coroutine destroyed while it waits in async_join takes its wait back,
// whether the task ends after the destruction or has already handed the
// resumption to the awaiter's executor: nothing resumes the destroyed frame,
// and the task, detached, runs to its end.
TEST(Task, ACoroutineDestroyedInAsyncJoinIsNotResumed) {
  for (bool ended_first : {false, true}) {
    leanchan::ManualExecutor executor;
    leanchan::ManualExecutor other;  // the awaiting coroutine's
    auto [tx, rx] = leanchan::channel<int>(1);
    std::atomic<bool> ended{false};
    auto first = [](leanchan::Receiver<int> r, leanchan::Executor& ex,
                    std::atomic<bool>& e) -> async::Task<int> {
      std::optional<int> v = co_await r.async_recv(ex);
      e.store(true);
      co_return v.value_or(-1);
    };
    async::JoinHandle<int> handle = async::spawn(executor, first(std::move(rx), executor, ended));
    std::atomic<int> resumed{0};
    auto waiting = [](async::JoinHandle<int>& h, leanchan::Executor& ex,
                      std::atomic<int>& r) -> leanchan::testing::Task {
      (void)co_await h.async_join(ex);
      r.fetch_add(1);
    }(handle, other, resumed);
    executor.run_pending();   // `first` waits for a message
    waiting.handle.resume();  // suspends in async_join: the handle is empty now
    ASSERT_FALSE(waiting.done());
    EXPECT_FALSE(handle);
    ASSERT_TRUE(tx.try_send(5).ok());
    if (ended_first) {
      executor.run_pending();  // the task ends: the resumption is queued on `other`
      ASSERT_TRUE(ended.load());
    }
    { auto destroyed = std::move(waiting); }
    executor.run_pending();
    EXPECT_TRUE(ended.load()) << ended_first;
    EXPECT_EQ(other.run_pending(), 0u) << ended_first;
    EXPECT_EQ(resumed.load(), 0) << ended_first;
  }
}

// On one thread with a ManualExecutor (join() there would wait for ever):
// block_on runs the executor, with the other tasks on it, until the task
// ends, and returns its result or rethrows.
TEST(Task, BlockOnRunsTheExecutorUntilTheTaskEnds) {
  leanchan::ManualExecutor executor;
  auto [tx, rx] = leanchan::channel<int>(2);
  (void)async::spawn(executor, produce(std::move(tx), executor, 100));
  EXPECT_EQ(async::block_on(executor, consume(std::move(rx), executor)), 5050L);
  EXPECT_EQ(async::block_on(executor, sum_of_doubles(3)), 12);
  EXPECT_THROW(async::block_on(executor, fails()), std::runtime_error);
  EXPECT_EQ(executor.run_pending(), 0u);  // nothing left behind, no stop left pending
  EXPECT_EQ(async::block_on(executor, doubled(4)), 8);
}

// A coroutine that suspends in async_join on one thread and is resumed by
// a pool on another: await_suspend must not touch the frame after its RMW
// (it used to store a flag there, racing the resumption and the frame's
// end: TSan saw it on the first rounds).
struct Eager {  // starts at once, frees its frame at its end
  struct promise_type {
    Eager get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};

Eager join_from_main(async::JoinHandle<int> handle, leanchan::Executor& executor,
                     std::atomic<long>& sum, std::atomic<int>& done) {
  sum.fetch_add(co_await handle.async_join(executor));
  done.fetch_add(1);
  done.notify_all();
}

TEST(Task, AsyncJoinSuspendingOnOneThreadAndResumedOnAnother) {
  const int rounds = static_cast<int>(2000 * leanchan::testing::stress_scale()) + 100;
  leanchan::ThreadPoolExecutor pool(2);
  std::atomic<long> sum{0};
  std::atomic<int> done{0};
  for (int i = 0; i < rounds; ++i) join_from_main(async::spawn(pool, doubled(i)), pool, sum, done);
  for (int d = done.load(); d != rounds; d = done.load()) done.wait(d);
  EXPECT_EQ(sum.load(), long{rounds} * (rounds - 1));
}

// The awaitable async_join returns holds the task: awaited later, after
// the handle it came from is gone, it still joins.
TEST(Task, AsyncJoinsAwaitableHoldsTheTask) {
  leanchan::ManualExecutor executor;
  auto joiner = [](leanchan::Executor& ex) -> async::Task<int> {
    auto awaitable = async::spawn(ex, doubled(21)).async_join(ex);  // the handle is gone
    co_return co_await awaitable;
  };
  EXPECT_EQ(async::block_on(executor, joiner(executor)), 42);
}

// Awaiting a task empties it, and its frame (with the Sender it took by
// value) ends with the co_await, not with the Task variable.
TEST(Task, AnAwaitedTaskIsEmptyAndItsFrameGoneAfterTheAwait) {
  leanchan::ManualExecutor executor;
  auto [tx, rx] = leanchan::channel<int>(4);
  auto outer = [](async::Task<> inner, leanchan::Receiver<int>& r) -> async::Task<bool> {
    co_await std::move(inner);
    const bool emptied = !inner;  // NOLINT(bugprone-use-after-move): what is checked
    co_return emptied&& r.is_closed();
  };
  EXPECT_TRUE(async::block_on(executor, outer(produce(std::move(tx), executor, 3), rx)));
  EXPECT_EQ(rx.len(), 3u);
}

// A stop() of the executor made before block_on (ManualExecutor remembers
// it) does not end block_on early.
TEST(Task, BlockOnIgnoresAStopMadeBefore) {
  leanchan::ManualExecutor executor;
  executor.stop();
  EXPECT_EQ(async::block_on(executor, sum_of_doubles(4)), 20);
  executor.stop();
  executor.stop();
  EXPECT_EQ(async::block_on(executor, doubled(5)), 10);
}

// block_on's task ending on a pool thread, the executor destroyed as soon
// as block_on returns: the pool thread's schedule onto the executor (the
// wrapper's hop back) must not touch it after its unlock (it used to
// notify after it: TSan saw the destroyed condition variable signalled).
TEST(Task, BlockOnWhoseTaskEndsOnAPoolMayDestroyItsExecutorAtOnce) {
  const int rounds = static_cast<int>(300 * leanchan::testing::stress_scale()) + 20;
  leanchan::ThreadPoolExecutor pool(1);
  long sum = 0;
  for (int i = 0; i < rounds; ++i) {
    auto [tx, rx] = leanchan::channel<int>(1);
    std::thread feeder([t = std::move(tx)]() mutable { (void)t.try_send(1); });
    {
      auto executor = std::make_unique<leanchan::ManualExecutor>();
      auto on_pool = [](leanchan::Receiver<int> r, leanchan::Executor& p) -> async::Task<int> {
        std::optional<int> v = co_await r.async_recv(p);  // resumed on the pool
        co_return v.value_or(0);
      };
      sum += async::block_on(*executor, on_pool(std::move(rx), pool));
    }
    feeder.join();
  }
  EXPECT_EQ(sum, rounds);
}

// An exception another task's run throws out of ManualExecutor::run does
// not leave block_on with its task still running (it used to, and the task
// then touched the executor its caller had destroyed): block_on runs on
// until the task has ended, then rethrows the other run's exception.
TEST(Task, BlockOnRethrowsAnotherRunsExceptionOnlyOnceItsTaskEnded) {
  auto executor = std::make_unique<leanchan::ManualExecutor>();
  auto [tx, rx] = leanchan::channel<int>(1);
  ASSERT_TRUE(tx.try_send(5).ok());
  struct Thrower : leanchan::ExecutorTask {
    leanchan::ManualExecutor* executor = nullptr;
    int runs = 0;
  } thrower;
  thrower.executor = executor.get();
  thrower.run = [](leanchan::ExecutorTask* task) {
    auto* self = static_cast<Thrower*>(task);
    if (self->runs++ == 0) return self->executor->schedule(*self);  // behind block_on's task
    throw std::runtime_error("a bad run");
  };
  executor->schedule(thrower);
  std::atomic<bool> ended{false};
  auto receive = [](leanchan::Receiver<int> r, leanchan::Executor& ex,
                    std::atomic<bool>& e) -> async::Task<int> {
    std::optional<int> v = co_await r.async_recv(ex);
    e.store(true);
    co_return v.value_or(0);
  };
  EXPECT_THROW((void)async::block_on(*executor, receive(std::move(rx), *executor, ended)),
               std::runtime_error);
  EXPECT_TRUE(ended.load());
  EXPECT_EQ(thrower.runs, 2);
  EXPECT_EQ(executor->run_pending(), 0u);  // nothing left behind
  executor.reset();
  { auto gone = std::move(tx); }  // nothing scheduled on the destroyed executor
}

void drop_a_failing_task() {
  leanchan::ManualExecutor executor;
  (void)async::spawn(executor, fails());  // detached
  executor.run_pending();
}

void drop_a_failed_handle() {
  leanchan::ManualExecutor executor;
  async::JoinHandle<> handle = async::spawn(executor, fails());
  executor.run_pending();
}

TEST(TaskDeathTest, AnExceptionNobodyJoinsTerminatesWithAMessage) {
  EXPECT_DEATH(drop_a_failing_task(),
               "leanchan: a spawned task ended with an exception nobody joined: boom");
  EXPECT_DEATH(drop_a_failed_handle(),
               "leanchan: a spawned task ended with an exception nobody joined: boom");
}

TEST(TaskDeathTest, AnEmptyHandleOrTaskAbortsWithAMessage) {
  leanchan::ManualExecutor executor;
  async::JoinHandle<int> handle = async::spawn(executor, doubled(1));
  executor.run_pending();
  EXPECT_EQ(handle.join(), 2);
  EXPECT_DEATH((void)handle.join(), "leanchan: use of an empty JoinHandle");
  async::Task<int> task = doubled(2);
  async::Task<int> moved = std::move(task);
  EXPECT_DEATH((void)async::spawn(executor, std::move(task)), "leanchan: spawn of an empty Task");
  auto twice = [](leanchan::Executor& ex) -> async::Task<int> {
    auto awaitable = async::spawn(ex, doubled(1)).async_join(ex);
    int first = co_await awaitable;
    co_return first + co_await awaitable;  // the task is no longer there
  };
  EXPECT_DEATH((void)async::block_on(executor, twice(executor)),
               "leanchan: co_await of an async_join awaitable already awaited");
}

// Many detached tasks on a pool, each with its own channel to the
// collector: every message arrives once, and every frame is freed (the
// collector's loop ends only when every producer's Sender is gone).
TEST(Task, ManyDetachedProducersEachEndTheirPart) {
  constexpr int kProducers = 16;
  constexpr int kEach = 200;
  leanchan::ThreadPoolExecutor pool(2);
  auto [tx, rx] = leanchan::channel<int>(8);
  async::JoinHandle<long> total = async::spawn(pool, consume_any(std::move(rx), pool));
  for (int p = 0; p < kProducers; ++p) {
    (void)async::spawn(pool,
                       [](leanchan::Sender<int> sender, leanchan::Executor& ex) -> async::Task<> {
                         for (int i = 0; i < kEach; ++i) (void)co_await sender.async_send(1, ex);
                       }(tx, pool));
  }
  { auto gone = std::move(tx); }
  EXPECT_EQ(total.join(), long{kProducers} * kEach);
}

}  // namespace
