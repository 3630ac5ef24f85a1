// SPDX-License-Identifier: MIT
/// @file
/// leanchan/channel_registry.h: an opt-in list of channels that can say,
/// at any time, which of them hold the most memory.
///
/// @code
///   leanchan::ChannelRegistry registry;                 // outlives its channels
///   auto [tx, rx] = leanchan::channel<Event>(
///       1024, {.memory = &budget, .registry = &registry, .registry_tag = service_id});
///   for (const auto& [tag, bytes] : registry.figures(10).top) log(tag, bytes);
/// @endcode
///
/// A channel is listed when ChannelOptions::registry names this registry,
/// under ChannelOptions::registry_tag (any number: the user's name for it),
/// and taken off the list when its last handle goes. Channels created
/// without a registry are not listed and cost nothing more: the opt-in is
/// off the default path. A listed channel's control block is 88 bytes (64,
/// its memory resource pointer, and its place in the list), and the
/// registry keeps 24 bytes per listed channel of its own (a std::vector,
/// from the global operator new, not from the channel's resource; up to
/// twice that while its capacity runs ahead of the count, and it keeps
/// the capacity of the most channels ever listed at once).
///
/// figures(n) walks every listed channel once: memory_usage() of each (its
/// list lock, uncontended: a few nanoseconds while its senders and receiver
/// run), keeping the n largest. The walk holds the registry's mutex, so a
/// channel created into it or destroyed meanwhile waits for the walk
/// (docs/budgets.md measures a walk of 100,000 channels).
///
/// Thread-safety: every member may be called from any thread; channels may
/// be created into it and destroyed from any thread at once.
#ifndef LEANCHAN_CHANNEL_REGISTRY_H_
#define LEANCHAN_CHANNEL_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "leanchan/export.h"
#include "leanchan/fwd.h"

namespace leanchan {
namespace internal {
class ChannelState;
}  // namespace internal

/// One listed channel's figure.
struct ChannelUsage {
  std::uint64_t tag = 0;  ///< its ChannelOptions::registry_tag
  std::size_t bytes = 0;  ///< its memory_usage() during the walk
  /// Equal when both tag and bytes are.
  friend bool operator==(const ChannelUsage&, const ChannelUsage&) = default;
};

/// What one walk found. Each channel's figure is exact at the moment the
/// walk read it; channels read at different moments, so the sum is exact
/// when nothing allocates or frees during the walk.
struct ChannelRegistryFigures {
  std::size_t channels = 0;       ///< channels listed
  std::size_t bytes = 0;          ///< the sum of their memory_usage()
  std::vector<ChannelUsage> top;  ///< the n holding the most, most first (equal
                                  ///< bytes: the smaller tag first)
};

/// The opt-in list of leanchan/channel_registry.h: the channels created with
/// ChannelOptions::registry naming it, and their memory on request.
class LEANCHAN_API ChannelRegistry {
 public:
  /// An empty registry.
  ChannelRegistry() = default;
  ChannelRegistry(const ChannelRegistry&) = delete;
  ChannelRegistry& operator=(const ChannelRegistry&) = delete;
  /// Aborts with a message if a channel is listed (a channel outlived its
  /// registry).
  ~ChannelRegistry();

  /// Channels listed now.
  std::size_t channels() const;
  /// One walk of every listed channel: their count, their bytes, and the
  /// `top_n` holding the most. Throws std::bad_alloc if the result cannot
  /// be allocated (before the walk).
  ChannelRegistryFigures figures(std::size_t top_n) const;

 private:
  friend class internal::ChannelState;  // lists and unlists its channels
  struct Entry {
    internal::ChannelState* state;
    std::size_t block_bytes;
    std::uint64_t tag;
  };
  // Lists `state`; throws std::bad_alloc if the list cannot grow.
  void add(internal::ChannelState* state, std::size_t block_bytes, std::uint64_t tag);
  // Takes `state` off (the entry moved into its place updates its link).
  void remove(internal::ChannelState* state) noexcept;

  mutable std::mutex mutex_;
  std::vector<Entry> entries_;  // guarded by mutex_
};

}  // namespace leanchan

#endif  // LEANCHAN_CHANNEL_REGISTRY_H_
