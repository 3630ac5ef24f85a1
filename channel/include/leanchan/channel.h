// SPDX-License-Identifier: MIT
/// @file
/// leanchan/channel.h: a bounded multi-producer single-consumer channel that
/// costs the memory of what it holds, not of what it might hold.
///
/// @code
///   #include "leanchan/channel.h"
///
///   auto [tx, rx] = leanchan::channel<Event>(1024);   // 64 bytes, no slot yet
///   std::thread producer([tx = std::move(tx)]() mutable {
///     for (int i = 0; i < 3; ++i) (void)tx.send(Event{i});
///   });                                               // tx dies: channel ends
///   while (std::optional<Event> e = rx.recv()) use(*e);
///   producer.join();
/// @endcode
///
/// Memory (S = sizeof(T), B = BlockSize, C = capacity; docs/design.md):
///   - creation: one allocation of sizeof(ChannelState) = 64 bytes; no slot;
///   - a block is one allocation of 16 + b*S bytes, b = min(B, C) slots (the
///     16 grows to alignof(T) for over-aligned T), made when a message needs
///     it; so a capacity-1 channel holding one message costs 64 + 16 + S;
///   - at most ceil(C/b) + 1 blocks are ever live;
///   - what a drained channel keeps is a policy chosen at creation,
///     channel<T, B>(capacity, retention) (leanchan/fwd.h; also
///     Retention::keep(n): up to n blocks, so bursts of up to n blocks
///     allocate nothing):
///     - Retention::kKeepOne (the default): exactly one block is kept for reuse
///       (64 + 16 + b*S bytes in all) once the receiver has found the drained
///       channel empty (fwd.h says when); a fully consumed block is reused in
///       place, so ping-pong traffic allocates nothing after the first
///       message, and traffic at constant depth allocates nothing once warm.
///     - Retention::kKeepNone: a drained channel holds 64 bytes; each burst of n
///       into an empty channel allocates ceil(n/b) blocks and frees them when
///       drained, and a trickle of one message at a time into an empty
///       channel costs one allocation and one free per message.
///   - Receiver::shrink_to_fit() frees, on request, every block the messages
///     held right now do not need (an empty channel goes back to 64 bytes).
///   - a Receiver destroyed while senders live destroys the queued messages
///     and frees every block a Permit still out does not need: the senders
///     then hold 64 bytes (plus a permit's block), whatever the policy.
///
///   - with ChannelOptions::memory (a std::pmr::memory_resource), the control
///     block (64 + 8 bytes) and every block come from the resource instead.
///
/// Errors: channel() throws std::invalid_argument for capacity 0 or above
/// kMaxCapacity, or a Retention::keep(n) above Retention::kMaxKeptBlocks
/// (nothing is allocated then), and std::bad_alloc (or what the
/// memory resource throws) if the control block cannot be allocated. A BlockSize outside 1..32 or
/// a T that is not nothrow-movable fails to compile with a message saying so. If a block a
/// message needs cannot be allocated (operator new(nothrow) returns null, or the memory resource
/// throws), that send fails with SendStatus::kNoMemory and hands the value back, and a reservation
/// fails with kNoMemory: nothing was claimed, the channel stays fully usable, and a later send may
/// succeed. A granted Permit's send never allocates, so it cannot fail.
///
/// Progress: a send that finds room and whose block exists takes no lock;
/// opening a block (once per b messages) and finishing one on the receiver's
/// side take a small per-channel lock. A blocking call that must wait first
/// watches briefly (bounded pauses, then a few yields), then sleeps on a
/// futex; waiting costs no memory.
///
/// Waiting senders are served first come, first served: threads in send /
/// reserve / reserve_many, send notifiers and coroutines share one FIFO
/// queue; a slot freed while anyone waits is handed to the longest-waiting
/// sender (try_send cannot take it), and a waiter that gives up (timeout,
/// cancel_notify, a destroyed coroutine) passes a slot it was handed to the
/// next. No count limits the number of waiters.
///
/// Readiness and coroutines: leanchan/notifier.h, leanchan/ready_set.h,
/// leanchan/coro.h (all included here).
#ifndef LEANCHAN_CHANNEL_H_
#define LEANCHAN_CHANNEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "leanchan/coro.h"
#include "leanchan/export.h"
#include "leanchan/fwd.h"
#include "leanchan/internal/channel_ops.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/notifier.h"
#include "leanchan/ready_set.h"
#include "leanchan/receiver.h"
#include "leanchan/sender.h"
#include "leanchan/status.h"

namespace leanchan {

namespace internal {
// Throws std::invalid_argument naming `capacity` unless 1 <= capacity <= kMaxCapacity.
LEANCHAN_API void validate_capacity(std::size_t capacity);
// Throws std::invalid_argument if `retention` keeps more than
// Retention::kMaxKeptBlocks blocks.
LEANCHAN_API void validate_retention(Retention retention);
}  // namespace internal

/// Creates a channel of `capacity` slots. Allocates only its 64-byte control
/// block. Throws std::invalid_argument if capacity is 0 or above kMaxCapacity.
/// kMaxCapacity and default_block_size are in leanchan/fwd.h.
/// `options` (leanchan/fwd.h): what the channel keeps when it drains
/// (Retention::kKeepOne by default, or kKeepNone) and where its memory comes
/// from (the global operator new by default, or a std::pmr::memory_resource).
/// Throws std::bad_alloc (or what the resource throws) if the control block
/// cannot be allocated.
template <class T, std::size_t BlockSize = default_block_size<T>>
std::pair<Sender<T, BlockSize>, Receiver<T, BlockSize>> channel(std::size_t capacity,
                                                                ChannelOptions options = {}) {
  static_assert(internal::CheckChannelParameters<T, BlockSize>::kValid);
  internal::validate_capacity(capacity);
  internal::validate_retention(options.retention);
  using Ops = internal::ChannelOps<T, BlockSize>;
  const std::uint32_t slots = Ops::slots_for(capacity);
  const auto registration = Ops::registration(slots, options);
  auto* state = internal::ChannelState::create(
      static_cast<std::uint32_t>(capacity), slots, options.retention, options.memory,
      options.first_waiter_watch, options.registry != nullptr ? &registration : nullptr);
  return {Sender<T, BlockSize>(state), Receiver<T, BlockSize>(state)};
}
/// Why try_channel made no channel.
enum class ChannelError : std::uint8_t {
  kOk,                 ///< a channel was made (the ends are in TryChannel::ends)
  kZeroCapacity,       ///< capacity 0
  kCapacityTooLarge,   ///< capacity above kMaxCapacity
  kRetentionTooLarge,  ///< Retention::keep(n) above Retention::kMaxKeptBlocks
  kNoMemory,           ///< the control block could not be allocated
};
/// The error in words ("capacity must be at least 1", ...; "ok" for kOk), for messages.
LEANCHAN_API std::string_view to_string(ChannelError error) noexcept;

/// What try_channel returns: the two ends, or why there are none.
template <class T, std::size_t BlockSize>
struct [[nodiscard]] TryChannel {
  /// True if the channel was made: error is kOk.
  bool ok() const noexcept { return error == ChannelError::kOk; }
  /// kOk, or why there is no channel.
  ChannelError error;
  /// The sender and the receiver, iff ok().
  std::optional<std::pair<Sender<T, BlockSize>, Receiver<T, BlockSize>>> ends;  // iff ok()
};

namespace internal {
LEANCHAN_API ChannelError check_channel_arguments(std::size_t capacity,
                                                  Retention retention) noexcept;
}  // namespace internal

/// As channel(), but never throws: for code built with -fno-exceptions, or
/// that treats a failed creation as a value. Bad arguments and a failed
/// allocation of the control block come back as a ChannelError.
template <class T, std::size_t BlockSize = default_block_size<T>>
TryChannel<T, BlockSize> try_channel(std::size_t capacity, ChannelOptions options = {}) noexcept {
  static_assert(internal::CheckChannelParameters<T, BlockSize>::kValid);
  const ChannelError error = internal::check_channel_arguments(capacity, options.retention);
  if (error != ChannelError::kOk) return {error, std::nullopt};
  using Ops = internal::ChannelOps<T, BlockSize>;
  const std::uint32_t slots = Ops::slots_for(capacity);
  const auto registration = Ops::registration(slots, options);
  auto* state = internal::ChannelState::try_create(
      static_cast<std::uint32_t>(capacity), slots, options.retention, options.memory,
      options.first_waiter_watch, options.registry != nullptr ? &registration : nullptr);
  if (state == nullptr) return {ChannelError::kNoMemory, std::nullopt};
  return {ChannelError::kOk, std::pair{Sender<T, BlockSize>(state), Receiver<T, BlockSize>(state)}};
}

/// channel<T, B>(capacity, Retention::kKeepNone): the same, with the default memory.
template <class T, std::size_t BlockSize = default_block_size<T>>
std::pair<Sender<T, BlockSize>, Receiver<T, BlockSize>> channel(std::size_t capacity,
                                                                Retention retention) {
  return channel<T, BlockSize>(capacity, ChannelOptions{retention, nullptr});
}

}  // namespace leanchan

#endif  // LEANCHAN_CHANNEL_H_
