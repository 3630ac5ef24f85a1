// SPDX-License-Identifier: MIT
/// @file
/// leanchan/profiler/heap_counters.h: process-wide counts of what global
/// operator new / delete hand out, kept by the counting hook.
///
/// Link `leanchan::profiler_hook` into an executable to replace every form of
/// global operator new and delete (plain, array, sized, aligned, nothrow and
/// their combinations) with counting versions. Without the hook these counters
/// stay zero and heap_hook_active() is false.
///
/// What is counted: every allocation through global operator new/delete.
/// Direct calls to malloc/free (C code, or a library's own allocator) are NOT
/// counted. Requested bytes are exact: the hook stores each request's size in
/// a 16-byte prefix (larger for over-aligned requests) of the allocation it
/// makes. Usable bytes are what the allocator reports for that allocation
/// (malloc_usable_size, or mi_usable_size for the mimalloc hook) minus the
/// prefix: the bytes the program could use.
///
/// Thread-safety: counters are relaxed atomics, updated by any thread. A read
/// while other threads allocate is a blend of moments; at a quiescent point
// (after joining the other threads, whose joins synchronize) it is exact.
#ifndef LEANCHAN_PROFILER_HEAP_COUNTERS_H_
#define LEANCHAN_PROFILER_HEAP_COUNTERS_H_

#include <cstddef>
#include <cstdint>

/// The counting heap hook's figures (leanchan::profiler_hook), HeapProbe, and the
/// process's resident memory.
namespace leanchan::profiler {

/// A snapshot of the counting hook's process-wide counters.
struct HeapCounters {
  std::int64_t live_requested_bytes = 0;  ///< requested by live allocations
  std::int64_t live_usable_bytes = 0;     ///< usable bytes of live allocations
  std::uint64_t allocations = 0;          ///< successful operator new calls
  std::uint64_t frees = 0;                ///< operator delete calls on non-null pointers
  std::int64_t peak_requested_bytes = 0;  ///< highest live_requested_bytes seen
};

/// A snapshot of the counters (all zero if the hook is not linked).
HeapCounters read_heap_counters() noexcept;

/// Resets the peak to the current live value (e.g. before a measured phase).
void reset_heap_peak() noexcept;

/// True if the counting hook is linked into this executable and active.
bool heap_hook_active() noexcept;

/// The allocator under the hook: "glibc malloc", "mimalloc", or "none".
const char* heap_backend_name() noexcept;

/// Asks the allocator under the hook to hand free memory back to the OS now
/// (glibc: malloc_trim(0); mimalloc: mi_collect(true)). No-op without the hook.
void release_free_memory() noexcept;

namespace internal {
// Called by the hook only.
void record_allocation(std::size_t requested, std::size_t usable) noexcept;
void record_free(std::size_t requested, std::size_t usable) noexcept;
void register_hook(const char* backend_name, void (*release_free_memory)()) noexcept;
}  // namespace internal

}  // namespace leanchan::profiler

#endif  // LEANCHAN_PROFILER_HEAP_COUNTERS_H_
