// SPDX-License-Identifier: MIT
/// @file
/// leanchan/profiler/heap_probe.h: heap deltas over a scope.
///
/// @code
///   leanchan::profiler::HeapProbe probe;
///   auto [tx, rx] = leanchan::channel<Event>(1024);
///   assert(probe.live_bytes() == 64);
/// @endcode
///
/// Counts only what the counting hook sees (see heap_counters.h); without the
/// hook every delta is 0. Thread-safety: as heap_counters.h; a probe object
/// itself is not shared.
#ifndef LEANCHAN_PROFILER_HEAP_PROBE_H_
#define LEANCHAN_PROFILER_HEAP_PROBE_H_

#include <cstdint>

#include "leanchan/profiler/heap_counters.h"

namespace leanchan::profiler {

/// The heap's deltas from the moment the probe started (or was reset).
class HeapProbe {
 public:
  /// Starts counting from now.
  HeapProbe() noexcept : start_(read_heap_counters()) {}

  /// Requested bytes allocated minus freed since the probe started (or reset).
  std::int64_t live_bytes() const noexcept {
    return read_heap_counters().live_requested_bytes - start_.live_requested_bytes;
  }
  /// Usable bytes allocated minus freed since the start.
  std::int64_t usable_bytes() const noexcept {
    return read_heap_counters().live_usable_bytes - start_.live_usable_bytes;
  }
  /// Successful operator new calls since the start.
  std::uint64_t allocations() const noexcept {
    return read_heap_counters().allocations - start_.allocations;
  }
  /// operator delete calls on non-null pointers since the start.
  std::uint64_t frees() const noexcept { return read_heap_counters().frees - start_.frees; }
  /// Starts counting afresh from now.
  void reset() noexcept { start_ = read_heap_counters(); }

 private:
  HeapCounters start_;
};

}  // namespace leanchan::profiler

#endif  // LEANCHAN_PROFILER_HEAP_PROBE_H_
