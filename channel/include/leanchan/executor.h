// SPDX-License-Identifier: MIT
// leanchan/executor.h: where coroutines awaiting a channel are resumed.
//
// A channel never resumes a coroutine on the thread that made it ready (a
// sender's or the receiver's): its notifier hands an ExecutorTask to the
// coroutine's Executor, whose own thread resumes it. ManualExecutor is a
// small single-threaded one for tests, examples and simple programs.
#ifndef LEANCHAN_EXECUTOR_H_
#define LEANCHAN_EXECUTOR_H_

#include "leanchan/export.h"

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace leanchan {

// A unit of work: a function and its links, owned by whoever schedules it
// (an awaitable keeps one inside the coroutine frame). Nothing allocates.
struct ExecutorTask {
  void (*run)(ExecutorTask* task) = nullptr;
  ExecutorTask* next = nullptr;  // the executor's
  bool queued = false;           // the executor's
};

class LEANCHAN_API Executor {
 public:
  virtual ~Executor() = default;
  // Queues `task` to run later on the executor's thread. Called from any
  // thread, including from inside a channel's notifier callback: it must
  // not block for long and must not run the task inline.
  virtual void schedule(ExecutorTask& task) noexcept = 0;
  // Removes `task` if it is still queued (its owner is done with it or going
  // away); does nothing otherwise. May be called from any thread, including
  // from inside the task's own run() (a finished awaitable withdraws a
  // second request queued while it ran); it must not wait for a run in
  // progress.
  virtual void cancel(ExecutorTask& task) noexcept = 0;
};

// Runs tasks on the thread that calls run() or run_pending(). schedule()
// and cancel() are thread-safe; run()/run_pending() belong to one thread at
// a time.
class LEANCHAN_API ManualExecutor final : public Executor {
 public:
  void schedule(ExecutorTask& task) noexcept override;
  void cancel(ExecutorTask& task) noexcept override;
  // Runs queued tasks (including ones queued meanwhile) until none is left.
  // Returns how many ran. Never waits.
  std::size_t run_pending();
  // Runs tasks as they come until stop() is called.
  void run();
  // Makes run() return once the task it is running (if any) is done.
  void stop() noexcept;

 private:
  ExecutorTask* pop_locked() noexcept;

  std::mutex mutex_;
  std::condition_variable wake_;
  ExecutorTask* head_ = nullptr;
  ExecutorTask* tail_ = nullptr;
  bool stopped_ = false;
};

}  // namespace leanchan

#endif  // LEANCHAN_EXECUTOR_H_
