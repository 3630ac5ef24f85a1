// leanchan/coro.h: C++20 coroutine awaitables over a channel.
//
//   leanchan::ManualExecutor executor;                 // or your own Executor
//   Task consumer(leanchan::Receiver<Event>& rx) {
//     while (std::optional<Event> e = co_await rx.async_recv(executor)) handle(*e);
//   }
//   Task producer(leanchan::Sender<Event>& tx) {
//     auto result = co_await tx.async_send(Event{...}, executor);  // waits for room
//     if (!result.ok()) { /* kClosed: std::move(result).value() is the event */ }
//   }
//
// Suspending costs nothing on the heap: the awaitable (inside the coroutine
// frame) holds a Notifier and an ExecutorTask. When the channel becomes
// ready its notifier schedules the task on the executor, and the executor's
// thread retries and resumes the coroutine. The channel never resumes a
// coroutine inline, on a sender's or the receiver's thread.
//
// Cancellation: destroying a suspended coroutine (on its executor's thread)
// destroys the awaitable, which detaches its notifier (waiting out a
// callback in progress) and withdraws a queued task: nothing touches the
// frame afterwards. A message is never lost by this: async_recv only takes
// a message when it resumes, and async_send keeps its value until it sends.
//
// Thread-safety: an awaitable belongs to its coroutine; the executor must
// run a coroutine's tasks one at a time. async_recv takes the Receiver's
// notifier slot while suspended (one awaiting coroutine per receiver).
#ifndef LEANCHAN_CORO_H_
#define LEANCHAN_CORO_H_

#include <coroutine>
#include <cstddef>
#include <optional>
#include <utility>

#include "leanchan/executor.h"
#include "leanchan/fwd.h"
#include "leanchan/notifier.h"
#include "leanchan/receiver.h"
#include "leanchan/sender.h"
#include "leanchan/status.h"

namespace leanchan {

namespace internal {

// What both awaitables share. The notifier only hands the task to the
// executor; the task, on the executor's thread, retries and resumes. Derived
// provides try_now() (true when done), arm() (true when armed and waiting)
// and detach() (after it, no callback runs and no task is queued).
template <class Derived>
class AwaitableBase {
 protected:
  explicit AwaitableBase(Executor& executor) noexcept
      : executor_(&executor), notifier_(&AwaitableBase::on_ready, this) {
    task_.run = &AwaitableBase::on_task;
    task_.owner = this;
  }
  AwaitableBase(const AwaitableBase&) = delete;
  AwaitableBase& operator=(const AwaitableBase&) = delete;

  // await_suspend: stay suspended once armed; continue if ready after all.
  bool suspend(std::coroutine_handle<> handle) noexcept {
    handle_ = handle;
    for (;;) {
      if (derived().arm()) return true;
      if (derived().try_now()) {
        derived().detach();
        return false;
      }
    }
  }

  struct OwnedTask : ExecutorTask {
    AwaitableBase* owner = nullptr;
  };

  Executor* executor_;
  Notifier notifier_;
  OwnedTask task_;
  std::coroutine_handle<> handle_;

 private:
  Derived& derived() noexcept { return static_cast<Derived&>(*this); }
  static void on_ready(void* self) {  // a channel thread: hand over only
    auto* base = static_cast<AwaitableBase*>(self);
    base->executor_->schedule(base->task_);
  }
  static void on_task(ExecutorTask* task) {  // the executor's thread
    AwaitableBase* base = static_cast<OwnedTask*>(task)->owner;
    for (;;) {
      if (base->derived().try_now()) {
        base->derived().detach();
        base->handle_.resume();  // may destroy the awaitable: touch nothing after
        return;
      }
      if (base->derived().arm()) return;  // spurious or raced: wait again
    }
  }
};

}  // namespace internal

// co_await rx.async_recv(executor) -> std::optional<T>: the next message, or
// nullopt once the channel has ended (as recv()).
template <class T, std::size_t BlockSize>
class [[nodiscard]] RecvAwaitable : private internal::AwaitableBase<RecvAwaitable<T, BlockSize>> {
  using Base = internal::AwaitableBase<RecvAwaitable<T, BlockSize>>;
  friend Base;

 public:
  RecvAwaitable(Receiver<T, BlockSize>& rx, Executor& executor) noexcept
      : Base(executor), rx_(&rx) {}
  ~RecvAwaitable() { detach(); }

  bool await_ready() noexcept { return try_now(); }
  bool await_suspend(std::coroutine_handle<> handle) noexcept { return this->suspend(handle); }
  std::optional<T> await_resume() noexcept {
    detach();
    return std::move(result_);
  }

 private:
  // True when done: a message taken (result_) or the channel ended.
  bool try_now() noexcept {
    auto result = rx_->try_recv();
    if (result.ok()) {
      result_.emplace(std::move(result).value());
      return true;
    }
    return result.status() == RecvStatus::kDisconnected;
  }
  bool arm() noexcept {
    if (!attached_) {
      rx_->set_notifier(this->notifier_);
      attached_ = true;
    }
    return !rx_->arm_notifier();
  }
  void detach() noexcept {
    if (!attached_) return;
    rx_->clear_notifier();                 // waits out a callback in progress
    this->executor_->cancel(this->task_);  // withdraws a task it queued
    attached_ = false;
  }

  Receiver<T, BlockSize>* rx_;
  std::optional<T> result_;
  bool attached_ = false;
};

// co_await tx.async_send(value, executor) -> SendResult<T>: kOk, or kClosed
// with the value handed back. Waits (suspended) while the channel is full.
template <class T, std::size_t BlockSize>
class [[nodiscard]] SendAwaitable : private internal::AwaitableBase<SendAwaitable<T, BlockSize>> {
  using Base = internal::AwaitableBase<SendAwaitable<T, BlockSize>>;
  friend Base;

 public:
  SendAwaitable(Sender<T, BlockSize>& tx, T value, Executor& executor) noexcept
      : Base(executor), tx_(&tx) {
    value_.emplace(std::move(value));
  }
  ~SendAwaitable() { detach(); }

  bool await_ready() noexcept { return try_now(); }
  bool await_suspend(std::coroutine_handle<> handle) noexcept { return this->suspend(handle); }
  SendResult<T> await_resume() noexcept {
    detach();
    return std::move(*result_);
  }

 private:
  // True when done: sent, or closed (value handed back into result_).
  bool try_now() noexcept {
    auto result = tx_->try_send(std::move(*value_));
    value_.reset();
    if (result.status() == SendStatus::kFull) {
      value_.emplace(std::move(result).value());
      return false;
    }
    result_.emplace(std::move(result));
    return true;
  }
  bool arm() noexcept {
    armed_ = !tx_->notify_when_room(this->notifier_);
    return armed_;
  }
  void detach() noexcept {
    if (armed_) tx_->cancel_notify(this->notifier_);  // waits out a callback in progress
    armed_ = false;
    this->executor_->cancel(this->task_);
  }

  Sender<T, BlockSize>* tx_;
  std::optional<T> value_;
  std::optional<SendResult<T>> result_;
  bool armed_ = false;
};

template <class T, std::size_t BlockSize>
RecvAwaitable<T, BlockSize> Receiver<T, BlockSize>::async_recv(Executor& executor) noexcept {
  return RecvAwaitable<T, BlockSize>(*this, executor);
}

template <class T, std::size_t BlockSize>
SendAwaitable<T, BlockSize> Sender<T, BlockSize>::async_send(T value, Executor& executor) noexcept {
  return SendAwaitable<T, BlockSize>(*this, std::move(value), executor);
}

}  // namespace leanchan

#endif  // LEANCHAN_CORO_H_
