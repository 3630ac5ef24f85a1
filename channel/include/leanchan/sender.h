// leanchan/sender.h: the sending handles of a channel: Sender, Permit and
// WeakSender. Create them with leanchan::channel (leanchan/channel.h).
//
//   auto [tx, rx] = leanchan::channel<Event>(64);
//   leanchan::Sender<Event> tx2 = tx;                   // another producer
//   if (auto r = tx2.try_send(Event{...}); !r.ok()) {   // kFull or kClosed
//     keep(std::move(r).value());                       // the event comes back
//   }
//   if (auto permit = tx.reserve()) permit.send(Event{...});  // cannot fail
//
// Thread-safety: a Sender may be used from one thread at a time; copies of it
// (each its own object) may be used from any number of threads at once.
// Permit and WeakSender likewise.
//
// Memory ordering: everything a thread did before a successful send happens
// before the receiver's return of that message.
//
// Empty handles: a moved-from handle may only be destroyed or assigned to.
#ifndef LEANCHAN_SENDER_H_
#define LEANCHAN_SENDER_H_

#include <cassert>
#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>

#include "leanchan/fwd.h"
#include "leanchan/internal/channel_ops.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/notifier.h"
#include "leanchan/status.h"

namespace leanchan {

// One reserved slot. send() fills it and cannot fail, even if the receiver
// closes meanwhile (the message is then queued as any other and destroyed with
// the channel). Destroying a permit unused gives the slot back. A live permit
// counts as a sender: the channel stays open for it.
template <class T, std::size_t BlockSize>
class [[nodiscard]] Permit {
  using Ops = internal::ChannelOps<T, BlockSize>;

 public:
  Permit(Permit&& other) noexcept
      : state_(std::exchange(other.state_, nullptr)), status_(other.status_) {}
  Permit& operator=(Permit&& other) noexcept {
    if (this != &other) {
      release();
      state_ = std::exchange(other.state_, nullptr);
      status_ = other.status_;
    }
    return *this;
  }
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;
  ~Permit() { release(); }

  // True while the permit holds a slot (reservation succeeded, not yet sent).
  explicit operator bool() const noexcept { return state_ != nullptr; }
  // kOk if the reservation succeeded; otherwise why it failed (kFull, kClosed,
  // kTimedOut). Unchanged by send().
  SendStatus status() const noexcept { return status_; }

  // Puts `value` in the reserved slot; the permit is empty afterwards.
  // Precondition: *this holds a slot. Never blocks on the bound; O(1); may
  // allocate a block (docs/design.md step 5).
  void send(T value) noexcept {
    assert(state_ != nullptr && "leanchan: Permit::send on an empty permit");
    internal::ChannelState* state = std::exchange(state_, nullptr);
    Ops::push(*state, std::move(value));
    state->remove_sender();
    Ops::release_handle(state);
  }

 private:
  friend class Sender<T, BlockSize>;
  Permit(internal::ChannelState* state, SendStatus status) noexcept
      : state_(state), status_(status) {}

  void release() noexcept {
    internal::ChannelState* state = std::exchange(state_, nullptr);
    if (state == nullptr) return;
    state->release_permit();
    state->notify_receiver();  // a closed receiver may wait for the last permit
    state->remove_sender();
    Ops::release_handle(state);
  }

  internal::ChannelState* state_;
  SendStatus status_;
};

// The producing handle. Copies share the channel and each keeps it open;
// when the last Sender (and last Permit) is gone, the receiver sees the end
// after taking what is queued.
template <class T, std::size_t BlockSize>
class Sender {
  using Ops = internal::ChannelOps<T, BlockSize>;

 public:
  Sender(const Sender& other) noexcept : state_(other.state_) {
    if (state_ != nullptr) {
      state_->add_sender();
      state_->add_handle();
    }
  }
  Sender(Sender&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  Sender& operator=(Sender other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  ~Sender() { reset(); }

  // Enqueues `value`, sleeping while the channel is full. Fails only with
  // kClosed (the receiver closed or is gone), handing `value` back. FIFO
  // with respect to this sender's other sends. Allocates a block only when
  // the message starts one and no recycled block is waiting.
  SendResult<T> send(T value) noexcept { return send_with(std::move(value), nullptr); }

  // Enqueues `value` only if a slot is free now: kFull or kClosed otherwise.
  // Never sleeps; lock-free unless the message opens a block.
  SendResult<T> try_send(T value) noexcept {
    const auto outcome = state()->try_acquire_permit();
    if (outcome != internal::PermitOutcome::kAcquired) {
      return SendResult<T>::failure(to_status(outcome), std::move(value));
    }
    Ops::push(*state_, std::move(value));
    return SendResult<T>::success();
  }

  // As send(), but gives up with kTimedOut once `timeout` has passed.
  template <class Rep, class Period>
  SendResult<T> send_for(T value, const std::chrono::duration<Rep, Period>& timeout) noexcept {
    return send_until(std::move(value), std::chrono::steady_clock::now() + timeout);
  }
  // As send(), but gives up with kTimedOut at `deadline` (any clock; it is
  // converted to the steady clock once, at the call).
  template <class Clock, class Duration>
  SendResult<T> send_until(T value,
                           const std::chrono::time_point<Clock, Duration>& deadline) noexcept {
    const internal::Deadline steady = internal::to_steady_deadline(deadline);
    return send_with(std::move(value), &steady);
  }

  // Reserves one slot, sleeping while full. The permit is empty, with
  // status() kClosed, if the channel is closed.
  Permit<T, BlockSize> reserve() noexcept { return make_permit(state()->acquire_permit(nullptr)); }
  // Reserves one slot only if one is free now (status() kFull or kClosed).
  Permit<T, BlockSize> try_reserve() noexcept { return make_permit(state()->try_acquire_permit()); }

  // co_await tx.async_send(value, executor): a coroutine-friendly send();
  // see leanchan/coro.h (included by leanchan/channel.h).
  SendAwaitable<T, BlockSize> async_send(T value, Executor& executor) noexcept;

  // ---- Readiness (leanchan/notifier.h) --------------------------------------
  // True if a slot is free (or the channel is closed) now. Otherwise arms
  // `notifier`, one-shot: it is called when a slot frees (on the receiving
  // thread) or the channel closes. Any number of senders may arm their own.
  // Takes the channel's list lock briefly; allocates nothing.
  bool notify_when_room(Notifier& notifier) noexcept { return state()->arm_send(&notifier.node_); }
  // Cancels an armed `notifier`; true if it had not fired. When this returns
  // its callback is not running.
  bool cancel_notify(Notifier& notifier) noexcept { return state()->cancel_send(&notifier.node_); }

  // True once the receiver has closed the channel or been destroyed.
  bool is_closed() const noexcept { return state()->is_closed(); }
  // Free slots right now (a snapshot that may be stale on return).
  std::size_t capacity() const noexcept { return state()->free_slots(); }
  // The capacity the channel was created with.
  std::size_t max_capacity() const noexcept { return state()->capacity(); }
  bool same_channel(const Sender& other) const noexcept { return state_ == other.state_; }
  // A handle that does not keep the channel open; see WeakSender.
  WeakSender<T, BlockSize> downgrade() const noexcept {
    state()->add_handle();
    return WeakSender<T, BlockSize>(state_);
  }
  // Bytes the channel holds now (control block + live blocks). Takes the
  // list lock briefly; O(1).
  std::size_t memory_usage() const noexcept { return state()->memory_usage(Ops::layout(*state_)); }

 private:
  friend class WeakSender<T, BlockSize>;
  template <class U, std::size_t B>
  friend std::pair<Sender<U, B>, Receiver<U, B>> channel(std::size_t capacity);

  explicit Sender(internal::ChannelState* state) noexcept : state_(state) {}

  internal::ChannelState* state() const noexcept {
    assert(state_ != nullptr && "leanchan: use of a moved-from Sender");
    return state_;
  }
  static SendStatus to_status(internal::PermitOutcome outcome) noexcept {
    switch (outcome) {
      case internal::PermitOutcome::kAcquired: return SendStatus::kOk;
      case internal::PermitOutcome::kFull: return SendStatus::kFull;
      case internal::PermitOutcome::kClosed: return SendStatus::kClosed;
      case internal::PermitOutcome::kTimedOut: return SendStatus::kTimedOut;
    }
    return SendStatus::kClosed;
  }
  SendResult<T> send_with(T&& value, const internal::Deadline* deadline) noexcept {
    const auto outcome = state()->acquire_permit(deadline);
    if (outcome != internal::PermitOutcome::kAcquired) {
      return SendResult<T>::failure(to_status(outcome), std::move(value));
    }
    Ops::push(*state_, std::move(value));
    return SendResult<T>::success();
  }
  Permit<T, BlockSize> make_permit(internal::PermitOutcome outcome) noexcept {
    if (outcome != internal::PermitOutcome::kAcquired) return {nullptr, to_status(outcome)};
    state_->add_sender();
    state_->add_handle();
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

// A sender that does not keep the channel open: once every Sender and Permit
// is gone, upgrade() fails and the receiver sees the end. It still keeps the
// control block (64 bytes) alive, never the messages' blocks beyond that.
template <class T, std::size_t BlockSize>
class WeakSender {
  using Ops = internal::ChannelOps<T, BlockSize>;

 public:
  WeakSender(const WeakSender& other) noexcept : state_(other.state_) {
    if (state_ != nullptr) state_->add_handle();
  }
  WeakSender(WeakSender&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  WeakSender& operator=(WeakSender other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  ~WeakSender() {
    if (state_ != nullptr) Ops::release_handle(state_);
  }

  // A real Sender if any Sender or Permit is still alive, else nullopt.
  std::optional<Sender<T, BlockSize>> upgrade() const noexcept {
    assert(state_ != nullptr && "leanchan: use of a moved-from WeakSender");
    if (!state_->try_add_sender()) return std::nullopt;
    state_->add_handle();
    return Sender<T, BlockSize>(state_);
  }

 private:
  friend class Sender<T, BlockSize>;
  explicit WeakSender(internal::ChannelState* state) noexcept : state_(state) {}
  internal::ChannelState* state_;
};

}  // namespace leanchan

#endif  // LEANCHAN_SENDER_H_
