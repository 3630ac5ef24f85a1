// SPDX-License-Identifier: MIT
/// @file
/// leanchan/sender.h: the sending handles of a channel: Sender and
/// WeakSender (Permit and PermitBatch: leanchan/permit.h). Create them with
/// leanchan::channel (leanchan/channel.h).
///
/// @code
///   auto [tx, rx] = leanchan::channel<Event>(64);
///   leanchan::Sender<Event> tx2 = tx;                   // another producer
///   if (auto r = tx2.try_send(Event{1}); !r.ok()) {     // kFull or kClosed
///     keep(std::move(r).value());                       // the event comes back
///   }
///   if (auto permit = tx.reserve()) permit.send(Event{2});  // cannot fail
/// @endcode
///
/// Thread-safety: a Sender may be used from one thread at a time; copies of it
/// (each its own object) may be used from any number of threads at once.
/// Permit and WeakSender likewise.
///
/// Memory ordering: everything a thread did before a successful send happens
/// before the receiver's return of that message.
///
/// Empty handles: a moved-from handle may only be destroyed or assigned to.
#ifndef LEANCHAN_SENDER_H_
#define LEANCHAN_SENDER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "leanchan/fwd.h"
#include "leanchan/internal/channel_ops.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/contract.h"
#include "leanchan/notifier.h"
#include "leanchan/permit.h"
#include "leanchan/status.h"

namespace leanchan {

/// The producing handle. Copies share the channel and each keeps it open;
/// when the last Sender (and last Permit) is gone, the channel is closed
/// (send notifiers still queued are called without a slot) and the
/// receiver sees the end after taking what is queued.
template <class T, std::size_t BlockSize>
class Sender {
  using Ops = internal::ChannelOps<T, BlockSize>;

 public:
  /// Another handle on the same channel, which keeps it open too.
  Sender(const Sender& other) noexcept : state_(other.state_) {
    if (state_ != nullptr) {
      state_->lifetime().add_sender();
      state_->lifetime().add_handle();
    }
  }
  /// Takes over `other`'s handle; `other` is left empty.
  Sender(Sender&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  /// Copy or move assignment: takes `other`'s handle and drops the one this held.
  Sender& operator=(Sender other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  /// Drops the handle; the last Sender (and Permit) gone closes the channel.
  ~Sender() { reset(); }

  /// Enqueues `value`, sleeping while the channel is full. Fails with
  /// kClosed (the receiver closed or is gone) or kNoMemory (the block the
  /// message needed could not be allocated; nothing else changed), handing
  /// `value` back. FIFO
  /// with respect to this sender's other sends. Waiting senders are served
  /// in the order they started waiting (threads, notifiers and coroutines
  /// alike): a freed slot is handed to the longest-waiting one. A send that
  /// had to wait is completed by the thread that hands it the slot (usually
  /// the receiver): that thread moves `value` into the channel, as Go's
  /// channels do, so T's move constructor may run there. Allocates a block
  /// only when the message needs a new one and no recycled block is waiting.
  SendResult<T> send(T value) noexcept { return send_with(std::move(value), nullptr); }

  /// Enqueues `value` only if a slot is free now: kFull, kClosed or
  /// kNoMemory otherwise.
  /// A slot freed while senders wait belongs to the longest-waiting one, so
  /// try_send fails with kFull whenever any sender waits. Never sleeps;
  /// lock-free unless the message opens a block or the channel looks full
  /// (then, under the list lock, it first collects the slots of messages
  /// the receiver took but has not given back yet: it fails only when
  /// capacity slots are really in use).
  SendResult<T> try_send(T value) noexcept {
    const SendStatus status = try_send_from(value);
    if (status == SendStatus::kOk) return SendResult<T>::success();
    return SendResult<T>::failure(status, std::move(value));
  }

  /// As send(), but gives up with kTimedOut once `timeout` has passed. A
  /// timeout too long for the clock (nanoseconds::max(), years(1000)) waits
  /// forever. A slot handed to this sender as the deadline passes is used:
  /// the send then succeeds.
  template <class Rep, class Period>
  SendResult<T> send_for(T value, const std::chrono::duration<Rep, Period>& timeout) noexcept {
    const internal::Deadline deadline = internal::deadline_after(timeout);
    return send_with(std::move(value), &deadline);
  }
  /// As send(), but gives up with kTimedOut at `deadline` (any clock; it is
  /// converted to the steady clock once, at the call; time_point::max()
  /// waits forever).
  template <class Clock, class Duration>
  SendResult<T> send_until(T value,
                           const std::chrono::time_point<Clock, Duration>& deadline) noexcept {
    const internal::Deadline steady = internal::to_steady_deadline(deadline);
    return send_with(std::move(value), &steady);
  }

  /// Reserves one slot, waiting (in FIFO order with every other waiting
  /// sender) while full. The permit is empty, with status() kClosed, if the
  /// channel is closed, or kNoMemory if the block its message will use
  /// could not be allocated (a granted permit holds that block: its send
  /// cannot fail).
  Permit<T, BlockSize> reserve() noexcept {
    return make_permit(provided(state()->acquire_permits(1, nullptr), 1));
  }
  /// Reserves one slot only if one is free now (status() kFull or kClosed).
  Permit<T, BlockSize> try_reserve() noexcept {
    return make_permit(provided(state()->try_acquire_permits(1), 1));
  }
  /// Reserves `count` slots at once or none, waiting in FIFO order while
  /// they are not all free (the first waiter collects slots as they free;
  /// those behind it wait their turn). `count` above max_capacity() fails at
  /// once with kExceedsCapacity; 0 succeeds with an empty batch.
  PermitBatch<T, BlockSize> reserve_many(std::size_t count) noexcept {
    return make_batch(
        count, [this](std::uint32_t slots) { return state()->acquire_permits(slots, nullptr); });
  }
  /// As reserve_many, without waiting (kFull unless all are free now and
  /// nobody waits).
  PermitBatch<T, BlockSize> try_reserve_many(std::size_t count) noexcept {
    return make_batch(count,
                      [this](std::uint32_t slots) { return state()->try_acquire_permits(slots); });
  }

  /// co_await tx.async_send(value, executor), async_reserve(executor),
  /// async_closed(executor): the coroutine forms of send, reserve and
  /// closed; see leanchan/coro.h (included by leanchan/channel.h).
  SendAwaitable<T, BlockSize> async_send(T value, Executor& executor) noexcept;
  /// co_await tx.async_reserve(executor): reserve()'s coroutine form.
  ReserveAwaitable<T, BlockSize> async_reserve(Executor& executor) noexcept;
  /// co_await tx.async_closed(executor): closed()'s coroutine form.
  ClosedAwaitable<T, BlockSize> async_closed(Executor& executor) noexcept;

  // ---- Readiness (leanchan/notifier.h) --------------------------------------
  /// Queues `notifier`, one-shot, behind every waiting sender, and returns
  /// kArmed; or, without queueing: kRoom if a slot is free and nobody
  /// waits, kClosed if the channel is closed, kHoldsSlot if `notifier`
  /// already holds a slot it was handed. When a slot frees and the notifier
  /// is first in line, the slot is handed to it (no one else can take it:
  /// a plain try_send fails with kFull meanwhile) and its callback runs, on
  /// the thread that freed the slot; on close (the last Sender going closes
  /// the channel too) it runs without a slot. Redeem or give back a slot
  /// before dropping the last Sender (notifier.h: if it goes first, the
  /// slot goes back, but the notifier is good for nothing more).
  /// Redeem the slot with try_send(value, notifier) or
  /// try_reserve(notifier), or give it back with cancel_notify(notifier).
  /// The loop to write:
  /// @code
  ///   for (;;) {
  ///     auto r = tx.try_send(std::move(v), n);    // uses n's slot, if any
  ///     if (r.status() != leanchan::SendStatus::kFull) break;
  ///     v = std::move(r).value();
  ///     if (tx.notify_when_room(n) == leanchan::RoomStatus::kArmed) wait_for_callback();
  ///   }
  /// @endcode
  /// Once a redeeming try_send returns, n may go away (it waits out a
  /// callback that is still returning); n's callback must not redeem.
  /// Any number of senders may queue their own notifiers. O(1) under the
  /// channel's list lock; allocates nothing.
  RoomStatus notify_when_room(Notifier& notifier) noexcept {
    return state()->arm_send(&notifier.node_);
  }
  /// Withdraws `notifier`: true if it was queued and had not fired. A slot it
  /// was handed and did not use goes to the next waiting sender (or back to
  /// the channel). When this returns its callback is not running. O(1).
  bool cancel_notify(Notifier& notifier) noexcept { return state()->cancel_send(&notifier.node_); }
  /// As try_send(value), but first uses the slot `notifier` was handed, if
  /// any; kFull while `notifier` is armed or its callback is being called
  /// (wait for the callback, or re-arm: notify_when_room waits it out).
  SendResult<T> try_send(T value, Notifier& notifier) noexcept {
    switch (state()->redeem(&notifier.node_)) {
      case internal::ChannelState::Redeem::kTaken:
        return push_if(internal::PermitOutcome::kAcquired, std::move(value));
      case internal::ChannelState::Redeem::kBusy:
        return SendResult<T>::failure(SendStatus::kFull, std::move(value));
      case internal::ChannelState::Redeem::kNone: break;
    }
    return try_send(std::move(value));
  }
  /// As try_reserve(), but first uses the slot `notifier` was handed, if
  /// any; kFull while `notifier` is armed or being called, as try_send.
  Permit<T, BlockSize> try_reserve(Notifier& notifier) noexcept {
    switch (state()->redeem(&notifier.node_)) {
      case internal::ChannelState::Redeem::kTaken:
        return make_permit(provided(internal::PermitOutcome::kAcquired, 1));
      case internal::ChannelState::Redeem::kBusy:
        return make_permit(internal::PermitOutcome::kFull);
      case internal::ChannelState::Redeem::kNone: break;
    }
    return try_reserve();
  }

  /// Sends `value` (moved from) and returns kOk if there is room, or if
  /// `notifier`'s value went in since the last call; else queues
  /// `notifier` carrying `value` and returns kFull: the value is lent to
  /// the channel until the notifier's callback, then call again (see
  /// SendNotifier). kClosed and kNoMemory leave the value to the caller;
  /// a sent value (kOk) is never reported twice. O(1); a waiting send
  /// queues under the channel's list lock; allocates nothing but blocks.
  SendStatus send_or_notify(T& value, SendNotifier& notifier) noexcept {
    internal::WaitNode* const node = &notifier.node_.node;
    if (busy_elsewhere(notifier, &value)) [[unlikely]] {
      internal::contract_violation(
          "send_or_notify with a SendNotifier queued (or with news) on another channel or "
          "for another value");
    }
    for (;;) {
      switch (internal::Semaphore::take_carried(node)) {
        case internal::Semaphore::Carried::kSent: return SendStatus::kOk;
        case internal::Semaphore::Carried::kWaiting: return SendStatus::kFull;
        case internal::Semaphore::Carried::kGrant:
          return push_from(internal::PermitOutcome::kAcquired, value);
        case internal::Semaphore::Carried::kNothing: break;
      }
      const SendStatus now = try_send_from(value);
      if (now != SendStatus::kFull) return now;
      notifier.node_.value = &value;
      notifier.node_.push = &Sender::push_erased;
      notifier.node_.channel = state_;
      // kArmed: queued with the value. kRoom, kClosed, kHoldsSlot: look again.
      if (state_->arm_send(node) == RoomStatus::kArmed) return SendStatus::kFull;
    }
  }
  /// Withdraws `notifier`: true if its value went in first (it was moved
  /// from), false if it is still the caller's. A slot it was handed and
  /// could not use goes to the next waiting sender (or back to the
  /// channel). When this returns its callback is not running. O(1).
  bool cancel_notify(SendNotifier& notifier) noexcept {
    internal::WaitNode* const node = &notifier.node_.node;
    if (busy_elsewhere(notifier, nullptr)) [[unlikely]] {
      internal::contract_violation(
          "cancel_notify with a SendNotifier queued (or with news) on another channel");
    }
    (void)state()->cancel_send(node);  // unqueued, or its firing over and a grant passed on
    return internal::Semaphore::take_carried(node) == internal::Semaphore::Carried::kSent;
  }

  /// Blocks until the channel is closed: the receiver called close() or was
  /// destroyed (how a producer learns that its consumer went away). Waits in
  /// the channel's waiter queue; allocates nothing.
  void closed() noexcept { (void)state()->wait_closed(nullptr); }
  /// As closed(), giving up after `timeout`: true if closed, false on
  /// timeout (saturating as send_for).
  template <class Rep, class Period>
  bool closed_for(const std::chrono::duration<Rep, Period>& timeout) noexcept {
    const internal::Deadline deadline = internal::deadline_after(timeout);
    return state()->wait_closed(&deadline);
  }
  /// As closed(), giving up at `deadline` (any clock, as send_until): true if
  /// closed, false on timeout.
  template <class Clock, class Duration>
  bool closed_until(const std::chrono::time_point<Clock, Duration>& deadline) noexcept {
    const internal::Deadline steady = internal::to_steady_deadline(deadline);
    return state()->wait_closed(&steady);
  }

  /// Snapshots (stale on return): the handles that keep the channel open
  /// (Senders, live Permits and PermitBatches), and the WeakSenders.
  std::size_t strong_count() const noexcept { return state()->lifetime().sender_snapshot(); }
  /// The WeakSenders now (a snapshot, stale on return).
  std::size_t weak_count() const noexcept {
    const internal::ChannelState& state = *this->state();
    const std::uint32_t others =
        state.lifetime().sender_snapshot() + (state.blocks().receiver_gone() ? 0 : 1);
    const std::uint32_t handles = state.lifetime().handle_snapshot();
    return handles > others ? handles - others : 0;
  }

  /// True once the receiver has closed the channel or been destroyed.
  bool is_closed() const noexcept { return state()->is_closed(); }
  /// Free slots right now (a snapshot that may be stale on return). Counts
  /// the slots of messages the receiver took whose permits it has not given
  /// back yet (it gives them back in batches), so it takes the channel's
  /// list lock: O(1), but not for a hot loop.
  std::size_t capacity() const noexcept { return state()->free_slots(); }
  /// The capacity the channel was created with.
  std::size_t max_capacity() const noexcept { return state()->capacity(); }
  /// True if `other` is a handle on the same channel.
  bool same_channel(const Sender& other) const noexcept { return state_ == other.state_; }
  /// A handle that does not keep the channel open; see WeakSender.
  WeakSender<T, BlockSize> downgrade() const noexcept {
    state()->lifetime().add_handle();
    return WeakSender<T, BlockSize>(state_);
  }
  /// Bytes the channel holds now (control block + live blocks). Takes the
  /// list lock briefly; O(1).
  std::size_t memory_usage() const noexcept { return state()->memory_usage(Ops::layout(*state_)); }

 private:
  friend class WeakSender<T, BlockSize>;
  friend class ClosedAwaitable<T, BlockSize>;
  template <class U, std::size_t B>
  friend std::pair<Sender<U, B>, Receiver<U, B>> channel(std::size_t capacity,
                                                         ChannelOptions options);
  template <class U, std::size_t B>
  friend TryChannel<U, B> try_channel(std::size_t capacity, ChannelOptions options) noexcept;

  explicit Sender(internal::ChannelState* state) noexcept : state_(state) {}

  internal::ChannelState* state() const noexcept {
    // One predictable branch, in every build: a moved-from handle has no
    // channel, and going on would dereference null.
    if (state_ == nullptr) [[unlikely]] {
      internal::contract_violation("use of a moved-from Sender");
    }
    return state_;
  }
  static SendStatus to_status(internal::PermitOutcome outcome) noexcept {
    switch (outcome) {
      case internal::PermitOutcome::kAcquired: return SendStatus::kOk;
      case internal::PermitOutcome::kFull: return SendStatus::kFull;
      case internal::PermitOutcome::kClosed: return SendStatus::kClosed;
      case internal::PermitOutcome::kTimedOut: return SendStatus::kTimedOut;
      case internal::PermitOutcome::kSent: return SendStatus::kOk;
      case internal::PermitOutcome::kNoMemory: return SendStatus::kNoMemory;
    }
    return SendStatus::kClosed;
  }
  SendResult<T> send_with(T&& value, const internal::Deadline* deadline) noexcept {
    switch (Ops::try_push_fast(*state(), value)) {
      case Ops::FastSend::kSent: return SendResult<T>::success();
      case Ops::FastSend::kAcquired:
        return push_if(internal::PermitOutcome::kAcquired, std::move(value));
      case Ops::FastSend::kNoMemory:
        return push_if(internal::PermitOutcome::kNoMemory, std::move(value));
      case Ops::FastSend::kNotTaken: break;
    }
    const auto outcome = state()->acquire_permit_for(&value, &Sender::push_erased, deadline);
    if (outcome == internal::PermitOutcome::kSent) return SendResult<T>::success();
    return push_if(outcome, std::move(value));
  }
  // A waiting send completed by the thread that hands it a slot; false
  // (nothing moved) if the blocks could not be provided.
  static bool push_erased(internal::ChannelState& state, void* value) noexcept {
    if (!Ops::provide(state)) return false;
    Ops::push(state, std::move(*static_cast<T*>(value)));
    return true;
  }
  // Whether `notifier` is queued, firing or holds news (not idle) for
  // another channel, or (`value` not null) for another value. relaxed:
  // the owner wrote channel and value itself; only a misuse races here.
  bool busy_elsewhere(const SendNotifier& notifier, const T* value) const noexcept {
    if (notifier.node_.node.state.load(std::memory_order_relaxed) == internal::WaitNode::kIdle) {
      return false;
    }
    return notifier.node_.channel != state() ||
           (value != nullptr && notifier.node_.value != static_cast<const void*>(value));
  }
  // try_send without moving `value` unless it is sent.
  SendStatus try_send_from(T& value) noexcept {
    switch (Ops::try_push_fast(*state(), value)) {
      case Ops::FastSend::kSent: return SendStatus::kOk;
      case Ops::FastSend::kAcquired: return push_from(internal::PermitOutcome::kAcquired, value);
      case Ops::FastSend::kNoMemory: return push_from(internal::PermitOutcome::kNoMemory, value);
      case Ops::FastSend::kNotTaken: break;
    }
    return push_from(state()->try_acquire_permits(1), value);
  }
  // As push_if, leaving `value` where it is unless it is sent.
  SendStatus push_from(internal::PermitOutcome outcome, T& value) noexcept {
    outcome = provided(outcome, 1);
    if (outcome != internal::PermitOutcome::kAcquired) return to_status(outcome);
    Ops::push(*state_, std::move(value));
    return SendStatus::kOk;
  }
  // Every path that gives this sender permits (the lock-free CAS, the
  // queue, a notifier's grant) ends here, for a send as for a reservation:
  // the blocks for them are provided (allocated if need be), or the permits
  // go back and the send or reservation fails with kNoMemory.
  internal::PermitOutcome provided(internal::PermitOutcome outcome, std::uint32_t count) noexcept {
    if (outcome != internal::PermitOutcome::kAcquired || Ops::provide(*state_)) return outcome;
#if defined(LEANCHAN_TEST_POINTS)
    LEANCHAN_TEST_POINT(kProvideRefused);
#endif
    internal::Ending::return_unused(*state_, count);
    return internal::PermitOutcome::kNoMemory;
  }
  // A send given its permit (kAcquired) has its block provided, then claims
  // a position and writes; otherwise (kNoMemory included) the value comes
  // back with the reason.
  SendResult<T> push_if(internal::PermitOutcome outcome, T&& value) noexcept {
    outcome = provided(outcome, 1);
    if (outcome != internal::PermitOutcome::kAcquired) {
      return SendResult<T>::failure(to_status(outcome), std::move(value));
    }
    Ops::push(*state_, std::move(value));
    return SendResult<T>::success();
  }
  // `acquire(n)` runs only for 1 <= count <= max_capacity().
  template <class Acquire>
  PermitBatch<T, BlockSize> make_batch(std::size_t count, Acquire acquire) noexcept {
    if (count > max_capacity()) return {nullptr, 0, SendStatus::kExceedsCapacity};
    if (count == 0) return {nullptr, 0, SendStatus::kOk};
    const auto outcome =
        provided(acquire(static_cast<std::uint32_t>(count)), static_cast<std::uint32_t>(count));
    if (outcome != internal::PermitOutcome::kAcquired) return {nullptr, 0, to_status(outcome)};
    state_->lifetime().add_sender();
    state_->lifetime().add_handle();
    return {state_, count, SendStatus::kOk};
  }

  Permit<T, BlockSize> make_permit(internal::PermitOutcome outcome) noexcept {
    if (outcome != internal::PermitOutcome::kAcquired) return {nullptr, to_status(outcome)};
    state_->lifetime().add_sender();
    state_->lifetime().add_handle();
    return {state_, SendStatus::kOk};
  }
  void reset() noexcept {
    internal::ChannelState* state = std::exchange(state_, nullptr);
    if (state == nullptr) return;
    state->remove_sender();
    Ops::release_handle(state);
  }

  internal::ChannelState* state_;
};

/// A sender that does not keep the channel open: once every Sender and Permit
/// is gone, upgrade() fails and the receiver sees the end. It still keeps the
/// control block (64 bytes) alive, never the messages' blocks beyond that.
template <class T, std::size_t BlockSize>
class WeakSender {
  using Ops = internal::ChannelOps<T, BlockSize>;

 public:
  /// Another weak handle on the same channel.
  WeakSender(const WeakSender& other) noexcept : state_(other.state_) {
    if (state_ != nullptr) state_->lifetime().add_handle();
  }
  /// Takes over `other`'s handle; `other` is left empty.
  WeakSender(WeakSender&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  /// Copy or move assignment: takes `other`'s handle and drops the one this held.
  WeakSender& operator=(WeakSender other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  /// Drops the handle (the last handle of any kind frees the control block).
  ~WeakSender() {
    if (state_ != nullptr) Ops::release_handle(state_);
  }

  /// A real Sender if any Sender or Permit is still alive, else nullopt.
  std::optional<Sender<T, BlockSize>> upgrade() const noexcept {
    if (state_ == nullptr) [[unlikely]] {
      internal::contract_violation("use of a moved-from WeakSender");
    }
    if (!state_->lifetime().try_add_sender()) return std::nullopt;
    state_->lifetime().add_handle();
    return Sender<T, BlockSize>(state_);
  }

 private:
  friend class Sender<T, BlockSize>;
  explicit WeakSender(internal::ChannelState* state) noexcept : state_(state) {}
  internal::ChannelState* state_;
};

}  // namespace leanchan

#endif  // LEANCHAN_SENDER_H_
