// SPDX-License-Identifier: MIT
// ThreadPoolExecutor: coroutines on a channel moved exactly once and in
// order, the Executor contract (cancel from inside a run, cancel of a
// queued task, never the same task on two threads), stopping and
// destruction with tasks queued, the next slot and its fairness, who is
// woken for a displaced task, and no allocation per schedule. No sleeps: every wait is on an
// atomic.
#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "leanchan/coro.h"
#include "leanchan/executor.h"
#include "leanchan/profiler/heap_probe.h"
#include "test_support.h"

namespace {

using leanchan::ExecutorTask;
using leanchan::ThreadPoolExecutor;
using leanchan::testing::Task;

// Waits until `flag` is true (atomic wait: no sleep, no spin).
void wait_for(const std::atomic<bool>& flag) {
  while (!flag.load()) flag.wait(false);
}
void raise(std::atomic<bool>& flag) {
  flag.store(true);
  flag.notify_all();
}

// A task whose run calls a function of its own.
template <class F>
struct FnTask : ExecutorTask {
  explicit FnTask(F f) : fn(std::move(f)) {
    run = [](ExecutorTask* self) { static_cast<FnTask*>(self)->fn(); };
  }
  F fn;
};
template <class F>
FnTask<F> fn_task(F f) {
  return FnTask<F>(std::move(f));
}

// Starts a coroutine on an executor (its first resume runs there).
struct Starter : ExecutorTask {
  explicit Starter(std::coroutine_handle<> h) : handle(h) {
    run = [](ExecutorTask* self) { static_cast<Starter*>(self)->handle.resume(); };
  }
  std::coroutine_handle<> handle;
};

struct Item {
  std::uint32_t producer = 0;
  std::uint32_t index = 0;
};

// Sends `count` items, then drops its sender (the last one to go ends the
// channel for the receiver).
Task produce(leanchan::Sender<Item> tx, leanchan::Executor& executor, std::uint32_t producer,
             std::uint32_t count, std::atomic<int>& failures) {
  {
    leanchan::Sender<Item> sender = std::move(tx);
    for (std::uint32_t i = 0; i < count; ++i) {
      auto result = co_await sender.async_send(Item{producer, i}, executor);
      if (!result.ok()) {
        failures.fetch_add(1);
        break;
      }
    }
  }
}

// Receives until the channel ends, checking each producer's order.
Task consume(leanchan::Receiver<Item>& rx, leanchan::Executor& executor,
             std::vector<std::uint32_t>& next, std::uint64_t& received, std::atomic<int>& failures,
             std::atomic<bool>& done) {
  while (std::optional<Item> item = co_await rx.async_recv(executor)) {
    if (item->producer >= next.size() || item->index != next[item->producer]) {
      failures.fetch_add(1);
    } else {
      ++next[item->producer];
    }
    ++received;
  }
  raise(done);
}

struct PoolCase {
  std::size_t threads;
  std::size_t capacity;
};

class ThreadPoolChannel : public ::testing::TestWithParam<PoolCase> {};

TEST_P(ThreadPoolChannel, CoroutinesMoveEveryMessageOnceInProducerOrder) {
  const PoolCase c = GetParam();
  constexpr std::uint32_t kProducers = 4;
  const auto total = static_cast<std::uint32_t>(
      std::max(4000.0, 100000 * leanchan::testing::stress_scale()) / kProducers * kProducers);
  const std::uint32_t per_producer = total / kProducers;

  auto [tx, rx] = leanchan::channel<Item>(c.capacity);
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::vector<std::uint32_t> next(kProducers, 0);
  std::uint64_t received = 0;
  std::vector<Task> tasks;
  {
    ThreadPoolExecutor pool(c.threads);
    tasks.push_back(consume(rx, pool, next, received, failures, done));
    for (std::uint32_t p = 0; p < kProducers; ++p) {
      tasks.push_back(produce(tx, pool, p, per_producer, failures));
    }
    { auto drop = std::move(tx); }  // the producers hold the only senders
    std::vector<Starter> starters;
    starters.reserve(tasks.size());
    for (Task& task : tasks) starters.emplace_back(task.handle);
    for (Starter& starter : starters) pool.schedule(starter);
    wait_for(done);
    // Every producer has dropped its sender (the channel ended), so each is
    // at its final suspend or about to be: the pool's destructor joins the
    // workers after their last run.
  }
  for (const Task& task : tasks) EXPECT_TRUE(task.done());
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(received, total);
  for (std::uint32_t p = 0; p < kProducers; ++p) EXPECT_EQ(next[p], per_producer) << p;
}

INSTANTIATE_TEST_SUITE_P(ThreadsAndCapacities, ThreadPoolChannel,
                         ::testing::Values(PoolCase{2, 1}, PoolCase{2, 16}, PoolCase{4, 1},
                                           PoolCase{4, 16}),
                         [](const ::testing::TestParamInfo<PoolCase>& param_info) {
                           return "threads" + std::to_string(param_info.param.threads) +
                                  "_capacity" + std::to_string(param_info.param.capacity);
                         });

TEST(ThreadPoolExecutor, RejectsZeroThreads) {
  EXPECT_THROW(ThreadPoolExecutor pool(0), std::invalid_argument);
}

// A task scheduled again while it runs and cancelled in the same run does
// not run again. One worker, FIFO order: a rerun the cancel missed would be
// queued when the run returns, ahead of `after`, which main schedules only
// once `check` (in A's slot) has run.
// join() from one of the pool's own workers would join that thread or
// wait for itself: it aborts with a message in every build (release builds
// used to throw from std::thread::join, or hang).
void join_from_a_worker() {
  ThreadPoolExecutor pool(1);
  struct Joiner : ExecutorTask {
    ThreadPoolExecutor* pool = nullptr;
    std::atomic<bool> returned{false};
  } joiner;
  joiner.pool = &pool;
  joiner.run = [](ExecutorTask* task) {
    auto* self = static_cast<Joiner*>(task);
    self->pool->join();
    self->returned.store(true);  // no death: the test fails
    self->returned.notify_all();
  };
  pool.schedule(joiner);
  joiner.returned.wait(false);
}

TEST(ThreadPoolExecutorDeathTest, JoinFromItsOwnWorkerAbortsWithAMessage) {
  EXPECT_DEATH(join_from_a_worker(),
               "leanchan: ThreadPoolExecutor::join or its destructor on one of its own workers");
}

TEST(ThreadPoolExecutor, CancelFromInsideItsOwnRunWithdrawsTheRerun) {
  std::atomic<int> a_runs{0};
  std::atomic<bool> a_queued_after_cancel{true};
  std::atomic<bool> a_queued_in_check{true};
  std::atomic<bool> checked{false};
  std::atomic<bool> after_ran{false};
  std::atomic<int> a_runs_seen_by_after{-1};
  ThreadPoolExecutor* pool_ptr = nullptr;
  FnTask<std::function<void()>>* a_ptr = nullptr;
  auto check = fn_task([&] {
    a_queued_in_check = a_ptr->queued;  // same thread as every write to it since
    raise(checked);
  });
  auto a = FnTask<std::function<void()>>([&] {
    a_runs.fetch_add(1);
    pool_ptr->schedule(*a_ptr);  // queued again while it runs
    pool_ptr->cancel(*a_ptr);    // and withdrawn by its own run
    a_queued_after_cancel = a_ptr->queued;
    pool_ptr->schedule(check);  // the worker's next slot: runs right after
  });
  a_ptr = &a;
  auto after = fn_task([&] {
    a_runs_seen_by_after = a_runs.load();
    raise(after_ran);
  });
  {
    ThreadPoolExecutor pool(1);
    pool_ptr = &pool;
    pool.schedule(a);
    wait_for(checked);
    pool.schedule(after);
    wait_for(after_ran);
  }
  EXPECT_EQ(a_runs.load(), 1);
  EXPECT_EQ(a_runs_seen_by_after.load(), 1);
  EXPECT_FALSE(a_queued_after_cancel.load());
  EXPECT_FALSE(a_queued_in_check.load());
  EXPECT_FALSE(a.queued);
}

// A task scheduled again from inside its own run runs again afterwards (on
// the same worker, after the run returns).
TEST(ThreadPoolExecutor, ScheduledFromItsOwnRunItRunsAgain) {
  std::atomic<int> runs{0};
  std::atomic<bool> finished{false};
  ThreadPoolExecutor* pool_ptr = nullptr;
  FnTask<std::function<void()>>* self = nullptr;
  auto task = FnTask<std::function<void()>>([&] {
    if (runs.fetch_add(1) + 1 < 1000) {
      pool_ptr->schedule(*self);
    } else {
      raise(finished);
    }
  });
  self = &task;
  auto pool = std::make_unique<ThreadPoolExecutor>(2);  // goes before the task
  pool_ptr = pool.get();
  pool->schedule(task);
  wait_for(finished);
  pool.reset();
  EXPECT_EQ(runs.load(), 1000);
}

// One worker held in a run: tasks scheduled meanwhile queue (in the FIFO
// from outside, in the worker's slot from inside); cancelling any of them,
// from the front, the middle or the back, or from the slot, withdraws it.
TEST(ThreadPoolExecutor, CancelWithdrawsAQueuedTaskWhereverItIs) {
  std::atomic<bool> blocker_running{false};
  std::atomic<bool> release{false};
  std::atomic<bool> finished{false};
  std::vector<int> order;  // written by the one worker, read after `finished`
  ThreadPoolExecutor* pool_ptr = nullptr;
  auto t1 = fn_task([&] { order.push_back(1); });
  auto t2 = fn_task([&] { order.push_back(2); });
  auto t3 = fn_task([&] { order.push_back(3); });
  auto t4 = fn_task([&] { order.push_back(4); });
  auto slotted = fn_task([&] { order.push_back(5); });
  auto last = fn_task([&] { raise(finished); });
  auto blocker = fn_task([&] {
    raise(blocker_running);
    wait_for(release);
    pool_ptr->schedule(slotted);  // into this worker's slot
    pool_ptr->cancel(slotted);    // and out of it
    pool_ptr->schedule(last);     // the slot again
  });
  ThreadPoolExecutor pool(1);
  pool_ptr = &pool;
  pool.schedule(blocker);
  wait_for(blocker_running);
  for (ExecutorTask* t : {static_cast<ExecutorTask*>(&t1), static_cast<ExecutorTask*>(&t2),
                          static_cast<ExecutorTask*>(&t3), static_cast<ExecutorTask*>(&t4)}) {
    pool.schedule(*t);
  }
  pool.schedule(t2);  // already queued: nothing more
  pool.cancel(t2);    // the middle
  pool.cancel(t1);    // the front
  pool.cancel(t4);    // the back
  pool.cancel(t4);    // not queued any more: nothing
  EXPECT_FALSE(t1.queued);
  EXPECT_FALSE(t2.queued);
  EXPECT_TRUE(t3.queued);
  EXPECT_FALSE(t4.queued);
  raise(release);
  wait_for(finished);
  // `last` ran from the slot before t3 (FIFO); wait for t3 through one more.
  std::atomic<bool> drained{false};
  auto drain = fn_task([&] { raise(drained); });
  pool.schedule(drain);
  wait_for(drained);
  EXPECT_EQ(order, (std::vector<int>{3}));
  EXPECT_FALSE(slotted.queued);
}

// stop(), then destruction, with tasks in every place a task can be queued:
// the FIFO, a worker's slot, a rerun of the task in progress, and one
// scheduled after stop(). None of them runs; each comes out not queued.
TEST(ThreadPoolExecutor, DestructionDiscardsQueuedTasksUnrun) {
  std::atomic<bool> blocker_running{false};
  std::atomic<bool> queued_outside{false};
  std::atomic<bool> queued_inside{false};
  std::atomic<bool> stopped{false};
  std::atomic<bool> blocker_done{false};
  std::atomic<int> runs{0};
  auto queued1 = fn_task([&] { runs.fetch_add(1); });
  auto queued2 = fn_task([&] { runs.fetch_add(1); });
  auto slotted = fn_task([&] { runs.fetch_add(1); });
  auto late = fn_task([&] { runs.fetch_add(1); });
  auto pool = std::make_unique<ThreadPoolExecutor>(1);
  ThreadPoolExecutor* pool_ptr = pool.get();
  std::atomic<int> blocker_runs{0};
  FnTask<std::function<void()>>* blocker_ptr = nullptr;
  auto blocker = FnTask<std::function<void()>>([&] {
    blocker_runs.fetch_add(1);
    raise(blocker_running);
    wait_for(queued_outside);
    pool_ptr->schedule(slotted);       // the slot
    pool_ptr->schedule(*blocker_ptr);  // a rerun of itself
    raise(queued_inside);
    wait_for(stopped);
    raise(blocker_done);  // its last access: the destructor may begin
  });
  blocker_ptr = &blocker;
  pool->schedule(blocker);
  wait_for(blocker_running);
  pool->schedule(queued1);
  pool->schedule(queued2);
  raise(queued_outside);
  wait_for(queued_inside);
  pool->stop();
  pool->stop();          // idempotent
  pool->schedule(late);  // after stop(): queued, never run
  raise(stopped);
  wait_for(blocker_done);
  pool.reset();  // waits for the blocker's run to return, then discards
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(blocker_runs.load(), 1);
  for (const ExecutorTask* t :
       {static_cast<const ExecutorTask*>(&queued1), static_cast<const ExecutorTask*>(&queued2),
        static_cast<const ExecutorTask*>(&slotted), static_cast<const ExecutorTask*>(&late),
        static_cast<const ExecutorTask*>(&blocker)}) {
    EXPECT_FALSE(t->queued);
  }
}

// ManualExecutor's destructor discards what is still queued the same way:
// unmarked, so that another executor runs a task scheduled there later
// (left marked queued, it ignored every schedule()).
TEST(ManualExecutor, DestructionUnmarksQueuedTasks) {
  int runs = 0;
  auto first = fn_task([&] { ++runs; });
  auto second = fn_task([&] { ++runs; });
  {
    leanchan::ManualExecutor executor;
    executor.schedule(first);
    executor.schedule(second);
    EXPECT_TRUE(first.queued);
  }
  EXPECT_EQ(runs, 0);
  EXPECT_FALSE(first.queued);
  EXPECT_FALSE(second.queued);
  leanchan::ManualExecutor next;
  next.schedule(first);
  next.schedule(second);
  EXPECT_EQ(next.run_pending(), 2u);
  EXPECT_EQ(runs, 2);
}

// A stop() made while no run() is in progress is remembered: the next
// run() returns at once and runs nothing; the one after runs again.
TEST(ManualExecutor, AStopBeforeRunEndsTheNextRun) {
  leanchan::ManualExecutor executor;
  int runs = 0;
  auto task = fn_task([&] { ++runs; });
  executor.schedule(task);
  executor.stop();
  executor.stop();  // counts as one
  executor.run();   // returns at once
  EXPECT_EQ(runs, 0);
  EXPECT_TRUE(task.queued);
  auto stopper = fn_task([&] { executor.stop(); });
  executor.schedule(stopper);
  executor.run();  // runs the task, then the stopper, and returns
  EXPECT_EQ(runs, 1);
}

// Shutting down with a coroutine suspended on the pool: stop() and join(),
// then the coroutine, then the pool (leanchan/executor.h, "Stopping").
// The coroutine's destruction cancels its task on the pool, so it must
// come before the pool's; join() is what lets it come after every worker
// has stopped, so that none can be resuming it.
Task wait_for_one(leanchan::Receiver<int>& rx, leanchan::Executor& executor, int& got) {
  std::optional<int> value = co_await rx.async_recv(executor);
  got = value ? *value : -1;
}

TEST(ThreadPoolExecutor, ShutsDownUnderACoroutineSuspendedOnIt) {
  auto [tx, rx] = leanchan::channel<int>(4);
  auto pool = std::make_unique<ThreadPoolExecutor>(2);
  int got = 0;
  std::optional<Task> waiter(wait_for_one(rx, *pool, got));
  waiter->handle.resume();  // runs here until it suspends: the channel is empty
  ASSERT_FALSE(waiter->done());
  pool->stop();
  pool->join();
  pool->join();                      // idempotent
  waiter.reset();                    // detaches from the channel and cancels on the live pool
  EXPECT_TRUE(tx.try_send(1).ok());  // nothing left to notify
  pool.reset();
  EXPECT_EQ(got, 0);  // never resumed
  EXPECT_EQ(rx.try_recv().value(), 1);
}

// Destruction while tasks keep scheduling themselves on every worker: the
// destructor returns, no task runs after it, and none is left queued.
TEST(ThreadPoolExecutor, DestructionStopsSelfReschedulingTasks) {
  constexpr int kTasks = 8;
  struct Loop : ExecutorTask {
    ThreadPoolExecutor* pool = nullptr;
    std::atomic<std::uint64_t> runs{0};
    std::atomic<bool>* started = nullptr;
  };
  std::vector<Loop> loops(kTasks);
  std::atomic<bool> started{false};
  auto pool = std::make_unique<ThreadPoolExecutor>(2);
  for (Loop& loop : loops) {
    loop.pool = pool.get();
    loop.started = &started;
    loop.run = [](ExecutorTask* self) {
      auto* l = static_cast<Loop*>(self);
      if (l->runs.fetch_add(1) == 100) raise(*l->started);
      l->pool->schedule(*l);
    };
    pool->schedule(loop);
  }
  wait_for(started);
  pool.reset();
  std::uint64_t total = 0;
  for (Loop& loop : loops) {
    EXPECT_FALSE(loop.queued);
    total += loop.runs.load();
  }
  EXPECT_GT(total, 100u);
  std::uint64_t again = 0;
  for (Loop& loop : loops) again += loop.runs.load();
  EXPECT_EQ(again, total);
}

// Many threads schedule the same tasks over and over (and the tasks
// reschedule themselves) while four workers run them: no task's run ever
// overlaps another run of the same task.
TEST(ThreadPoolExecutor, ATaskNeverRunsConcurrentlyWithItself) {
  constexpr int kTasks = 6;
  constexpr int kSchedulers = 3;
  const int rounds = std::max(2000, static_cast<int>(30000 * leanchan::testing::stress_scale()));
  struct Probe : ExecutorTask {
    ThreadPoolExecutor* pool = nullptr;
    std::atomic<bool> inside{false};
    std::atomic<int> overlaps{0};
    std::atomic<std::uint64_t> runs{0};
  };
  std::vector<Probe> probes(kTasks);
  {
    ThreadPoolExecutor pool(4);
    for (Probe& probe : probes) {
      probe.pool = &pool;
      probe.run = [](ExecutorTask* self) {
        auto* p = static_cast<Probe*>(self);
        if (p->inside.exchange(true)) p->overlaps.fetch_add(1);
        const std::uint64_t n = p->runs.fetch_add(1);
        // Stay inside long enough for another worker to try.
        for (int i = 0; i < 64; ++i) (void)p->runs.load(std::memory_order_relaxed);
        if (n % 4 == 0) p->pool->schedule(*p);  // a rerun from inside
        p->inside.store(false);
      };
    }
    // The schedulers keep going until the runs reach `rounds`: scheduling
    // and running overlap all along.
    const auto total_runs = [&probes] {
      std::uint64_t n = 0;
      for (Probe& probe : probes) n += probe.runs.load(std::memory_order_relaxed);
      return n;
    };
    std::vector<std::thread> schedulers;
    for (int s = 0; s < kSchedulers; ++s) {
      schedulers.emplace_back([&, s] {
        for (int r = 0; total_runs() < static_cast<std::uint64_t>(rounds); ++r) {
          Probe& probe = probes[static_cast<std::size_t>((r + s) % kTasks)];
          pool.schedule(probe);
          if (r % 7 == 0) pool.cancel(probe);
        }
      });
    }
    for (std::thread& t : schedulers) t.join();
  }
  std::uint64_t runs = 0;
  for (Probe& probe : probes) {
    EXPECT_EQ(probe.overlaps.load(), 0);
    EXPECT_FALSE(probe.queued);
    runs += probe.runs.load();
  }
  EXPECT_GE(runs, static_cast<std::uint64_t>(rounds));
}

// A task scheduled from inside a run takes that worker's next slot: it runs
// on the same thread, right after the run that scheduled it.
TEST(ThreadPoolExecutor, ScheduledFromAWorkerItRunsNextOnThatWorker) {
  std::atomic<bool> finished{false};
  std::thread::id first_thread;
  std::thread::id second_thread;
  bool second_ran_before_return = true;
  bool first_returned = false;
  auto second = fn_task([&] {
    second_thread = std::this_thread::get_id();
    second_ran_before_return = !first_returned;
    raise(finished);
  });
  ThreadPoolExecutor* pool_ptr = nullptr;
  auto first = fn_task([&] {
    first_thread = std::this_thread::get_id();
    pool_ptr->schedule(second);
    first_returned = true;  // before `second` runs: it waits for this run
  });
  {
    ThreadPoolExecutor pool(2);
    pool_ptr = &pool;
    pool.schedule(first);
    wait_for(finished);
  }
  EXPECT_EQ(first_thread, second_thread);
  EXPECT_FALSE(second_ran_before_return);
}

// Two tasks that keep handing over to each other through one worker's next
// slot do not starve a task in the FIFO: it runs within kSlotStreak runs.
TEST(ThreadPoolExecutor, ASlotPingPongDoesNotStarveTheQueue) {
  std::atomic<bool> outsider_ran{false};
  std::atomic<bool> ping_running{false};
  std::atomic<bool> release{false};
  std::atomic<int> handovers{0};
  ThreadPoolExecutor* pool_ptr = nullptr;
  FnTask<std::function<void()>>* ping_ptr = nullptr;
  FnTask<std::function<void()>>* pong_ptr = nullptr;
  auto ping = FnTask<std::function<void()>>([&] {
    if (!ping_running.load()) {
      raise(ping_running);
      wait_for(release);  // the outsider is queued by now
    }
    handovers.fetch_add(1);
    if (!outsider_ran.load()) pool_ptr->schedule(*pong_ptr);
  });
  auto pong = FnTask<std::function<void()>>([&] {
    handovers.fetch_add(1);
    if (!outsider_ran.load()) pool_ptr->schedule(*ping_ptr);
  });
  ping_ptr = &ping;
  pong_ptr = &pong;
  auto outsider = fn_task([&] { raise(outsider_ran); });
  {
    ThreadPoolExecutor pool(1);
    pool_ptr = &pool;
    pool.schedule(ping);
    wait_for(ping_running);
    pool.schedule(outsider);
    raise(release);
    wait_for(outsider_ran);
  }
  EXPECT_LE(handovers.load(), 18);
}

// Waits until `count` of the pool's workers sleep (a state the pool
// reaches by itself once idle: each worker watches briefly, then sleeps).
void wait_until_sleeping(const ThreadPoolExecutor& pool, std::size_t count) {
  while (pool.sleeping_workers() < count) std::this_thread::yield();
}

// A task displaced from a worker's slot wakes nobody: the only wake-up is
// the one the task from outside the pool issues. (Counted, not inferred
// from sleeping_workers(): a worker counted asleep may still be on its way
// into the sleep, and the first wake-up then wakes it too, which is allowed.
// Which worker runs the displaced task is not pinned either: a worker that
// is awake may take it from the queue.) With a wake-up per displaced task
// this counts 2 (199 runs in 200); it counts 1 then only if the other
// worker was awake and watching, which suppresses the second.
TEST(ThreadPoolExecutor, ADisplacedTaskWakesNobody) {
  std::atomic<bool> finished{false};
  std::atomic<bool> slot_ran{false};
  std::thread::id first_thread;
  std::thread::id slot_thread;
  ThreadPoolExecutor* pool_ptr = nullptr;
  auto displaced = fn_task([&] { raise(finished); });
  auto slot = fn_task([&] {
    slot_thread = std::this_thread::get_id();
    raise(slot_ran);
  });
  auto first = fn_task([&] {
    first_thread = std::this_thread::get_id();
    pool_ptr->schedule(displaced);  // the slot, until `slot` displaces it
    pool_ptr->schedule(slot);
  });
  std::uint64_t wake_ups = 0;
  {
    ThreadPoolExecutor pool(2);
    pool_ptr = &pool;
    wait_until_sleeping(pool, 2);
    const std::uint64_t before = pool.wake_ups();
    pool.schedule(first);  // wakes one worker
    wait_for(finished);
    wait_for(slot_ran);
    wake_ups = pool.wake_ups() - before;
  }
  EXPECT_EQ(wake_ups, 1u);
  EXPECT_EQ(slot_thread, first_thread);  // a slot is its worker's alone
}

// More than kQuietBacklog displaced tasks wake a sleeper: a run that
// displaces that many and then waits for one of them to run elsewhere
// returns (with no wake-up, the other worker would sleep on).
TEST(ThreadPoolExecutor, ABacklogOfDisplacedTasksWakesASleeper) {
  constexpr std::size_t kTasks = ThreadPoolExecutor::kQuietBacklog + 2;  // one in the slot
  std::atomic<bool> helped{false};
  std::atomic<int> runs{0};
  std::thread::id first_thread;
  ThreadPoolExecutor* pool_ptr = nullptr;
  std::vector<FnTask<std::function<void()>>> tasks;
  tasks.reserve(kTasks);
  for (std::size_t i = 0; i < kTasks; ++i) {
    tasks.emplace_back([&] {
      if (std::this_thread::get_id() != first_thread) raise(helped);
      runs.fetch_add(1);
      runs.notify_all();
    });
  }
  auto first = fn_task([&] {
    first_thread = std::this_thread::get_id();
    for (auto& task : tasks) pool_ptr->schedule(task);
    wait_for(helped);  // only another worker can run them now
  });
  {
    ThreadPoolExecutor pool(2);
    pool_ptr = &pool;
    wait_until_sleeping(pool, 2);
    pool.schedule(first);
    for (int seen = runs.load(); seen < static_cast<int>(kTasks); seen = runs.load())
      runs.wait(seen);
  }
  EXPECT_TRUE(helped.load());
  EXPECT_EQ(runs.load(), static_cast<int>(kTasks));
}

// After construction nothing allocates: scheduling from a worker (the
// slot), a rerun cancelled by its own run, scheduling from outside (the
// FIFO), sleeping and waking.
TEST(ThreadPoolExecutor, SchedulingAllocatesNothing) {
  constexpr int kRounds = 2000;
  constexpr int kOutside = 200;
  struct Hop : ExecutorTask {
    ThreadPoolExecutor* pool = nullptr;
    Hop* other = nullptr;
    std::atomic<int>* runs = nullptr;
    std::atomic<bool>* finished = nullptr;
  };
  std::atomic<int> runs{0};
  std::atomic<bool> finished{false};
  Hop a;
  Hop b;
  std::atomic<int> outside_runs{0};
  auto outside = fn_task([&] {
    outside_runs.fetch_add(1);
    outside_runs.notify_all();
  });
  auto pool = std::make_unique<ThreadPoolExecutor>(2);  // goes before the tasks
  for (Hop* h : {&a, &b}) {
    h->pool = pool.get();
    h->runs = &runs;
    h->finished = &finished;
    // One chain: each run hands over to the other, which runs next on the
    // same worker, so no two runs of the chain overlap.
    h->run = [](ExecutorTask* self) {
      auto* hop = static_cast<Hop*>(self);
      const int n = hop->runs->fetch_add(1) + 1;
      if (n >= kRounds) {
        raise(*hop->finished);
        return;
      }
      hop->pool->schedule(*hop->other);  // the slot
      if (n % 3 == 0) {
        hop->pool->schedule(*hop);  // a rerun
        hop->pool->cancel(*hop);    // withdrawn by its own run
      }
    };
  }
  a.other = &b;
  b.other = &a;
  leanchan::profiler::HeapProbe probe;
  pool->schedule(a);
  wait_for(finished);
  for (int i = 0; i < kOutside; ++i) {
    pool->schedule(outside);
    while (outside_runs.load() == i) outside_runs.wait(i);
  }
  const std::uint64_t allocations = probe.allocations();
  pool.reset();
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(runs.load(), kRounds);
  EXPECT_EQ(outside_runs.load(), kOutside);
}

}  // namespace
