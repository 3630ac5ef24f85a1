// SPDX-License-Identifier: MIT
/// @file
/// leanchan/fwd.h: declarations of the channel's class templates, with their
/// default block size, and the limits every part shares.
#ifndef LEANCHAN_FWD_H_
#define LEANCHAN_FWD_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory_resource>

/// The channel (leanchan::channel), its handles, and what they share; the optional
/// parts are in leanchan::asio and leanchan::profiler.
namespace leanchan {

/// The largest capacity a channel accepts: 2^24 messages. (Block numbers are
/// kept modulo 2^26 in a 16-byte header, whose word also carries the
/// receiver's progress in the block; this bound keeps any two live blocks
/// less than 2^25 apart, so the wrapped numbers order them unambiguously.)
inline constexpr std::size_t kMaxCapacity = std::size_t{1} << 24;

/// The block size used when none is given: the largest power of two up to
/// 32 slots whose slots fit in 4 KiB, bit_floor(clamp(4096 / sizeof(T), 1,
/// 32)). So messages up to 128 bytes get 32 slots (the block size that moved
/// them fastest), 250-byte ones 16, 1 KiB ones 4, and 4 KiB or larger ones
/// 1: a drained channel never keeps more than a page of slots. Chosen by
/// measurement (docs/design.md, "The default block size").
template <class T>
inline constexpr std::size_t default_block_size =
    std::bit_floor(std::clamp<std::size_t>(4096 / sizeof(T), 1, 32));

/// What a channel keeps when it drains (chosen at creation; see channel.h).
/// - Retention::kKeepOne (the default): the last block stays for the next
///     message, and one spare block may wait behind the tail while traffic
///     flows: after warm-up, constant-depth traffic and ping-pong allocate
///     nothing. Idle after a burst: the control block plus one block, from
///     the moment the receiver finds the channel empty (a try_recv that
///     returns kEmpty or kDisconnected, an arm_notifier that returns false, a
///     blocking receive that stops watching to sleep); until then the spare
///     may stay too, so that a receiver which keeps up with its senders, and
///     so empties the queue in the middle of a block again and again, does
///     not free and re-allocate it each time.
/// - Retention::kKeepNone: as soon as the channel is empty, every block goes
///     back to the allocator (the next send starts a fresh block): idle after
///     a burst, only the 64-byte control block. The price: a burst of n into
///     an empty channel allocates ceil(n / b) blocks, and a trickle of one
///     message at a time into an empty channel allocates and frees one block
///     per message.
/// - Retention::keep(n), n in 0..kMaxKeptBlocks: up to n blocks stay after a
///     drain (the last one and n - 1 spares; keep(0) is kKeepNone, keep(1)
///     kKeepOne), never more than ceil(C/b) + 1 in all; a burst that fits in
///     n blocks then allocates nothing. Idle: up to 64 + n blocks.
class Retention {
 public:
  /// The most blocks keep(n) may keep.
  static constexpr unsigned kMaxKeptBlocks = 64;
  /// Every block goes back as soon as the channel is empty: keep(0).
  static const Retention kKeepNone;
  /// The last block stays, and one spare while traffic flows: keep(1), the default.
  static const Retention kKeepOne;
  /// Up to `blocks` kept after a drain; channel() rejects more than
  /// kMaxKeptBlocks with std::invalid_argument.
  static constexpr Retention keep(unsigned blocks) noexcept { return Retention(blocks); }

  constexpr Retention() noexcept = default;  ///< kKeepOne
  /// The blocks kept after a drain: n of keep(n).
  constexpr unsigned blocks() const noexcept { return blocks_; }
  /// Equal when they keep the same number of blocks.
  friend constexpr bool operator==(const Retention&, const Retention&) noexcept = default;

 private:
  constexpr explicit Retention(unsigned blocks) noexcept : blocks_(blocks) {}
  unsigned blocks_ = 1;
};
inline constexpr Retention Retention::kKeepNone = Retention::keep(0);
inline constexpr Retention Retention::kKeepOne = Retention::keep(1);

/// How long the first sender in line for a full channel watches for its
/// slot before it sleeps (docs/design.md "Waiting"). kDefault: 64 pauses,
/// then 16 yields (a hand-off to a watching sender costs no system call on
/// either side). kNone: it sleeps at once (no cycles burnt while it waits;
/// each hand-off then wakes it with a futex call). kLong: four times the
/// default, for a receiver that is often a little late.
enum class WaiterWatch : std::uint8_t { kDefault, kNone, kLong };
/// @var WaiterWatch::kDefault
/// 64 pauses, then 16 yields.
/// @var WaiterWatch::kNone
/// No watch: the sender sleeps at once.
/// @var WaiterWatch::kLong
/// Four times the default.

/// @struct ChannelOptions
/// How a channel is made (channel.h):
/// @code
///   auto [tx, rx] = leanchan::channel<Event>(
///       1024, {.retention = leanchan::Retention::kKeepNone, .memory = &pool});
/// @endcode
/// `memory`: where the control block and every block come from. Null (the
/// default): the global operator new, and the control block is 64 bytes.
/// Otherwise the resource allocates the control block (64 bytes plus 8 for
/// the resource pointer) and the blocks, and gets them back; it must outlive
/// the channel and be thread-safe (senders open blocks on their threads,
/// the receiver frees them on its own), e.g. a
/// std::pmr::synchronized_pool_resource.
/// `registry` (opt-in, leanchan/channel_registry.h): the channel is listed in
/// it under `registry_tag`, so that the registry can say which of its
/// channels hold the most memory; the control block is then 64 + 24 bytes
/// (from `memory`, or the global operator new). Null (the default): no
/// registry, nothing listed, nothing more allocated.
class ChannelRegistry;
struct ChannelOptions {
  /// What the channel keeps when it drains (Retention).
  Retention retention = Retention::kKeepOne;
  /// Where the control block and every block come from; null: the global operator new.
  std::pmr::memory_resource* memory = nullptr;
  /// How long the first sender in line for a full channel watches before it sleeps.
  WaiterWatch first_waiter_watch = WaiterWatch::kDefault;
  /// The registry that lists the channel (leanchan/channel_registry.h); null: none.
  ChannelRegistry* registry = nullptr;
  /// The channel's name in `registry`: any number.
  std::uint64_t registry_tag = 0;
};

template <class T, std::size_t BlockSize = default_block_size<T>>
class Sender;
template <class T, std::size_t BlockSize = default_block_size<T>>
class Receiver;
template <class T, std::size_t BlockSize = default_block_size<T>>
class WeakSender;
template <class T, std::size_t BlockSize = default_block_size<T>>
class Permit;
template <class T, std::size_t BlockSize = default_block_size<T>>
class PermitBatch;
template <class T, std::size_t BlockSize = default_block_size<T>>
class SendAwaitable;
template <class T, std::size_t BlockSize = default_block_size<T>>
class ReserveAwaitable;
template <class T, std::size_t BlockSize = default_block_size<T>>
class ClosedAwaitable;
template <class T, std::size_t BlockSize = default_block_size<T>>
class RecvManyAwaitable;
template <class T, std::size_t BlockSize = default_block_size<T>>
class RecvAwaitable;
template <class T, std::size_t BlockSize = default_block_size<T>>
struct TryChannel;
class Executor;
class Notifier;

}  // namespace leanchan

#endif  // LEANCHAN_FWD_H_
