// SPDX-License-Identifier: MIT
/// @file
/// leanchan/async/task.h: a coroutine task type and spawn(), so that a
/// program of coroutines over channels needs nothing of its own.
///
/// A complete program (tests/samples builds and runs it):
///
/// @code
///   #include <cstdio>
///   #include <optional>
///   #include <utility>
///
///   #include "leanchan/async/task.h"
///   #include "leanchan/channel.h"
///
///   namespace async = leanchan::async;
///
///   // The sender is taken by value: it lives in the coroutine's frame,
///   // which a spawned task frees when it ends; the channel then ends too.
///   async::Task<> produce(leanchan::Sender<int> tx, leanchan::Executor& ex) {
///     for (int i = 1; i <= 100; ++i) {
///       if (!(co_await tx.async_send(i, ex)).ok()) co_return;  // receiver gone
///     }
///   }
///
///   async::Task<long> consume(leanchan::Receiver<int> rx, leanchan::Executor& ex) {
///     long sum = 0;
///     while (std::optional<int> v = co_await rx.async_recv(ex)) sum += *v;
///     co_return sum;  // every sender is gone and the channel is drained
///   }
///
///   int main() {
///     leanchan::ThreadPoolExecutor pool(2);
///     auto [tx, rx] = leanchan::channel<int>(8);
///     async::JoinHandle<long> total = async::spawn(pool, consume(std::move(rx), pool));
///     async::spawn(pool, produce(std::move(tx), pool));  // detached: runs to its end
///     std::printf("%ld\n", total.join());                // 5050
///   }
/// @endcode
///
/// Task<T> is lazy: calling a coroutine that returns one runs nothing. A task
/// runs when it is spawned on an executor (spawn, below) or awaited by
/// another task (co_await task: it runs on the awaiting task's thread and
/// the awaiting task continues with its result, or its exception).
///
/// A spawned task starts on its executor's thread and frees its frame as
/// soon as it ends, on the thread that ran its last step: the parameters it
/// took by value (a Sender, a Receiver) are destroyed then, before anyone
/// joining it is told. A hand-written task whose final_suspend returns
/// std::suspend_always keeps them until its owner destroys the frame: a
/// producer coroutine holding its Sender that way keeps the channel open,
/// and a receive loop waiting for the channel to end waits for ever.
///
/// JoinHandle<T> is what spawn returns. join() blocks the calling thread
/// until the task has ended and returns its result (or rethrows its
/// exception): never inside a run of an executor (see join()). co_await
/// handle.async_join(executor) does the same in a coroutine, resumed on
/// `executor`. Dropping the handle detaches the task,
/// which runs on. An exception that escapes a task nobody joins (its handle
/// dropped, or never joined) calls std::terminate with a message, as one
/// escaping a std::thread does: exceptions never vanish.
///
/// Lifetime: the executor must outlive every task spawned on it. A task
/// whose first step is discarded (its executor stopped or destroyed first)
/// never runs, its frame is not freed, and join() waits for ever: stop and
/// join the executor only once the tasks have ended. Calling join() on the
/// only thread that runs the task's executor (a ManualExecutor's) waits for
/// ever too: use block_on(executor, task) there (it runs the executor until
/// the task ends), or join from another task with async_join.
#ifndef LEANCHAN_ASYNC_TASK_H_
#define LEANCHAN_ASYNC_TASK_H_

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "leanchan/executor.h"
#include "leanchan/internal/contract.h"

namespace leanchan::async {

/// @cond
template <class T = void>
class Task;
template <class T = void>
class JoinHandle;
template <class T>
JoinHandle<T> spawn(Executor& executor, Task<T> task);
/// @endcond

namespace detail {

// A task whose run resumes a coroutine: how a coroutine is handed to an
// executor (spawn's first step, async_join's resumption, block_on's hop).
struct ResumeTask : ExecutorTask {
  ResumeTask() noexcept {
    run = [](ExecutorTask* task) { static_cast<ResumeTask*>(task)->coroutine.resume(); };
  }
  std::coroutine_handle<> coroutine;
};

// What a spawned task and its JoinHandle share: the task's result, and who
// is still using it. Allocated by spawn(); freed by whichever side lets go
// last (`refs`).
template <class T>
struct JoinState {
  static constexpr std::uint32_t kDone = 1;              // the result is set
  static constexpr std::uint32_t kHandleGone = 2;        // nobody will read it
  static constexpr std::uint32_t kAwaited = 4;           // a coroutine waits: `waiter`
  static constexpr std::uint32_t kWaiterHandedOver = 8;  // complete() is done with it

  std::atomic<std::uint32_t> flags{0};
  std::atomic<std::uint32_t> refs{2};  // the task's side and the handle's
  ResumeTask start;                    // the task's first step, scheduled by spawn()
  ExecutorTask* waiter = nullptr;      // with kAwaited
  Executor* waiter_executor = nullptr;
  std::conditional_t<std::is_void_v<T>, std::monostate, std::optional<T>> value;
  std::exception_ptr error;

  void release() noexcept {
    // acq_rel: the side that frees sees every write of the other.
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // The task's side, after its frame is freed: publish, tell a waiter,
  // let go.
  void complete() noexcept {
    // acq_rel: release publishes the result; acquire sees the waiter an
    // async_join stored before its kAwaited.
    const std::uint32_t before = flags.fetch_or(kDone, std::memory_order_acq_rel);
    if ((before & kHandleGone) != 0 && error) unjoined_exception(error);
    if ((before & kAwaited) != 0) {
      waiter_executor->schedule(*waiter);
      // release: an awaiter withdrawing may now cancel what was scheduled.
      flags.fetch_or(kWaiterHandedOver, std::memory_order_release);
    }
    flags.notify_all();  // join() and a withdrawing awaiter wait on flags
    release();
  }

  [[noreturn]] static void unjoined_exception(const std::exception_ptr& error) noexcept {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "leanchan: a spawned task ended with an exception nobody joined: %s\n",
                   e.what());
    } catch (...) {
      std::fprintf(stderr, "leanchan: a spawned task ended with an exception nobody joined\n");
    }
    std::terminate();
  }
};

// The result of a task that is awaited (not spawned).
template <class T>
struct AwaitedResult {
  std::variant<std::monostate, T, std::exception_ptr> result;
  T take() {
    if (result.index() == 2) std::rethrow_exception(std::get<2>(result));
    return std::move(std::get<1>(result));
  }
};
template <>
struct AwaitedResult<void> {
  std::exception_ptr error;
  void take() {
    if (error) std::rethrow_exception(error);
  }
};

template <class T>
class PromiseBase {
 public:
  std::suspend_always initial_suspend() noexcept { return {}; }

  struct FinalAwaiter {
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> handle) noexcept {
      PromiseBase& promise = handle.promise();
      if (JoinState<T>* state = promise.join_) {
        // Spawned: free the frame first (its by-value parameters with it),
        // then tell the handle. Nothing touches the frame afterwards.
        handle.destroy();
        state->complete();
        return std::noop_coroutine();
      }
      if (promise.continuation_) return promise.continuation_;
      return std::noop_coroutine();
    }
    void await_resume() const noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }

  void unhandled_exception() noexcept {
    if (join_ != nullptr) {
      join_->error = std::current_exception();
    } else if constexpr (std::is_void_v<T>) {
      awaited_.error = std::current_exception();
    } else {
      awaited_.result.template emplace<2>(std::current_exception());
    }
  }

 protected:
  template <class U>
  friend class leanchan::async::Task;
  template <class U>
  friend JoinHandle<U> leanchan::async::spawn(Executor& executor, Task<U> task);

  std::coroutine_handle<> continuation_;  // the awaiting task, when awaited
  JoinState<T>* join_ = nullptr;          // when spawned
  AwaitedResult<T> awaited_;
};

template <class T>
class Promise : public PromiseBase<T> {
 public:
  Task<T> get_return_object() noexcept;
  template <class U = T>
  requires std::is_convertible_v<U&&, T>
  void return_value(U&& value) {
    if (this->join_ != nullptr) {
      this->join_->value.emplace(std::forward<U>(value));
    } else {
      this->awaited_.result.template emplace<1>(std::forward<U>(value));
    }
  }
};

template <>
class Promise<void> : public PromiseBase<void> {
 public:
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
};

}  // namespace detail

/// A lazy coroutine returning T: runs when spawned or awaited (see the top
/// of this file). Move-only; owns its frame until then, and destroys it
/// unrun if it is dropped.
template <class T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::Promise<T>;  ///< the coroutine machinery's
  using value_type = T;                     ///< what the task returns

  /// Takes the frame; `other` is empty afterwards.
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  /// Destroys the frame held (unrun), then takes `other`'s.
  Task& operator=(Task other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~Task() {
    if (handle_) handle_.destroy();
  }

  /// True unless moved from, spawned or awaited.
  explicit operator bool() const noexcept { return static_cast<bool>(handle_); }

  /// co_await task: runs the task on this thread until it suspends; the
  /// awaiting coroutine continues when it ends, with its result (or its
  /// exception rethrown). On an empty task it aborts with a message.
  auto operator co_await() && noexcept {
    // Owns the child frame from here on (the Task is empty), and destroys
    // it at the end of the co_await expression: its by-value parameters
    // go then, not when the Task variable does.
    class Awaiter {
     public:
      explicit Awaiter(std::coroutine_handle<promise_type> child) noexcept : child_(child) {}
      Awaiter(const Awaiter&) = delete;
      Awaiter& operator=(const Awaiter&) = delete;
      ~Awaiter() { child_.destroy(); }
      bool await_ready() const noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) noexcept {
        child_.promise().continuation_ = parent;
        return child_;
      }
      T await_resume() { return child_.promise().awaited_.take(); }

     private:
      std::coroutine_handle<promise_type> child_;
    };
    if (!handle_) [[unlikely]] {
      internal::contract_violation("co_await of an empty Task (moved from, spawned or awaited)");
    }
    return Awaiter(std::exchange(handle_, nullptr));
  }

 private:
  friend class detail::Promise<T>;
  template <class U>
  friend JoinHandle<U> spawn(Executor& executor, Task<U> task);
  explicit Task(std::coroutine_handle<promise_type> handle) noexcept : handle_(handle) {}

  std::coroutine_handle<promise_type> handle_;
};

namespace detail {
template <class T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}
}  // namespace detail

/// The handle of a spawned task (see the top of this file). Move-only.
/// Dropping it detaches the task; join() and async_join() take its result
/// once. Any other call on an empty handle (joined or moved from) aborts
/// with a message.
template <class T>
class JoinHandle {
 public:
  /// An empty handle.
  JoinHandle() noexcept = default;
  /// Takes the task; `other` is empty afterwards.
  JoinHandle(JoinHandle&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  /// Detaches the task held (as the destructor), then takes `other`'s.
  JoinHandle& operator=(JoinHandle other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  /// Detaches the task. If it has ended with an exception nobody took,
  /// std::terminate with a message.
  ~JoinHandle() { let_go(std::exchange(state_, nullptr)); }

  /// True until joined or moved from.
  explicit operator bool() const noexcept { return state_ != nullptr; }

  /// True once the task has ended (a snapshot).
  bool is_finished() const noexcept {
    // acquire: a true answer lets the caller see what the task did.
    return (checked()->flags.load(std::memory_order_acquire) & State::kDone) != 0;
  }

  /// Blocks until the task has ended; returns its result or rethrows its
  /// exception. The handle is empty afterwards. Never call it inside a run
  /// of an executor (a task, a coroutine): a task spawned from a worker
  /// may wait in that worker's own slot, and a ManualExecutor's only
  /// thread would wait for itself. There, use async_join or block_on.
  T join() {
    State* state = checked();
    // acquire (each load): pairs with complete()'s release, so that the
    // result is seen once kDone is.
    std::uint32_t flags = state->flags.load(std::memory_order_acquire);
    while ((flags & State::kDone) == 0) {
      state->flags.wait(flags, std::memory_order_acquire);
      flags = state->flags.load(std::memory_order_acquire);
    }
    state_ = nullptr;
    return take(state);
  }

  /// co_await handle.async_join(executor): join() for a coroutine, which
  /// is resumed on `executor` once the task has ended (at once if it has).
  /// The handle is empty from this call on: the awaitable holds the task.
  /// A coroutine suspended here may be destroyed (the wait is withdrawn,
  /// and the task detached: if it ended, or ends, with an exception, that
  /// is one nobody joins) under the rule of any leanchan awaitable: on the
  /// executor's thread, or once no run can be in progress
  /// (leanchan/coro.h, "Cancellation").
  [[nodiscard]] auto async_join(Executor& executor) noexcept {
    class Awaiter {
     public:
      Awaiter(State* state, Executor& executor) noexcept : state_(state), executor_(&executor) {}
      Awaiter(const Awaiter&) = delete;
      Awaiter& operator=(const Awaiter&) = delete;
      ~Awaiter() {
        withdraw();
        let_go(std::exchange(state_, nullptr));  // not awaited, or destroyed while waiting
      }

      bool await_ready() const noexcept {
        if (state_ == nullptr) [[unlikely]] {
          internal::contract_violation("co_await of an async_join awaitable already awaited");
        }
        // acquire: a true answer lets await_resume see the result.
        return (state_->flags.load(std::memory_order_acquire) & State::kDone) != 0;
      }
      bool await_suspend(std::coroutine_handle<> coroutine) noexcept {
        resume_.coroutine = coroutine;
        state_->waiter = &resume_;
        state_->waiter_executor = executor_;
        // Set before the RMW: once it lands without kDone, complete() may
        // resume the coroutine on another thread, and nothing here may
        // touch the frame any more.
        armed_ = true;
        // acq_rel: release publishes the waiter to complete(); acquire
        // (when kDone is already set) sees the result.
        const std::uint32_t before =
            state_->flags.fetch_or(State::kAwaited, std::memory_order_acq_rel);
        if ((before & State::kDone) == 0) return true;
        armed_ = false;  // ended first: complete() will not look at the waiter
        return false;
      }
      T await_resume() {
        armed_ = false;
        return take(std::exchange(state_, nullptr));
      }

     private:
      // Destroyed while suspended: take the wait back so that nothing
      // resumes a destroyed coroutine.
      void withdraw() noexcept {
        if (!armed_) return;
        armed_ = false;
        // acq_rel: acquire, so that a kDone seen here comes with the rest of
        // complete()'s writes; release, so that complete() reading the bit
        // cleared does not look at the waiter.
        const std::uint32_t before =
            state_->flags.fetch_and(~State::kAwaited, std::memory_order_acq_rel);
        if ((before & State::kDone) == 0) return;  // complete() will not look
        // complete() saw kAwaited: wait until it has scheduled the
        // resumption (acquire: pairs with its release of
        // kWaiterHandedOver), then withdraw it. The state stays alive: this
        // awaitable holds a reference.
        std::uint32_t flags = state_->flags.load(std::memory_order_acquire);
        while ((flags & State::kWaiterHandedOver) == 0) {
          state_->flags.wait(flags, std::memory_order_acquire);
          flags = state_->flags.load(std::memory_order_acquire);
        }
        executor_->cancel(resume_);
      }

      State* state_;
      Executor* executor_;
      detail::ResumeTask resume_;
      bool armed_ = false;
    };
    (void)checked();
    return Awaiter(std::exchange(state_, nullptr), executor);
  }

 private:
  using State = detail::JoinState<T>;
  template <class U>
  friend JoinHandle<U> spawn(Executor& executor, Task<U> task);
  explicit JoinHandle(State* state) noexcept : state_(state) {}

  State* checked() const noexcept {
    if (state_ == nullptr) [[unlikely]] {
      internal::contract_violation("use of an empty JoinHandle (joined or moved from)");
    }
    return state_;
  }

  // The result of a task that has ended (kDone seen with acquire); lets go
  // of the state.
  static T take(State* state) {
    struct Release {
      State* state;
      ~Release() { state->release(); }
    } release{state};
    // take() consumes the exception: it is not "nobody joined" any more.
    if (state->error) std::rethrow_exception(std::exchange(state->error, nullptr));
    if constexpr (!std::is_void_v<T>) return std::move(*state->value);
  }

  // Detaches from the task (null: nothing held).
  static void let_go(State* state) noexcept {
    if (state == nullptr) return;
    // acq_rel: acquire, so that an error the task stored before its kDone
    // is seen here; the release half is not needed (the state is freed by
    // release()'s own acq_rel RMW, whichever side comes last).
    const std::uint32_t before =
        state->flags.fetch_or(State::kHandleGone, std::memory_order_acq_rel);
    if ((before & State::kDone) != 0 && state->error) State::unjoined_exception(state->error);
    state->release();
  }

  State* state_ = nullptr;
};

/// Runs `task` on `executor`, from its first step, as a task of its own;
/// returns its handle (drop it to detach). The task's frame is freed when
/// it ends. Allocates the shared state (one allocation; std::bad_alloc if
/// it fails, the task then destroyed unrun). An empty `task` aborts with a
/// message.
template <class T>
JoinHandle<T> spawn(Executor& executor, Task<T> task) {
  if (!task.handle_) [[unlikely]] {
    internal::contract_violation("spawn of an empty Task (moved from, spawned or awaited)");
  }
  auto* state = new detail::JoinState<T>;
  state->start.coroutine = std::exchange(task.handle_, nullptr);
  std::coroutine_handle<detail::Promise<T>>::from_address(state->start.coroutine.address())
      .promise()
      .join_ = state;
  executor.schedule(state->start);
  return JoinHandle<T>(state);
}

namespace detail {
// co_await ResumeOn{executor}: continues the coroutine as a task of
// `executor` (on its thread).
struct ResumeOn {
  ManualExecutor& executor;
  ResumeTask step;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> coroutine) noexcept {
    step.coroutine = coroutine;
    executor.schedule(step);  // nothing here touches the frame afterwards
  }
  void await_resume() const noexcept {}
};

// Runs `task`, then, on `executor`'s thread, stops it: the stop is issued
// inside a run of `executor`, in the same run that ends this frame and
// completes its JoinHandle, so that run() returns with the task finished.
// Refers to nothing but the executor, so it may outlive a block_on that
// left through an exception.
template <class T>
Task<T> stopping_when_done(Task<T> task, ManualExecutor& executor) {
  std::exception_ptr error;
  if constexpr (std::is_void_v<T>) {
    try {
      co_await std::move(task);
    } catch (...) {
      error = std::current_exception();
    }
    co_await ResumeOn{executor, {}};
    executor.stop();
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<T> value;
    try {
      value.emplace(co_await std::move(task));
    } catch (...) {
      error = std::current_exception();
    }
    co_await ResumeOn{executor, {}};
    executor.stop();
    if (error) std::rethrow_exception(error);
    co_return std::move(*value);
  }
}
}  // namespace detail

/// Runs `task` to its end on the calling thread, which runs `executor`
/// meanwhile (and every other task scheduled on it), then returns the
/// task's result or rethrows its exception: Tokio's Runtime::block_on, for
/// main() or a test. join() on the only thread that runs a ManualExecutor
/// would wait for ever; this is the way to wait there. `executor` must not
/// be run by another thread meanwhile. A stop() of the executor made
/// before or meanwhile is taken and ignored. An exception that another
/// task's run throws (ManualExecutor::run passes it on) does not cut the
/// wait short: block_on runs on until `task` has ended, then rethrows the
/// first such exception (`task`'s own result or exception is dropped then,
/// as an exception nobody joins would not be: it is taken here).
template <class T>
T block_on(ManualExecutor& executor, Task<T> task) {
  JoinHandle<T> handle = spawn(executor, detail::stopping_when_done(std::move(task), executor));
  std::exception_ptr escaped;      // the first exception another task's run threw
  while (!handle.is_finished()) {  // a stale stop returns early: run again
    try {
      executor.run();
    } catch (...) {
      if (!escaped) escaped = std::current_exception();
    }
  }
  if (!escaped) return handle.join();
  try {
    (void)handle.join();
  } catch (...) {  // taken, so that it is not "nobody joined"
  }
  std::rethrow_exception(escaped);
}

}  // namespace leanchan::async

#endif  // LEANCHAN_ASYNC_TASK_H_
