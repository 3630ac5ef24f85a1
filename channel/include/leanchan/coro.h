// SPDX-License-Identifier: MIT
/// @file
/// leanchan/coro.h: C++20 coroutine awaitables over a channel.
///
/// @code
///   leanchan::ManualExecutor executor;                 // or your own Executor
///   Task consumer(leanchan::Receiver<Event>& rx) {
///     while (std::optional<Event> e = co_await rx.async_recv(executor)) handle(*e);
///   }
///   Task producer(leanchan::Sender<Event>& tx) {
///     auto result = co_await tx.async_send(Event{1}, executor);    // waits for room
///     if (!result.ok()) { /* kClosed, kNoMemory: std::move(result).value() is the event */ }
///   }
/// @endcode
///
/// `Task` is a coroutine type: leanchan::async::Task, with spawn() to run
/// one on an executor and a JoinHandle to wait for its result, is in
/// leanchan/async/task.h (target leanchan::async), with a complete program.
///
/// A hand-written task type: a coroutine's by-value parameters (a Sender, a
/// Receiver) live until its frame is destroyed, not until its body ends. A
/// task whose final_suspend returns std::suspend_always keeps its frame, and
/// so its Sender, until its owner destroys it: the channel stays open, and a
/// receive loop waiting for its end waits for ever, silently. Free the frame
/// when the coroutine ends (final_suspend returning std::suspend_never, as
/// spawn()'s tasks do), or take handles by reference and drop them yourself.
///
/// A coroutine that starts at once (initial_suspend returning
/// std::suspend_never) runs on the calling thread until it first suspends,
/// and async_recv does not suspend while messages are queued: a backlog is
/// then drained on the calling thread. spawn() starts it on the executor
/// instead.
///
/// Suspending costs nothing on the heap: the awaitable (inside the coroutine
/// frame) holds a Notifier and an ExecutorTask. When the channel becomes
/// ready its notifier schedules the task on the executor, and the executor's
/// thread retries and resumes the coroutine. The channel never resumes a
/// coroutine inline, on a sender's or the receiver's thread.
///
/// Cancellation: destroying a suspended coroutine destroys the awaitable,
/// which detaches its notifier (waiting out a callback in progress) and
/// withdraws a queued task: nothing touches the frame afterwards. A message
/// is never lost by this: async_recv only takes a message when it resumes,
/// and async_send keeps its value until it sends. A slot the channel had
/// handed to a destroyed async_send / async_reserve goes to the next
/// waiting sender. Where: on the executor's thread when it has one
/// (ManualExecutor, ThreadPoolExecutor(1)); on an executor of several
/// threads a task already taken by one of them may be about to resume the
/// coroutine, which cancel() cannot withdraw, so destroy suspended
/// coroutines there only once no run can be in progress
/// (ThreadPoolExecutor: after stop() and join()). Always before the
/// executor itself (leanchan/executor.h, "Lifetime").
///
/// A coroutine may first suspend on any thread (for example started from
/// main); it is always resumed on its executor's thread.
///
/// Thread-safety: an awaitable belongs to its coroutine; the executor must
/// run a coroutine's tasks one at a time. async_recv takes the Receiver's
/// notifier slot while suspended (one awaiting coroutine per receiver: a
/// second one, or one awaiting a receiver whose notifier the program set,
/// aborts with a message).
#ifndef LEANCHAN_CORO_H_
#define LEANCHAN_CORO_H_

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "leanchan/executor.h"
#include "leanchan/fwd.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/contract.h"
#include "leanchan/notifier.h"
#include "leanchan/receiver.h"
#include "leanchan/sender.h"
#include "leanchan/status.h"

namespace leanchan {

namespace internal {

// What every awaitable shares. The channel's callback only hands the task to
// the executor; the task, on the executor's thread, retries and resumes.
// Derived provides try_now() (true when done), arm() (true when armed and
// waiting) and detach() (after it, no callback runs and no task is queued).
//
// Suspending may run on any thread (a coroutine started from main), while
// the resumption runs on the executor's: so nothing may touch the frame once
// the coroutine can be resumed. `phase_` makes that point explicit: while
// await_suspend is still running (kSuspending) a firing only marks kFired
// and the suspending thread looks again itself; once await_suspend has
// stored kSuspended (its last access to the frame), a firing schedules the
// task.
template <class Derived, class NotifierType = Notifier>
class AwaitableBase {
 protected:
  explicit AwaitableBase(Executor& executor) noexcept
      : executor_(&executor), notifier_(&AwaitableBase::on_ready, this) {
    task_.run = &AwaitableBase::on_task;
    task_.owner = this;
  }
  AwaitableBase(const AwaitableBase&) = delete;
  AwaitableBase& operator=(const AwaitableBase&) = delete;

  // await_suspend: true to stay suspended (armed), false to continue.
  bool suspend(std::coroutine_handle<> handle) noexcept {
    handle_ = handle;
    phase_.store(kSuspending, std::memory_order_relaxed);
    for (;;) {
      if (derived().arm()) {
        std::uint32_t expected = kSuspending;
        // acq_rel: on success, everything above happens before a firing
        // that then schedules the task (its acquire CAS fails on
        // kSuspended and it schedules); nothing below touches the frame.
        if (phase_.compare_exchange_strong(expected, kSuspended, std::memory_order_acq_rel)) {
          return true;
        }
        phase_.store(kSuspending, std::memory_order_relaxed);  // fired meanwhile: look again
      }
      if (derived().try_now()) {
        derived().detach();
        return false;
      }
    }
  }

  // The channel's callback, on a channel thread: hand over only.
  static void on_ready(void* self) {
    auto* base = static_cast<AwaitableBase*>(self);
    std::uint32_t expected = kSuspending;
    // acq_rel: if await_suspend is still running, it sees this mark in its
    // final CAS and looks again itself (the frame cannot go away before).
    if (base->phase_.compare_exchange_strong(expected, kFired, std::memory_order_acq_rel)) return;
    base->executor_->schedule(base->task_);
  }

  struct OwnedTask : ExecutorTask {
    AwaitableBase* owner = nullptr;
  };

  static constexpr std::uint32_t kSuspending = 0;
  static constexpr std::uint32_t kSuspended = 1;
  static constexpr std::uint32_t kFired = 2;

  Executor* executor_;
  NotifierType notifier_;  // a SendNotifier for a send: the freed slot's thread pushes its value
  OwnedTask task_;
  std::coroutine_handle<> handle_;
  internal::Atomic<std::uint32_t> phase_{kSuspended};

 private:
  Derived& derived() noexcept { return static_cast<Derived&>(*this); }
  static void on_task(ExecutorTask* task) {  // the executor's thread
    AwaitableBase* base = static_cast<OwnedTask*>(task)->owner;
    for (;;) {
      if (base->derived().try_now()) {
        base->derived().detach();  // may cancel this very task: allowed (executor.h)
        base->handle_.resume();    // may destroy the awaitable: touch nothing after
        return;
      }
      if (base->derived().arm()) return;  // spurious or raced: wait again
    }
  }
};

}  // namespace internal

namespace internal {

// What the receive-side awaitables share: the receiver's notifier, attached
// while suspended (one awaiting coroutine per receiver).
template <class Derived, class T, std::size_t BlockSize>
class ReceiveSideAwaitable : protected AwaitableBase<Derived> {
 protected:
  ReceiveSideAwaitable(Receiver<T, BlockSize>& rx, Executor& executor) noexcept
      : AwaitableBase<Derived>(executor), rx_(&rx) {}
  ~ReceiveSideAwaitable() { detach(); }

  // attached_ is written before arming; nothing is written after it. The
  // receiver's one notifier slot must be free: another notifier there (a
  // second coroutine awaiting this receiver, or one the program attached)
  // would be replaced silently and never fire again, so that aborts with a
  // message, in every build.
  bool arm() noexcept {
    if (!attached_) {
      if (rx_->has_notifier()) [[unlikely]] {
        internal::contract_violation(
            "async_recv on a Receiver that has a notifier attached (another coroutine awaits "
            "it, or set_notifier was called): one awaiting coroutine per receiver (async_recv and "
            "async_recv_many alike)");
      }
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
  bool attached_ = false;
};

}  // namespace internal

/// co_await rx.async_recv(executor) -> std::optional<T>: the next message, or
/// nullopt once the channel has ended (as recv()).
template <class T, std::size_t BlockSize>
class [[nodiscard]] RecvAwaitable
    : private internal::ReceiveSideAwaitable<RecvAwaitable<T, BlockSize>, T, BlockSize> {
  using Base = internal::ReceiveSideAwaitable<RecvAwaitable<T, BlockSize>, T, BlockSize>;
  friend Base;
  /// @cond
  friend internal::AwaitableBase<RecvAwaitable<T, BlockSize>>;
  /// @endcond

 public:
  /// Made by Receiver::async_recv; co_await it.
  RecvAwaitable(Receiver<T, BlockSize>& rx, Executor& executor) noexcept : Base(rx, executor) {}

  /// True if a message, or the end, is there now: no suspension.
  bool await_ready() noexcept { return try_now(); }
  /// Attaches and arms the receiver's notifier; false (no suspension) if
  /// something came meanwhile.
  bool await_suspend(std::coroutine_handle<> handle) noexcept { return this->suspend(handle); }
  /// The message, or nullopt once the channel has ended.
  std::optional<T> await_resume() noexcept {
    this->detach();
    return std::move(result_);
  }

 private:
  // True when done: a message taken (result_) or the channel ended.
  // Never waits on a sender that is still writing (poll_recv's kBusy):
  // the coroutine suspends and its sender's publish resumes it.
  bool try_now() noexcept {
    auto result = this->rx_->poll_recv();
    if (result.ok()) {
      result_.emplace(std::move(result).value());
      return true;
    }
    return result.status() == PollStatus::kDisconnected;
  }

  std::optional<T> result_;
};

/// co_await rx.async_recv_many(out, limit, executor) -> std::size_t: as
/// recv_many (at least one message appended, 0 once the channel has ended).
/// The messages are taken in await_resume, on the coroutine's own stack, so a
/// std::bad_alloc from `out` propagates into the coroutine and loses nothing.
template <class T, std::size_t BlockSize>
class [[nodiscard]] RecvManyAwaitable
    : private internal::ReceiveSideAwaitable<RecvManyAwaitable<T, BlockSize>, T, BlockSize> {
  using Base = internal::ReceiveSideAwaitable<RecvManyAwaitable<T, BlockSize>, T, BlockSize>;
  friend Base;
  /// @cond
  friend internal::AwaitableBase<RecvManyAwaitable<T, BlockSize>>;
  /// @endcond

 public:
  /// Made by Receiver::async_recv_many; co_await it.
  RecvManyAwaitable(Receiver<T, BlockSize>& rx, std::vector<T>& out, std::size_t limit,
                    Executor& executor) noexcept
      : Base(rx, executor), out_(&out), limit_(limit) {}

  /// True if a message is published, or the channel has ended (or `limit` is 0):
  /// no suspension.
  bool await_ready() noexcept { return try_now(); }
  /// Attaches and arms the receiver's notifier; false (no suspension) if
  /// something came meanwhile.
  bool await_suspend(std::coroutine_handle<> handle) noexcept { return this->suspend(handle); }
  /// Takes without sleeping: a message is published, or the channel ended.
  /// Returns how many messages were appended to `out`, as recv_many.
  std::size_t await_resume() {
    this->detach();
    return this->rx_->recv_many(*out_, limit_);
  }

 private:
  bool try_now() noexcept { return limit_ == 0 || this->rx_->ready_now(); }

  std::vector<T>* out_;
  std::size_t limit_;
};

namespace internal {

// What the send-side awaitables share: a send notifier queued in the
// channel's FIFO waiter queue. When it fires with a slot, the slot is the
// awaitable's (redeemed in try_now); a destroyed or finished awaitable gives
// an unused slot to the next waiter (cancel_notify).
template <class Derived, class T, std::size_t BlockSize, class NotifierType = Notifier>
class SendSideAwaitable : protected AwaitableBase<Derived, NotifierType> {
 protected:
  SendSideAwaitable(Sender<T, BlockSize>& tx, Executor& executor) noexcept
      : AwaitableBase<Derived, NotifierType>(executor), tx_(&tx) {}
  ~SendSideAwaitable() { detach(); }

  // armed_ is written before queueing and nothing after it: once
  // notify_when_room returns kArmed, a firing may resume (and free) the
  // frame at any moment.
  bool arm() noexcept {
    armed_ = true;
    return tx_->notify_when_room(this->notifier_) == RoomStatus::kArmed;
  }
  // Only after arm() can the notifier be queued or hold a slot, or the task
  // be scheduled: a send that never waited (or was detached since) has
  // nothing to withdraw.
  void detach() noexcept {
    if (!armed_) return;
    tx_->cancel_notify(this->notifier_);   // lock-free when idle; passes a slot on
    this->executor_->cancel(this->task_);  // withdraws a task it queued
    armed_ = false;
  }

  Sender<T, BlockSize>* tx_;
  bool armed_ = false;  // arm() has run since the last detach()
};

}  // namespace internal

/// co_await tx.async_send(value, executor) -> SendResult<T>: kOk, or kClosed
/// or kNoMemory (its block could not be allocated) with the value handed
/// back. Waits (suspended, in FIFO order with every
/// other waiting sender) while the channel is full.
template <class T, std::size_t BlockSize>
class [[nodiscard]] SendAwaitable
    : private internal::SendSideAwaitable<SendAwaitable<T, BlockSize>, T, BlockSize, SendNotifier> {
  using Base = internal::SendSideAwaitable<SendAwaitable<T, BlockSize>, T, BlockSize, SendNotifier>;
  friend Base;
  /// @cond
  friend internal::AwaitableBase<SendAwaitable<T, BlockSize>, SendNotifier>;
  /// @endcond

 public:
  /// Made by Sender::async_send; holds `value` until it is sent or handed back.
  SendAwaitable(Sender<T, BlockSize>& tx, T value, Executor& executor) noexcept
      : Base(tx, executor) {
    value_.emplace(std::move(value));
  }
  /// Withdraws a queued send before its value goes (the channel holds a
  /// pointer to it while it waits).
  ~SendAwaitable() { this->detach(); }
  SendAwaitable(const SendAwaitable&) = delete;
  SendAwaitable& operator=(const SendAwaitable&) = delete;

  /// True if the send is done now (sent, or failed with the value handed back):
  /// no suspension.
  bool await_ready() noexcept { return try_now(); }
  /// Queues a send notifier carrying the value in the channel's FIFO waiter
  /// queue (the thread that frees a slot for it moves the value in); false
  /// (no suspension) if the send is done meanwhile.
  bool await_suspend(std::coroutine_handle<> handle) noexcept { return this->suspend(handle); }
  /// kOk, or kClosed or kNoMemory with the value handed back.
  SendResult<T> await_resume() noexcept {
    this->detach();
    return std::move(*result_);
  }

 private:
  // Queued with the value (true), or done: sent, closed or refused a block
  // (result_ set).
  bool arm() noexcept {
    this->armed_ = true;
    return !look();
  }
  // True when done. Before arm() a plain try; once armed, the notifier's
  // news (its value sent, its slot to use) or a new try, which queues it
  // again if the channel is still full.
  bool try_now() noexcept {
    if (result_) return true;
    if (!this->armed_) {
      auto result = this->tx_->try_send(std::move(*value_));
      value_.reset();
      if (result.status() == SendStatus::kFull) {
        value_.emplace(std::move(result).value());
        return false;
      }
      result_.emplace(std::move(result));
      return true;
    }
    return look();
  }
  // send_or_notify: kFull leaves the value lent to the channel (false).
  bool look() noexcept {
    const SendStatus status = this->tx_->send_or_notify(*value_, this->notifier_);
    if (status == SendStatus::kFull) return false;
    if (status == SendStatus::kOk) {
      result_.emplace(SendResult<T>::success());
    } else {
      result_.emplace(SendResult<T>::failure(status, std::move(*value_)));
    }
    value_.reset();
    return true;
  }

  std::optional<T> value_;
  std::optional<SendResult<T>> result_;
};

/// co_await tx.async_reserve(executor) -> Permit<T, BlockSize>: one slot, or
/// an empty permit with status() kClosed or kNoMemory (test it before
/// sending: Permit::send on an empty permit aborts). Waits as async_send.
template <class T, std::size_t BlockSize>
class [[nodiscard]] ReserveAwaitable
    : private internal::SendSideAwaitable<ReserveAwaitable<T, BlockSize>, T, BlockSize> {
  using Base = internal::SendSideAwaitable<ReserveAwaitable<T, BlockSize>, T, BlockSize>;
  friend Base;
  /// @cond
  friend internal::AwaitableBase<ReserveAwaitable<T, BlockSize>>;
  /// @endcond

 public:
  /// Made by Sender::async_reserve; co_await it.
  ReserveAwaitable(Sender<T, BlockSize>& tx, Executor& executor) noexcept : Base(tx, executor) {}

  /// True if the reservation is done now (a slot, or why there is none): no
  /// suspension.
  bool await_ready() noexcept { return try_now(); }
  /// Queues a send notifier in the channel's FIFO waiter queue; false (no
  /// suspension) if the reservation is done meanwhile.
  bool await_suspend(std::coroutine_handle<> handle) noexcept { return this->suspend(handle); }
  /// The permit: one slot, or empty with status() kClosed or kNoMemory.
  Permit<T, BlockSize> await_resume() noexcept {
    this->detach();
    return std::move(*result_);
  }

 private:
  bool try_now() noexcept {
    Permit<T, BlockSize> permit = this->tx_->try_reserve(this->notifier_);
    if (permit.status() == SendStatus::kFull) return false;
    result_.emplace(std::move(permit));
    return true;
  }

  std::optional<Permit<T, BlockSize>> result_;
};

/// co_await tx.async_closed(executor): resumes once the channel is closed
/// (the receiver called close() or was destroyed), as Sender::closed().
template <class T, std::size_t BlockSize>
class [[nodiscard]] ClosedAwaitable
    : private internal::AwaitableBase<ClosedAwaitable<T, BlockSize>> {
  using Base = internal::AwaitableBase<ClosedAwaitable<T, BlockSize>>;
  friend Base;

 public:
  /// Made by Sender::async_closed; co_await it.
  ClosedAwaitable(Sender<T, BlockSize>& tx, Executor& executor) noexcept
      : Base(executor), tx_(&tx) {
    watch_.node.callback = &Base::on_ready;
    watch_.node.context = static_cast<Base*>(this);
  }
  /// Stops watching the channel (waiting out a callback in progress).
  ~ClosedAwaitable() { detach(); }

  /// True if the channel is closed already: no suspension.
  bool await_ready() noexcept { return try_now(); }
  /// Watches the channel for its close; false (no suspension) if it closed
  /// meanwhile.
  bool await_suspend(std::coroutine_handle<> handle) noexcept { return this->suspend(handle); }
  /// Returns once the channel is closed; nothing to return.
  void await_resume() noexcept { detach(); }

 private:
  bool try_now() noexcept { return tx_->is_closed(); }
  bool arm() noexcept { return !tx_->state()->watch_closed(&watch_); }
  void detach() noexcept {
    tx_->state()->unwatch_closed(&watch_);  // waits out a callback in progress
    this->executor_->cancel(this->task_);
  }

  Sender<T, BlockSize>* tx_;
  internal::ClosedWatchNode watch_;
};

template <class T, std::size_t BlockSize>
RecvAwaitable<T, BlockSize> Receiver<T, BlockSize>::async_recv(Executor& executor) noexcept {
  return RecvAwaitable<T, BlockSize>(*this, executor);
}

template <class T, std::size_t BlockSize>
RecvManyAwaitable<T, BlockSize> Receiver<T, BlockSize>::async_recv_many(
    std::vector<T>& out, std::size_t limit, Executor& executor) noexcept {
  return RecvManyAwaitable<T, BlockSize>(*this, out, limit, executor);
}

template <class T, std::size_t BlockSize>
SendAwaitable<T, BlockSize> Sender<T, BlockSize>::async_send(T value, Executor& executor) noexcept {
  return SendAwaitable<T, BlockSize>(*this, std::move(value), executor);
}

template <class T, std::size_t BlockSize>
ReserveAwaitable<T, BlockSize> Sender<T, BlockSize>::async_reserve(Executor& executor) noexcept {
  return ReserveAwaitable<T, BlockSize>(*this, executor);
}

template <class T, std::size_t BlockSize>
ClosedAwaitable<T, BlockSize> Sender<T, BlockSize>::async_closed(Executor& executor) noexcept {
  return ClosedAwaitable<T, BlockSize>(*this, executor);
}

}  // namespace leanchan

#endif  // LEANCHAN_CORO_H_
