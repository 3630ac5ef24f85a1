// SPDX-License-Identifier: MIT
/// @file
/// leanchan/executor.h: where coroutines awaiting a channel are resumed.
///
/// A channel never resumes a coroutine on the thread that made it ready (a
/// sender's or the receiver's): its notifier hands an ExecutorTask to the
/// coroutine's Executor, whose own thread resumes it. ManualExecutor is a
/// small single-threaded one for tests, examples and simple programs;
/// ThreadPoolExecutor runs tasks on a pool of threads it owns.
#ifndef LEANCHAN_EXECUTOR_H_
#define LEANCHAN_EXECUTOR_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "leanchan/export.h"

namespace leanchan {

/// A unit of work: a function and its links, owned by whoever schedules it
/// (an awaitable keeps one inside the coroutine frame). Nothing allocates.
struct ExecutorTask {
  /// The work: called on the executor's thread, with the task itself.
  void (*run)(ExecutorTask* task) = nullptr;
  ExecutorTask* next = nullptr;  ///< the executor's (its queue's link)
  bool queued = false;           ///< the executor's (whether the task is queued)
};

/// Where a coroutine awaiting a channel is resumed: the channel's notifier
/// schedules the awaitable's ExecutorTask here, and the executor's thread runs it.
class LEANCHAN_API Executor {
 public:
  /// Virtual: an executor may be destroyed through this interface.
  virtual ~Executor() = default;
  /// Queues `task` to run later on the executor's thread. Called from any
  /// thread, including from inside a channel's notifier callback: it must
  /// not block for long and must not run the task inline.
  virtual void schedule(ExecutorTask& task) noexcept = 0;
  /// Removes `task` if it is still queued (its owner is done with it or going
  /// away); does nothing otherwise. May be called from any thread, including
  /// from inside the task's own run() (a finished awaitable withdraws a
  /// second request queued while it ran); it must not wait for a run in
  /// progress.
  virtual void cancel(ExecutorTask& task) noexcept = 0;
};
/// @class Executor
/// Lifetime: a coroutine suspended on a channel (leanchan/coro.h) calls its
/// executor's cancel() when it is destroyed, and its notifier schedules on
/// the executor when the channel becomes ready: an executor must outlive
/// every coroutine suspended on it. A run should not throw: what
/// ManualExecutor's run()/run_pending() do with an exception is to pass it
/// on to their caller (the task is out of the queue, the rest stay queued);
/// ThreadPoolExecutor's workers cannot, and std::terminate is called.

/// Runs tasks on the thread that calls run() or run_pending(). schedule()
/// and cancel() are thread-safe; run()/run_pending() belong to one thread at
/// a time.
class LEANCHAN_API ManualExecutor final : public Executor {
 public:
  /// An executor with nothing queued.
  ManualExecutor() = default;
  ManualExecutor(const ManualExecutor&) = delete;
  ManualExecutor& operator=(const ManualExecutor&) = delete;
  /// Discards the tasks still queued (their run never called) and marks
  /// them not queued, as ThreadPoolExecutor's destructor does. No run() or
  /// run_pending() may be in progress, and no thread may schedule any more.
  ~ManualExecutor() override;

  void schedule(ExecutorTask& task) noexcept override;
  void cancel(ExecutorTask& task) noexcept override;
  /// Runs queued tasks (including ones queued meanwhile) until none is left.
  /// Returns how many ran. Never waits.
  std::size_t run_pending();
  /// Runs tasks as they come until a stop() ends it.
  void run();
  /// Makes run() return once the task it is running (if any) is done. A
  /// stop() is remembered until a run() takes it: one made while no run()
  /// is in progress makes the next run() return at once, running nothing
  /// (the queued tasks stay queued). Several stop() calls before a run()
  /// takes them count as one.
  void stop() noexcept;

 private:
  ExecutorTask* pop_locked() noexcept;

  std::mutex mutex_;
  std::condition_variable wake_;
  ExecutorTask* head_ = nullptr;
  ExecutorTask* tail_ = nullptr;
  bool stopped_ = false;
};

/// Runs tasks on `threads` worker threads it starts in its constructor and
/// joins in its destructor. schedule() and cancel() are thread-safe and keep
/// the Executor contract: neither runs a task inline nor waits for a run; a
/// task is never run on two threads at once (scheduled while it runs, it is
/// queued again when that run returns, by its worker, at the back of the
/// FIFO below: that worker usually takes it next, but any may); scheduling a
/// task that is already queued does nothing (one run covers both requests). Nothing
/// allocates after the constructor.
///
/// Order: a task scheduled from outside the pool goes to the back of a FIFO
/// queue that every worker serves. A task scheduled from a worker's own
/// thread (inside a run: a channel notifier firing in a coroutine the worker
/// resumed) takes that worker's next slot and runs on it as soon as the
/// current run returns, with no other thread woken: the sender and the
/// receiver it readied share one thread and its cache. A task already in
/// the slot moves to the back of a second FIFO queue, of displaced tasks;
/// after 16 runs in a row from its slot a worker serves the queues first,
/// and it takes from the two queues in turn while both hold tasks. The
/// price: a task in a slot waits for the run ahead of it, and a displaced
/// one for up to 16 slot runs after that, so runs must stay short, as on
/// any executor. A coroutine's run lasts until it suspends: one that keeps
/// receiving from a channel that always has a message (fed from outside the
/// pool) never suspends, and the senders it readies wait until it does.
///
/// Idle workers: a worker that finds no task watches the queues briefly
/// (the channel's waiting policy, pool_worker), then sleeps. A task scheduled from outside
/// wakes a sleeper, unless a worker is watching or a wake-up is on its way
/// already, and a worker that takes a task while one from outside still
/// waits wakes the next: at most one wake-up per scheduled task, none while
/// a watching worker will take it. A displaced task wakes nobody while at
/// most kQuietBacklog of them wait: the worker that displaced it is awake
/// and takes it after its slot, and a worker that is watching takes it
/// sooner. So a receive loop that readies many blocked senders runs them on
/// its own worker instead of waking another for each (far fewer messages
/// at far more CPU per message: docs/design.md, "The pool's wake-ups").
/// Work readied inside the pool runs in parallel only once more than
/// kQuietBacklog tasks wait, or where a worker is awake to take it: to
/// spread long computations over the workers, schedule them from outside
/// the pool. A run must never wait for a task readied on its own worker
/// (scheduled from inside the run, which includes a channel notifier that
/// a send or receive in the run fires), nor for one displaced before it:
/// with kQuietBacklog or fewer displaced, no other worker may be woken to
/// run it.
///
/// Stopping: stop() (or the destructor) lets each worker finish the run in
/// progress and exit; tasks still queued then never run. join() stops and
/// waits until every worker has exited. Shutting down with coroutines
/// suspended on the pool: stop() and join(), then destroy the coroutines
/// (each detaches from its channel and cancels its task: allowed after
/// stop(), and no worker can be resuming it any more), then the pool. A
/// coroutine must not be destroyed after the pool: its cancel() would reach
/// a destroyed executor. The destructor stops, joins and discards what is
/// still queued (its run never called; a Detached coroutine whose task was
/// discarded is leaked, as with any executor destroyed under it).
/// schedule() and cancel() are allowed after stop() (a scheduled task is
/// queued and never runs), and during join() or the destructor from a run
/// they wait for, but from no other thread once the destructor has begun:
/// no notifier of a channel on another thread may still fire into it then.
/// join() and the destructor must not run on one of the pool's threads.
class LEANCHAN_API ThreadPoolExecutor final : public Executor {
 public:
  /// Starts `threads` workers. Throws std::invalid_argument if `threads` is
  /// 0, and what std::thread throws if one cannot start (the ones started
  /// are stopped and joined first).
  explicit ThreadPoolExecutor(std::size_t threads);
  ThreadPoolExecutor(const ThreadPoolExecutor&) = delete;
  ThreadPoolExecutor& operator=(const ThreadPoolExecutor&) = delete;
  /// Stops, joins, and discards what is still queued (see the class comment).
  ~ThreadPoolExecutor() override;

  void schedule(ExecutorTask& task) noexcept override;
  void cancel(ExecutorTask& task) noexcept override;
  /// Makes every worker exit once the run it is in (if any) returns; tasks
  /// queued now or later stay queued and never run. Idempotent; returns
  /// without waiting.
  void stop() noexcept;
  /// stop(), then waits until every worker has exited: no run is in
  /// progress on return, and none starts. Idempotent. From one thread at a
  /// time, never from one of the pool's threads.
  void join();
  /// The workers started: the constructor's `threads`.
  std::size_t thread_count() const noexcept { return worker_count_; }
  /// Workers counted asleep now (a snapshot: for diagnostics and tests). A
  /// worker counts from the moment it decides to sleep, a moment before it
  /// blocks, until it is back from its wake-up and has taken the pool's
  /// lock; so a worker counted here may still be on its way into the sleep,
  /// and a wake-up issued then makes it return at once.
  std::size_t sleeping_workers() const noexcept;
  /// Wake-ups the pool has issued to sleeping workers since it started (not
  /// counting stop()'s): a counter for diagnostics and tests, which says
  /// whether a schedule() woke anyone.
  std::uint64_t wake_ups() const noexcept;

  /// Displaced tasks that may wait with no worker woken for them (above): a
  /// channel's blocked senders readied by one receive loop, each displacing
  /// the previous from the slot, stay on the receiver's worker up to this
  /// many.
  static constexpr std::size_t kQuietBacklog = 32;

 private:
  struct Worker;
  struct State;
  friend struct State;

  std::size_t worker_count_ = 0;
  std::unique_ptr<State> state_;
};

}  // namespace leanchan

#endif  // LEANCHAN_EXECUTOR_H_
