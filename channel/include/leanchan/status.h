// SPDX-License-Identifier: MIT
/// @file
/// leanchan/status.h: what a send or a receive reports, and the value it hands back.
///
/// A send that fails never loses the message: SendResult<T> carries it back to
/// the caller together with the reason (full, closed, timed out). A receive
/// that gets nothing says why (empty, disconnected, timed out).
///
/// @code
///   leanchan::SendResult<Event> r = tx.try_send(std::move(event));
///   if (!r.ok()) {
///     if (r.status() == leanchan::SendStatus::kFull) retry_later(std::move(r).value());
///   }
/// @endcode
///
/// Thread-safety: these are plain value types; none is shared.
#ifndef LEANCHAN_STATUS_H_
#define LEANCHAN_STATUS_H_

#include <cassert>
#include <cstdint>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "leanchan/export.h"
#include "leanchan/internal/contract.h"

namespace leanchan {

/// Why a send did or did not enqueue its message.
enum class SendStatus : std::uint8_t {
  kOk,               ///< the message is in the channel
  kFull,             ///< try_send / try_reserve only: every slot is taken right now
  kClosed,           ///< the receiver closed the channel or was destroyed
  kTimedOut,         ///< send_for / send_until: no slot came free before the deadline
  kExceedsCapacity,  ///< reserve_many / try_reserve_many: more slots than the capacity
  kNoMemory,         ///< a block the message needed could not be allocated; the channel
                     ///< is unchanged and fully usable (a later send may succeed)
};

/// Why a receive did or did not return a message.
enum class RecvStatus : std::uint8_t {
  kOk,            ///< a message was taken
  kEmpty,         ///< try_recv only: nothing queued now, but senders remain
  kDisconnected,  ///< nothing queued and nothing can ever arrive again
  kTimedOut,      ///< recv_for / recv_until: nothing arrived before the deadline
};

/// What Receiver::poll_recv found: RecvStatus's try_recv values, plus kBusy.
enum class PollStatus : std::uint8_t {
  kOk,            ///< a message was taken
  kEmpty,         ///< nothing queued now, but senders remain
  kBusy,          ///< the next message is still being written by its sender, and a
                  ///< later one is claimed behind it: try_recv would wait here
  kDisconnected,  ///< nothing queued and nothing can ever arrive again
};

/// What Sender::notify_when_room found. Only kArmed means "wait for the
/// callback"; every other value means "act now", and kHoldsSlot means the
/// slot is reserved for this notifier: a plain try_send cannot use it (it
/// fails with kFull for as long as the slot is held), so redeem it with
/// try_send(value, notifier) or try_reserve(notifier), or give it back with
/// cancel_notify(notifier).
enum class [[nodiscard]] RoomStatus : std::uint8_t{
    kRoom,       ///< a slot is free and nobody waits: try_send now (not armed)
    kClosed,     ///< the channel is closed: a send would fail (not armed)
    kArmed,      ///< queued: the callback runs when a slot is handed to it or on close
    kHoldsSlot,  ///< the notifier already holds a slot: redeem it (not armed)
};

/// The status in words, lowercase ("ok", "full", "timed out", ...), for logs and
/// messages; "unknown" for a value outside the enumeration.
LEANCHAN_API std::string_view to_string(SendStatus status) noexcept;
/// As to_string(SendStatus).
LEANCHAN_API std::string_view to_string(RecvStatus status) noexcept;
/// As to_string(SendStatus).
LEANCHAN_API std::string_view to_string(RoomStatus status) noexcept;
/// As to_string(SendStatus).
LEANCHAN_API std::string_view to_string(PollStatus status) noexcept;

namespace internal {

// The storage of SendResult and RecvResult: a status and a value that is
// alive exactly when `holds(status)` says so. Not std::optional: for a
// small trivially copyable T (8 bytes, byte-aligned, say) an optional plus
// a status is a 10-byte object GCC returns in two registers and shuffles
// through stack copies of mismatched widths on every call, stalling store
// forwarding: a send of an 8-byte message cost twice one of 24 bytes
// (docs/notebook/2026-11-30-results.md, "Where a message's time goes").
// Here the success path writes the status only, and the value is moved only
// when there is one.
template <class T, class Status, bool (*holds)(Status)>
class StatusAndValue {
  static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_destructible_v<T>,
                "leanchan: a message type must be nothrow move-constructible and destructible");

 public:
  StatusAndValue(StatusAndValue&& other) noexcept : status_(other.status_) {
    if (holds(status_)) construct(std::move(other.value_));
  }
  StatusAndValue(const StatusAndValue& other) noexcept(
      std::is_nothrow_copy_constructible_v<T>) requires std::is_copy_constructible_v<T>
      : status_(other.status_) {
    if (holds(status_)) construct(other.value_);
  }
  StatusAndValue& operator=(StatusAndValue&& other) noexcept {
    if (this != &other) {
      destroy();
      status_ = other.status_;
      if (holds(status_)) construct(std::move(other.value_));
    }
    return *this;
  }
  // The copy is made first: if T's copy constructor throws, nothing here
  // has changed (and the exception reaches the caller).
  StatusAndValue& operator=(const StatusAndValue& other) noexcept(
      std::is_nothrow_copy_constructible_v<T>) requires std::is_copy_constructible_v<T> {
    return *this = StatusAndValue(other);
  }
  ~StatusAndValue() { destroy(); }

  bool ok() const noexcept { return status_ == Status::kOk; }
  Status status() const noexcept { return status_; }
  // The value. Precondition: holds(status()); otherwise it prints why and
  // aborts, in every build (there is no value to return: the storage holds
  // none).
  T& value() & noexcept {
    check_holds();
    return value_;
  }
  const T& value() const& noexcept {
    check_holds();
    return value_;
  }
  T&& value() && noexcept {
    check_holds();
    return std::move(value_);
  }

 protected:
  explicit StatusAndValue(Status status) noexcept : status_(status) {}
  StatusAndValue(Status status, T&& value) noexcept : status_(status) {
    construct(std::move(value));
  }

 private:
  Status status_;
  union {
    T value_;  // alive iff holds(status_)
  };

  template <class... Args>
  void construct(Args&&... args) noexcept(std::is_nothrow_constructible_v<T, Args...>) {
    ::new (static_cast<void*>(std::addressof(value_))) T(std::forward<Args>(args)...);
  }
  void check_holds() const noexcept {
    if (!holds(status_)) [[unlikely]] {
      internal::contract_violation(
          "value() of a result that holds no value (a SendResult holds the message only when "
          "!ok(); a RecvResult or PollResult only when ok(): check first)");
    }
  }
  void destroy() noexcept {
    if (holds(status_)) value_.~T();
  }
};

constexpr bool send_holds_value(SendStatus status) noexcept {
  return status != SendStatus::kOk;
}
constexpr bool recv_holds_value(RecvStatus status) noexcept {
  return status == RecvStatus::kOk;
}
constexpr bool poll_holds_value(PollStatus status) noexcept {
  return status == PollStatus::kOk;
}

}  // namespace internal

/// The outcome of a send. When !ok(), value() is the message the caller gave,
/// handed back unchanged (moved, never copied). Movable; copyable when T is.
///
/// Members, from a private base: ok() (status() is kOk), status(), and value() on
/// an lvalue, a const lvalue or an rvalue result (`std::move(r).value()` moves the
/// message out).
template <class T>
class [[nodiscard]] SendResult
    : private internal::StatusAndValue<T, SendStatus, &internal::send_holds_value> {
  using Base = internal::StatusAndValue<T, SendStatus, &internal::send_holds_value>;

 public:
  /// A send that enqueued its message: status() kOk, no value.
  static SendResult success() noexcept { return SendResult(SendStatus::kOk); }
  /// A send that failed for `status` (not kOk), handing `value` back.
  static SendResult failure(SendStatus status, T&& value) noexcept {
    assert(status != SendStatus::kOk);
    return SendResult(status, std::move(value));
  }

  using Base::ok;
  using Base::status;
  /// The message handed back. Precondition: !ok().
  using Base::value;

 private:
  using Base::Base;
};

/// The outcome of try_recv / recv_for / recv_until. Holds the message iff ok().
/// Movable; copyable when T is. Members as SendResult's: ok(), status(), value().
template <class T>
class [[nodiscard]] RecvResult
    : private internal::StatusAndValue<T, RecvStatus, &internal::recv_holds_value> {
  using Base = internal::StatusAndValue<T, RecvStatus, &internal::recv_holds_value>;

 public:
  /// A receive that took `value`: status() kOk.
  static RecvResult success(T&& value) noexcept {
    return RecvResult(RecvStatus::kOk, std::move(value));
  }
  /// A receive that took nothing, for `status` (not kOk).
  static RecvResult failure(RecvStatus status) noexcept {
    assert(status != RecvStatus::kOk);
    return RecvResult(status);
  }

  using Base::ok;
  using Base::status;
  /// The message taken. Precondition: ok().
  using Base::value;

 private:
  using Base::Base;
};

/// The outcome of poll_recv. Holds the message iff ok(). Movable; copyable
/// when T is. Members as SendResult's: ok(), status(), value().
template <class T>
class [[nodiscard]] PollResult
    : private internal::StatusAndValue<T, PollStatus, &internal::poll_holds_value> {
  using Base = internal::StatusAndValue<T, PollStatus, &internal::poll_holds_value>;

 public:
  /// A poll that took `value`: status() kOk.
  static PollResult success(T&& value) noexcept {
    return PollResult(PollStatus::kOk, std::move(value));
  }
  /// A poll that took nothing, for `status` (not kOk).
  static PollResult failure(PollStatus status) noexcept {
    assert(status != PollStatus::kOk);
    return PollResult(status);
  }

  using Base::ok;
  using Base::status;
  /// The message taken. Precondition: ok().
  using Base::value;

 private:
  using Base::Base;
};

}  // namespace leanchan

#endif  // LEANCHAN_STATUS_H_
