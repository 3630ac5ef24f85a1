// leanchan/status.h: what a send or a receive reports, and the value it hands back.
//
// A send that fails never loses the message: SendResult<T> carries it back to
// the caller together with the reason (full, closed, timed out). A receive
// that gets nothing says why (empty, disconnected, timed out).
//
//   leanchan::SendResult<Event> r = tx.try_send(std::move(event));
//   if (!r.ok()) {
//     if (r.status() == leanchan::SendStatus::kFull) retry_later(std::move(r).value());
//   }
//
// Thread-safety: these are plain value types; none is shared.
#ifndef LEANCHAN_STATUS_H_
#define LEANCHAN_STATUS_H_

#include <cassert>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace leanchan {

// Why a send did or did not enqueue its message.
enum class SendStatus : std::uint8_t {
  kOk,               // the message is in the channel
  kFull,             // try_send / try_reserve only: every slot is taken right now
  kClosed,           // the receiver closed the channel or was destroyed
  kTimedOut,         // send_for / send_until: no slot came free before the deadline
  kExceedsCapacity,  // reserve_many / try_reserve_many: more slots than the capacity
  kNoMemory,         // a block the message needed could not be allocated; the channel
                     // is unchanged and fully usable (a later send may succeed)
};

// Why a receive did or did not return a message.
enum class RecvStatus : std::uint8_t {
  kOk,            // a message was taken
  kEmpty,         // try_recv only: nothing queued now, but senders remain
  kDisconnected,  // nothing queued and nothing can ever arrive again
  kTimedOut,      // recv_for / recv_until: nothing arrived before the deadline
};

std::string_view to_string(SendStatus status) noexcept;
std::string_view to_string(RecvStatus status) noexcept;

// The outcome of a send. When !ok(), value() is the message the caller gave,
// handed back unchanged (moved, never copied).
// GCC 12 reports -Wmaybe-uninitialized when an empty std::optional of a
// trivially copyable T is returned by value (it copies the unused payload
// bytes; GCC bug 105562 and its duplicates). The payload is never read while
// empty, so the warning is silenced for these two class templates only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

template <class T>
class [[nodiscard]] SendResult {
 public:
  static SendResult success() noexcept { return SendResult(); }
  static SendResult failure(SendStatus status, T&& value) noexcept {
    assert(status != SendStatus::kOk);
    return SendResult(status, std::move(value));
  }

  bool ok() const noexcept { return status_ == SendStatus::kOk; }
  SendStatus status() const noexcept { return status_; }

  // The message handed back. Precondition: !ok().
  T& value() & noexcept {
    assert(!ok());
    return *value_;
  }
  T&& value() && noexcept {
    assert(!ok());
    return std::move(*value_);
  }

 private:
  SendResult() noexcept = default;
  SendResult(SendStatus status, T&& value) noexcept : status_(status), value_(std::move(value)) {}

  SendStatus status_ = SendStatus::kOk;
  std::optional<T> value_;
};

// The outcome of try_recv / recv_for / recv_until. Holds the message iff ok().
template <class T>
class [[nodiscard]] RecvResult {
 public:
  static RecvResult success(T&& value) noexcept { return RecvResult(std::move(value)); }
  static RecvResult failure(RecvStatus status) noexcept {
    assert(status != RecvStatus::kOk);
    return RecvResult(status);
  }

  bool ok() const noexcept { return status_ == RecvStatus::kOk; }
  RecvStatus status() const noexcept { return status_; }

  // The message taken. Precondition: ok().
  T& value() & noexcept {
    assert(ok());
    return *value_;
  }
  T&& value() && noexcept {
    assert(ok());
    return std::move(*value_);
  }

 private:
  explicit RecvResult(T&& value) noexcept : status_(RecvStatus::kOk), value_(std::move(value)) {}
  explicit RecvResult(RecvStatus status) noexcept : status_(status) {}

  RecvStatus status_;
  std::optional<T> value_;
};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace leanchan

#endif  // LEANCHAN_STATUS_H_
