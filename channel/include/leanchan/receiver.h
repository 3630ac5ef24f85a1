// SPDX-License-Identifier: MIT
/// @file
/// leanchan/receiver.h: the consuming handle of a channel.
///
/// @code
///   auto [tx, rx] = leanchan::channel<Event>(64);
///   while (std::optional<Event> e = rx.recv()) handle(*e);   // until closed + drained
/// @endcode
///
/// Thread-safety: one consumer. A Receiver is move-only and must be used from
/// one thread at a time; it may be moved between threads.
///
/// Memory ordering: a message's return happens after everything its sender
/// did before sending it.
///
/// Ending: recv() returns nullopt (try_recv kDisconnected) once nothing is
/// queued and nothing can arrive: every Sender and Permit is gone, or close()
/// was called and every outstanding Permit has been used or dropped.
///
/// Destroying the Receiver closes the channel and destroys every queued
/// message; messages still sent through outstanding permits are destroyed
/// when the last handle goes.
#ifndef LEANCHAN_RECEIVER_H_
#define LEANCHAN_RECEIVER_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "leanchan/fwd.h"
#include "leanchan/internal/channel_ops.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/contract.h"
#include "leanchan/notifier.h"
#include "leanchan/status.h"

namespace leanchan {

/// The consuming handle: one per channel, move-only. Ending, destruction and
/// thread-safety: see leanchan/receiver.h.
template <class T, std::size_t BlockSize>
class Receiver {
  using Ops = internal::ChannelOps<T, BlockSize>;

 public:
  /// Takes over `other`'s handle; `other` is left empty.
  Receiver(Receiver&& other) noexcept
      : state_(std::exchange(other.state_, nullptr)),
        cursor_(other.cursor_),
        has_notifier_(std::exchange(other.has_notifier_, false)) {}
  /// Drops the handle this held (as the destructor does), then takes over `other`'s.
  Receiver& operator=(Receiver&& other) noexcept {
    if (this != &other) {
      reset();
      state_ = std::exchange(other.state_, nullptr);
      cursor_ = other.cursor_;
      has_notifier_ = std::exchange(other.has_notifier_, false);
    }
    return *this;
  }
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;
  /// Closes the channel and destroys every queued message (see leanchan/receiver.h).
  ~Receiver() { reset(); }

  /// The next message, sleeping until one arrives; nullopt once the channel
  /// has ended (see the file comment). Gives the message's slot back to the
  /// senders, waking one that sleeps. Takes the list lock once per BlockSize
  /// messages (when a block is finished); never allocates.
  std::optional<T> recv() noexcept {
    std::optional<T> value;
    wait_take(value, nullptr);
    return value;
  }

  /// Receiving in a for loop, as crossbeam's iter():
  ///
  /// @code
  ///   for (Event& event : rx) handle(event);   // or: for (Event& e : rx.iter())
  /// @endcode
  ///
  /// Each step is a recv(): it sleeps while the channel is empty, and the
  /// loop ends once the channel has ended (every sender and permit gone, or
  /// close(), and drained). The element is the iterator's until the next
  /// step: move it out to keep it. An input range (std::ranges::input_range);
  /// one loop at a time per receiver.
  template <bool kBlocking>
  class Iterator {
   public:
    using value_type = T;                              ///< the message type
    using difference_type = std::ptrdiff_t;            ///< as input iterators have
    using iterator_concept = std::input_iterator_tag;  ///< single pass

    /// An iterator at the end (as the sentinel).
    Iterator() = default;
    /// The message of this step.
    T& operator*() const noexcept { return *current_; }
    /// The message of this step.
    T* operator->() const noexcept { return &*current_; }
    /// Takes the next message: recv() (blocking) or try_recv() (try_iter).
    Iterator& operator++() noexcept {
      if constexpr (kBlocking) {
        current_ = receiver_->recv();
      } else {
        RecvResult<T> result = receiver_->try_recv();
        if (result.ok()) {
          current_.emplace(std::move(result).value());
        } else {
          current_.reset();
        }
      }
      return *this;
    }
    /// As ++it.
    void operator++(int) noexcept { ++*this; }
    /// True once a step found no message (the end of the loop).
    friend bool operator==(const Iterator& it, std::default_sentinel_t) noexcept {
      return !it.current_.has_value();
    }

   private:
    friend class Receiver;
    explicit Iterator(Receiver& receiver) noexcept : receiver_(&receiver) { ++*this; }

    Receiver* receiver_ = nullptr;
    mutable std::optional<T> current_;
  };

  /// The range iter() and try_iter() return.
  template <bool kBlocking>
  class Range {
   public:
    /// Takes the first message (the loop's first step).
    Iterator<kBlocking> begin() noexcept { return Iterator<kBlocking>(*receiver_); }
    /// The end: compares equal to an iterator whose step found nothing.
    std::default_sentinel_t end() const noexcept { return {}; }

   private:
    friend class Receiver;
    explicit Range(Receiver& receiver) noexcept : receiver_(&receiver) {}
    Receiver* receiver_;
  };

  /// for (T& v : rx): see iter().
  Iterator<true> begin() noexcept { return Iterator<true>(*this); }
  /// The end of for (T& v : rx).
  std::default_sentinel_t end() const noexcept { return {}; }
  /// The messages as they come, until the channel ends (each step a recv()).
  Range<true> iter() noexcept { return Range<true>(*this); }
  /// The messages there now: each step a try_recv(), ending at the first
  /// kEmpty or kDisconnected (crossbeam's try_iter). Never sleeps.
  Range<false> try_iter() noexcept { return Range<false>(*this); }

  /// The next message if one is there: kEmpty if not, kDisconnected if the
  /// channel has ended. Linearizable: it never reports kEmpty (or
  /// kDisconnected) while a send that completed before the call is queued.
  /// A send still being written (its position claimed, its value not yet
  /// published) does not count as there; but when a later send has been
  /// claimed behind it (and may have completed), try_recv waits for the
  /// earlier one to be published: briefly by watching, then asleep until its
  /// sender publishes; or, while a receive notifier is armed or firing (for
  /// example inside its callback), by yielding, leaving the notifier as it
  /// is. It never waits otherwise.
  RecvResult<T> try_recv() noexcept {
    std::optional<T> value;
    switch (take_without_waiting(value)) {
      case PollStatus::kOk: return RecvResult<T>::success(std::move(*value));
      case PollStatus::kEmpty: return RecvResult<T>::failure(RecvStatus::kEmpty);
      case PollStatus::kDisconnected: return RecvResult<T>::failure(RecvStatus::kDisconnected);
      case PollStatus::kBusy: break;
    }
    // Position index is claimed but unpublished, and another is claimed
    // after it: the earlier sender is between its claim and its publish, so
    // the wait is short and ends with it.
    internal::ChannelState& state = *this->state();
    if (state.signal().idle()) {
      if (wait_take(value, nullptr) == RecvStatus::kOk) {
        return RecvResult<T>::success(std::move(*value));
      }
      return RecvResult<T>::failure(RecvStatus::kEmpty);
    }
    // A receive notifier is armed or firing (this may even run inside its
    // callback): sleeping would disarm it, or wait for the very callback
    // that called us. Yield until the sender publishes.
    while (!Ops::try_take(state, cursor_, value)) internal::yield_thread();
    return RecvResult<T>::success(std::move(*value));
  }

  /// As try_recv(), but never waits: where try_recv would wait for an
  /// earlier sender to publish (its position claimed, its value still being
  /// written, and a later send claimed behind it), this returns kBusy at
  /// once. For a thread that serves many channels (an event loop, a
  /// coroutine executor): one slow producer must not hold it. On kEmpty or
  /// kBusy, arm the notifier (arm_notifier): it fires when that sender
  /// publishes. kBusy is not linearizable the way try_recv's kEmpty is: a
  /// later send may already have completed. Allocates nothing; takes the
  /// list lock only as try_recv does.
  PollResult<T> poll_recv() noexcept {
    std::optional<T> value;
    const PollStatus status = take_without_waiting(value);
    if (status == PollStatus::kOk) return PollResult<T>::success(std::move(*value));
    return PollResult<T>::failure(status);
  }

  /// As recv(), but gives up with kTimedOut once `timeout` has passed. A
  /// timeout too long for the clock (nanoseconds::max(), hours::max())
  /// waits forever.
  template <class Rep, class Period>
  RecvResult<T> recv_for(const std::chrono::duration<Rep, Period>& timeout) noexcept {
    return recv_at(internal::deadline_after(timeout));
  }
  /// As recv(), but gives up with kTimedOut at `deadline` (any clock;
  /// time_point::max() waits forever).
  template <class Clock, class Duration>
  RecvResult<T> recv_until(const std::chrono::time_point<Clock, Duration>& deadline) noexcept {
    return recv_at(internal::to_steady_deadline(deadline));
  }

  /// Sleeps until at least one message is there, then appends up to `limit`
  /// messages to `out` in one call. Returns how many were appended: 0 only if
  /// `limit` is 0 or the channel has ended. Room is made in `out` before a
  /// message is taken, so if `out` cannot grow (std::bad_alloc from its
  /// allocator) the exception propagates and no message is lost: those
  /// appended stay in `out`, the rest stay queued.
  std::size_t recv_many(std::vector<T>& out, std::size_t limit) {
    if (limit == 0) return 0;
    if (out.size() == out.capacity()) grow(out, limit);
    std::optional<T> first;
    if (wait_take(first, nullptr) != RecvStatus::kOk) return 0;
    out.push_back(std::move(*first));  // no allocation: the room exists
    std::size_t count = 1;
    // The drained messages extend wait_take's run (Ops::watch_depth): a
    // backlog taken in one call still says a sender streams ahead.
    while (count < limit) {
      if (out.size() == out.capacity()) {
        if (!Ops::may_be_ready(*state_, cursor_)) break;  // grow only for a message
        grow(out, limit - count);
      }
      std::optional<T> value;
      if (!Ops::try_take(*state_, cursor_, value)) break;
      out.push_back(std::move(*value));
      Ops::count_run(cursor_);
      ++count;
    }
    return count;
  }

  /// Refuses every later send and reservation (they fail with kClosed and
  /// wake up if sleeping); queued messages and outstanding permits stay
  /// deliverable. Idempotent.
  void close() noexcept { state()->close(); }

  // ---- Readiness (leanchan/notifier.h) --------------------------------------
  /// Attaches `notifier` (replacing any other). It must outlive the
  /// attachment; the receiver's destruction detaches it.
  void set_notifier(Notifier& notifier) noexcept {
    state()->attach_receive_node(&notifier.node_);  // replaces the one before
    has_notifier_ = true;
  }
  /// Detaches the notifier; when this returns its callback is not running and
  /// will not be called. No-op without one.
  void clear_notifier() noexcept {
    if (!has_notifier_) return;
    state()->detach_receive_node();
    has_notifier_ = false;
  }
  /// Whether a notifier is attached (set_notifier, until clear_notifier).
  bool has_notifier() const noexcept { return has_notifier_; }
  /// True if a message (or the end) is there now. Otherwise arms the
  /// attached notifier, one-shot, and returns false. A blocking receive
  /// (recv, recv_for, recv_until, recv_many) disarms it. O(1); takes the
  /// list lock only when the next message starts a block the receiver has
  /// not reached yet.
  /// Precondition: a notifier is attached (set_notifier); without one no
  /// callback could ever come, so it prints why and aborts, in every build.
  /// A message whose position is claimed but whose value is still being
  /// written does not count as there: the notifier stays armed and its
  /// sender fires it when it publishes (so a loop around arm_notifier never
  /// spins on a sender that is preempted mid-send).
  bool arm_notifier() noexcept {
    if (!has_notifier_) [[unlikely]] {
      internal::contract_violation(
          "Receiver::arm_notifier without a notifier (set_notifier first)");
    }
    internal::ChannelState& state = *this->state();
    state.signal().arm();  // then the re-check
    if (Ops::is_published(state, cursor_) || internal::Ending::is_finished(state, cursor_.index)) {
      state.signal().cancel_arming();
      return true;
    }
    Ops::release_when_empty(state, cursor_);
    return false;
  }
  /// Cancels an armed notifier; true if it had not fired. When this returns
  /// its callback is not running.
  bool disarm_notifier() noexcept { return state()->signal().disarm(); }

  /// co_await rx.async_recv(executor): a coroutine-friendly recv(); see
  /// leanchan/coro.h (included by leanchan/channel.h).
  RecvAwaitable<T, BlockSize> async_recv(Executor& executor) noexcept;
  /// co_await rx.async_recv_many(out, limit, executor): recv_many's
  /// coroutine form; see leanchan/coro.h.
  RecvManyAwaitable<T, BlockSize> async_recv_many(std::vector<T>& out, std::size_t limit,
                                                  Executor& executor) noexcept;

  /// Messages queued now, counting sends in progress (a snapshot).
  std::size_t len() const noexcept {
    return static_cast<std::size_t>(
        internal::Positions::distance(state()->claimed_position(), cursor_.index, cursor_.slots));
  }
  /// len() == 0: nothing queued now (a snapshot).
  bool is_empty() const noexcept { return len() == 0; }
  /// True once close() was called or every Sender and Permit is gone: no
  /// new send or reservation can succeed (a Permit granted before close()
  /// still sends), and queued messages may still be received. A snapshot.
  bool is_closed() const noexcept {
    return state()->is_closed() || state()->lifetime().sender_snapshot() == 0;
  }
  /// The capacity the channel was created with.
  std::size_t max_capacity() const noexcept { return state()->capacity(); }
  /// Bytes the channel holds now (control block + live blocks). Takes the
  /// list lock; O(1) but for the blocks numbered for permits held and the
  /// spares, which it counts (docs/design.md, "What each operation costs").
  std::size_t memory_usage() const noexcept { return state()->memory_usage(Ops::layout(*state_)); }
  /// Frees every block the channel does not need for the messages it holds
  /// now: the spare, and, if it is empty, every block (the next send opens a
  /// fresh one). Returns the bytes freed. Safe at any time from the
  /// receiver's thread, senders sending meanwhile (a message claimed first
  /// keeps its block). Whatever the retention policy; allocates nothing.
  /// O(blocks freed), under the channel's list lock.
  std::size_t shrink_to_fit() noexcept {
    internal::ChannelState& state = *this->state();
    const internal::BlockLayout layout = Ops::layout(state);
    std::size_t freed = state.blocks().release_spares(layout, 0);
    freed += Ops::release_if_drained(state, cursor_);
    return freed * layout.bytes;
  }

 private:
  template <class U, std::size_t B>
  friend std::pair<Sender<U, B>, Receiver<U, B>> channel(std::size_t capacity,
                                                         ChannelOptions options);
  template <class U, std::size_t B>
  friend TryChannel<U, B> try_channel(std::size_t capacity, ChannelOptions options) noexcept;
  friend class RecvManyAwaitable<T, BlockSize>;

  // A message is published at the receiver's position, or the channel has
  // ended: a receive now would not sleep.
  bool ready_now() noexcept {
    return Ops::is_published(*state(), cursor_) ||
           internal::Ending::is_finished(*state_, cursor_.index);
  }

  explicit Receiver(internal::ChannelState* state) noexcept
      : state_(state), cursor_(Ops::cursor_for(*state)) {}

  static bool may_be_ready(const void* self) noexcept {
    const auto* receiver = static_cast<const Receiver*>(self);
    return Ops::may_be_ready(*receiver->state_, receiver->cursor_);
  }

  internal::ChannelState* state() const noexcept {
    // One predictable branch, in every build (as Sender::state).
    if (state_ == nullptr) [[unlikely]] {
      internal::contract_violation("use of a moved-from Receiver");
    }
    return state_;
  }

  RecvResult<T> recv_at(internal::Deadline deadline) noexcept {
    std::optional<T> value;
    const RecvStatus status = wait_take(value, &deadline);
    if (status == RecvStatus::kOk) return RecvResult<T>::success(std::move(*value));
    return RecvResult<T>::failure(status);
  }

  // What try_recv and poll_recv share: the next message into `out` (kOk),
  // or why none was taken without waiting: kDisconnected (the channel has
  // ended), kBusy (the next position is claimed but unpublished and a later
  // one is claimed behind it: try_recv waits there), or kEmpty.
  PollStatus take_without_waiting(std::optional<T>& out) noexcept {
    internal::ChannelState& state = *this->state();
    if (Ops::try_take(state, cursor_, out)) return PollStatus::kOk;
    Ops::release_when_empty(state, cursor_);  // nothing to take
    // A message may have landed between the attempt and the end check, so
    // the end check is final only with nothing to take afterwards.
    if (internal::Ending::is_finished(state, cursor_.index)) {
      return Ops::try_take(state, cursor_, out) ? PollStatus::kOk : PollStatus::kDisconnected;
    }
    return internal::Positions::distance(state.claimed_position(), cursor_.index, cursor_.slots) > 1
               ? PollStatus::kBusy
               : PollStatus::kEmpty;
  }

  // Room for at least one more element in `out`, which is full. Below 8
  // elements, room for at most 8 and at most `wanted` (a small first call
  // reserves no more than its limit); from 8 on, double the capacity, as
  // push_back does, so that a vector that collects across many calls
  // costs amortized O(1) a message (growing by `wanted` copied it whole
  // at every call). May throw (nothing taken yet).
  static void grow(std::vector<T>& out, std::size_t wanted) {
    if (out.size() < 8) {
      out.reserve(out.size() + std::max<std::size_t>(1, std::min<std::size_t>(wanted, 8)));
      return;
    }
    out.reserve(out.capacity() <= out.max_size() / 2 ? 2 * out.capacity() : out.max_size());
  }

  // Take, else watch, announce the wait, re-check, and sleep.
  RecvStatus wait_take(std::optional<T>& out, const internal::Deadline* deadline) noexcept {
    internal::ChannelState& state = *this->state();
    for (;;) {
      if (Ops::try_take(state, cursor_, out)) {
        Ops::count_run(cursor_);
        return RecvStatus::kOk;
      }
      // A sender streaming into a shallow channel: let it finish the block
      // first (bounded), then take its messages in a row; the run goes on.
      if (Ops::watches_rest_of_block(cursor_)) {
        Ops::watch_rest_of_block(cursor_);
        if (Ops::try_take(state, cursor_, out)) return RecvStatus::kOk;
      }
      // A message is often a moment away: watch for it (bounded) first,
      // longer between looks while a sender streams (Ops::watch_depth).
      // (The watch notices an ended channel after a few looks; the checks
      // below decide.)
      if (internal::Ending::watch_briefly(state, &Receiver::may_be_ready, this, cursor_.index,
                                          Ops::watch_depth(cursor_)) &&
          Ops::try_take(state, cursor_, out)) {
        Ops::count_run(cursor_);
        return RecvStatus::kOk;
      }
      Ops::release_when_empty(state, cursor_);  // before sleeping
      state.signal().announce_wait();
      if (Ops::try_take(state, cursor_, out)) return RecvStatus::kOk;
      if (internal::Ending::is_finished(state, cursor_.index)) {
        // Nothing queued and nothing can come; one last take covers a
        // message published between the two checks above.
        if (Ops::try_take(state, cursor_, out)) return RecvStatus::kOk;
        return RecvStatus::kDisconnected;
      }
      if (!state.signal().sleep(deadline)) {
        if (Ops::try_take(state, cursor_, out)) return RecvStatus::kOk;
        return internal::Ending::is_finished(state, cursor_.index) ? RecvStatus::kDisconnected
                                                                   : RecvStatus::kTimedOut;
      }
    }
  }

  void reset() noexcept {
    internal::ChannelState* state = std::exchange(state_, nullptr);
    if (state == nullptr) return;
    if (has_notifier_) state->detach_receive_node();
    has_notifier_ = false;
    state->close();
    for (;;) {
      std::optional<T> queued;  // destroyed at the end of each iteration
      if (!Ops::try_take(*state, cursor_, queued)) break;
    }
    // Nothing will be taken again: the blocks no permit still out needs go
    // now, as shrink_to_fit frees them, not when the last sender goes. With
    // no permit out the release frees them all in one locked step; a
    // channel that never had a block takes no lock (has_blocks: a hint,
    // the lock decides).
    const internal::BlockLayout layout = Ops::layout(*state);
    if (state->blocks().has_blocks() && Ops::release_if_drained(*state, cursor_) == 0) {
      (void)state->blocks().release_spares(layout, 0);  // a permit keeps its block
    }
    // What arrives later through permits is destroyed by the last handle.
    state->blocks().forget_consumed(cursor_.index, layout);
    Ops::release_handle(state);
  }

  internal::ChannelState* state_;
  typename Ops::Cursor cursor_;  // the next position, the cached head (ChannelOps::Cursor)
  bool has_notifier_ = false;
};

}  // namespace leanchan

#endif  // LEANCHAN_RECEIVER_H_
