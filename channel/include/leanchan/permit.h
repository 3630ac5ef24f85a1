// SPDX-License-Identifier: MIT
/// @file
/// leanchan/permit.h: reserved slots of a channel: Permit (one) and
/// PermitBatch (several). Obtain them from Sender::reserve, try_reserve,
/// reserve_many or try_reserve_many (leanchan/sender.h).
///
/// @code
///   if (auto permit = tx.reserve()) permit.send(Event{1});     // cannot fail
///   auto batch = tx.reserve_many(3);                          // all or none
///   while (batch) batch.send(next_event());
/// @endcode
///
/// Thread-safety: a permit belongs to one thread at a time (it may be moved
/// between threads).
#ifndef LEANCHAN_PERMIT_H_
#define LEANCHAN_PERMIT_H_

#include <cstddef>
#include <cstdint>
#include <utility>

#include "leanchan/fwd.h"
#include "leanchan/internal/channel_ops.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/contract.h"
#include "leanchan/status.h"

namespace leanchan {

/// One reserved slot. send() fills it and cannot fail, even if the receiver
/// closes meanwhile (the message is then queued as any other and destroyed with
/// the channel), and allocates nothing: the block its message will use was
/// provided when the permit was granted (reserve fails with kNoMemory if it
/// could not be allocated). Destroying a permit unused gives the slot back. A live
/// permit counts as a sender: the channel stays open for it.
template <class T, std::size_t BlockSize>
class [[nodiscard]] Permit {
  using Ops = internal::ChannelOps<T, BlockSize>;

 public:
  /// Takes over `other`'s slot (if any) and status; `other` is left empty.
  Permit(Permit&& other) noexcept
      : state_(std::exchange(other.state_, nullptr)), status_(other.status_) {}
  /// Gives back the slot this held (if unused), then takes over `other`'s.
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
  /// Gives the slot back if it was not used.
  ~Permit() { release(); }

  /// True while the permit holds a slot (reservation succeeded, not yet sent).
  explicit operator bool() const noexcept { return state_ != nullptr; }
  /// kOk if the reservation succeeded; otherwise why it failed (kFull from
  /// try_reserve, kClosed, kNoMemory). Unchanged by send().
  SendStatus status() const noexcept { return status_; }

  /// Puts `value` in the reserved slot; the permit is empty afterwards.
  /// Precondition: *this holds a slot (test it, or its status(), first: a
  /// reservation fails when the channel is closed, full for try_reserve, or
  /// out of memory). On an empty permit it prints why and aborts, in every
  /// build: there is no slot to put the value in, and dropping it silently
  /// would lose it. Never blocks on the bound; O(1); allocates nothing
  /// (provisioning: docs/design.md "Allocation before the claim").
  void send(T value) noexcept {
    if (state_ == nullptr) [[unlikely]] {
      internal::contract_violation(
          "Permit::send on an empty permit (the reservation failed or the permit was used: "
          "check the permit before sending)");
    }
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
    internal::Ending::return_unused(*state, 1);
    state->remove_sender();
    Ops::release_handle(state);
  }

  internal::ChannelState* state_;
  SendStatus status_;
};

/// Several reserved slots at once (Sender::reserve_many). Each send() fills
/// one and cannot fail; destroying the batch gives the unused ones back (to
/// waiting senders first). The batch counts as one sender while it holds
/// slots.
template <class T, std::size_t BlockSize>
class [[nodiscard]] PermitBatch {
  using Ops = internal::ChannelOps<T, BlockSize>;

 public:
  /// Takes over `other`'s slots and status; `other` is left empty.
  PermitBatch(PermitBatch&& other) noexcept
      : state_(std::exchange(other.state_, nullptr)),
        remaining_(std::exchange(other.remaining_, 0)),
        status_(other.status_) {}
  /// Gives back the slots this still held, then takes over `other`'s.
  PermitBatch& operator=(PermitBatch&& other) noexcept {
    if (this != &other) {
      release();
      state_ = std::exchange(other.state_, nullptr);
      remaining_ = std::exchange(other.remaining_, 0);
      status_ = other.status_;
    }
    return *this;
  }
  PermitBatch(const PermitBatch&) = delete;
  PermitBatch& operator=(const PermitBatch&) = delete;
  /// Gives the unused slots back (to waiting senders first).
  ~PermitBatch() { release(); }

  /// Slots still reserved.
  std::size_t size() const noexcept { return remaining_; }
  /// True while slots remain: size() > 0.
  explicit operator bool() const noexcept { return remaining_ != 0; }
  /// kOk if the reservation succeeded (also for zero slots); otherwise why
  /// not (kFull from try_reserve_many, kClosed, kExceedsCapacity, kNoMemory).
  /// Unchanged by send().
  SendStatus status() const noexcept { return status_; }

  /// Puts `value` in one reserved slot. Precondition: size() > 0 (as
  /// Permit::send, it aborts with a message otherwise). O(1); allocates
  /// nothing (the blocks were provided with the reservation).
  void send(T value) noexcept {
    if (remaining_ == 0) [[unlikely]] {
      internal::contract_violation(
          "PermitBatch::send with no slot left (the reservation failed or every slot was used: "
          "check the batch before sending)");
    }
    Ops::push(*state_, std::move(value));
    if (--remaining_ == 0) release();
  }

 private:
  friend class Sender<T, BlockSize>;
  PermitBatch(internal::ChannelState* state, std::size_t count, SendStatus status) noexcept
      : state_(state), remaining_(count), status_(status) {}

  void release() noexcept {
    internal::ChannelState* state = std::exchange(state_, nullptr);
    if (state == nullptr) return;
    const auto unused = static_cast<std::uint32_t>(std::exchange(remaining_, 0));
    if (unused != 0) {
      internal::Ending::return_unused(*state, unused);
    }
    state->remove_sender();
    Ops::release_handle(state);
  }

  internal::ChannelState* state_;
  std::size_t remaining_;
  SendStatus status_;
};

}  // namespace leanchan

#endif  // LEANCHAN_PERMIT_H_
