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

// co_await rx.async_recv(executor) -> std::optional<T>: the next message, or
// nullopt once the channel has ended (as recv()).
template <class T, std::size_t BlockSize>
class [[nodiscard]] RecvAwaitable {
 public:
  RecvAwaitable(Receiver<T, BlockSize>& rx, Executor& executor) noexcept
      : rx_(&rx), executor_(&executor), notifier_(&RecvAwaitable::on_ready, this) {
    task_.run = &RecvAwaitable::on_task;
    task_.owner = this;
  }
  RecvAwaitable(const RecvAwaitable&) = delete;
  RecvAwaitable& operator=(const RecvAwaitable&) = delete;
  ~RecvAwaitable() { detach(); }

  bool await_ready() noexcept { return try_now(); }
  bool await_suspend(std::coroutine_handle<> handle) noexcept {
    handle_ = handle;
    rx_->set_notifier(notifier_);
    attached_ = true;
    for (;;) {
      if (!rx_->arm_notifier()) return true;  // suspended until on_ready
      if (try_now()) {
        detach();
        return false;  // ready after all: continue without suspending
      }
    }
  }
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
  void detach() noexcept {
    if (!attached_) return;
    rx_->clear_notifier();     // waits out a callback in progress
    executor_->cancel(task_);  // withdraws a task it queued
    attached_ = false;
  }
  static void on_ready(void* self) {  // a sender's thread: hand over only
    auto* awaitable = static_cast<RecvAwaitable*>(self);
    awaitable->executor_->schedule(awaitable->task_);
  }
  static void on_task(ExecutorTask* task) {  // the executor's thread
    auto* awaitable = static_cast<OwnedTask*>(task)->owner;
    for (;;) {
      if (awaitable->try_now()) {
        awaitable->detach();
        awaitable->handle_.resume();  // may destroy *awaitable: touch nothing after
        return;
      }
      if (!awaitable->rx_->arm_notifier()) return;  // spurious: wait again
    }
  }

  struct OwnedTask : ExecutorTask {
    RecvAwaitable* owner = nullptr;
  };

  Receiver<T, BlockSize>* rx_;
  Executor* executor_;
  Notifier notifier_;
  OwnedTask task_;
  std::coroutine_handle<> handle_;
  std::optional<T> result_;
  bool attached_ = false;
};

// co_await tx.async_send(value, executor) -> SendResult<T>: kOk, or kClosed
// with the value handed back. Waits (suspended) while the channel is full.
template <class T, std::size_t BlockSize>
class [[nodiscard]] SendAwaitable {
 public:
  SendAwaitable(Sender<T, BlockSize>& tx, T value, Executor& executor) noexcept
      : tx_(&tx), executor_(&executor), notifier_(&SendAwaitable::on_room, this) {
    value_.emplace(std::move(value));
    task_.run = &SendAwaitable::on_task;
    task_.owner = this;
  }
  SendAwaitable(const SendAwaitable&) = delete;
  SendAwaitable& operator=(const SendAwaitable&) = delete;
  ~SendAwaitable() { detach(); }

  bool await_ready() noexcept { return try_now(); }
  bool await_suspend(std::coroutine_handle<> handle) noexcept {
    handle_ = handle;
    for (;;) {
      armed_ = true;
      if (!tx_->notify_when_room(notifier_)) return true;  // suspended until on_room
      armed_ = false;
      if (try_now()) return false;
    }
  }
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
  void detach() noexcept {
    if (armed_) tx_->cancel_notify(notifier_);  // waits out a callback in progress
    armed_ = false;
    executor_->cancel(task_);
  }
  static void on_room(void* self) {  // the receiver's thread: hand over only
    auto* awaitable = static_cast<SendAwaitable*>(self);
    awaitable->executor_->schedule(awaitable->task_);
  }
  static void on_task(ExecutorTask* task) {  // the executor's thread
    auto* awaitable = static_cast<OwnedTask*>(task)->owner;
    for (;;) {
      if (awaitable->try_now()) {
        awaitable->detach();
        awaitable->handle_.resume();  // may destroy *awaitable: touch nothing after
        return;
      }
      if (!awaitable->tx_->notify_when_room(awaitable->notifier_)) return;  // wait again
    }
  }

  struct OwnedTask : ExecutorTask {
    SendAwaitable* owner = nullptr;
  };

  Sender<T, BlockSize>* tx_;
  Executor* executor_;
  Notifier notifier_;
  OwnedTask task_;
  std::coroutine_handle<> handle_;
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
