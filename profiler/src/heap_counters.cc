// SPDX-License-Identifier: MIT
// Storage for the heap counters; see leanchan/profiler/heap_counters.h.
#include "leanchan/profiler/heap_counters.h"

#include <atomic>

namespace leanchan::profiler {
namespace {

// constinit: usable before any static constructor runs (the hook may count
// allocations made during static initialisation).
// relaxed everywhere: each counter is independent; exactness is claimed only
// at quiescent points, where thread joins provide the ordering.
constinit std::atomic<std::int64_t> g_live_requested{0};
constinit std::atomic<std::int64_t> g_live_usable{0};
constinit std::atomic<std::uint64_t> g_allocations{0};
constinit std::atomic<std::uint64_t> g_frees{0};
constinit std::atomic<std::int64_t> g_peak_requested{0};
constinit std::atomic<const char*> g_backend{nullptr};
constinit std::atomic<void (*)()> g_release_free_memory{nullptr};

}  // namespace

HeapCounters read_heap_counters() noexcept {
  HeapCounters counters;
  counters.live_requested_bytes = g_live_requested.load(std::memory_order_relaxed);
  counters.live_usable_bytes = g_live_usable.load(std::memory_order_relaxed);
  counters.allocations = g_allocations.load(std::memory_order_relaxed);
  counters.frees = g_frees.load(std::memory_order_relaxed);
  counters.peak_requested_bytes = g_peak_requested.load(std::memory_order_relaxed);
  return counters;
}

void reset_heap_peak() noexcept {
  g_peak_requested.store(g_live_requested.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
}

bool heap_hook_active() noexcept {
  return g_backend.load(std::memory_order_relaxed) != nullptr;
}

const char* heap_backend_name() noexcept {
  const char* name = g_backend.load(std::memory_order_relaxed);
  return name == nullptr ? "none" : name;
}

void release_free_memory() noexcept {
  if (auto release = g_release_free_memory.load(std::memory_order_relaxed)) release();
}

namespace internal {

void record_allocation(std::size_t requested, std::size_t usable) noexcept {
  const auto bytes = static_cast<std::int64_t>(requested);
  const std::int64_t live = g_live_requested.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  g_live_usable.fetch_add(static_cast<std::int64_t>(usable), std::memory_order_relaxed);
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  std::int64_t peak = g_peak_requested.load(std::memory_order_relaxed);
  while (live > peak &&
         !g_peak_requested.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void record_free(std::size_t requested, std::size_t usable) noexcept {
  g_live_requested.fetch_sub(static_cast<std::int64_t>(requested), std::memory_order_relaxed);
  g_live_usable.fetch_sub(static_cast<std::int64_t>(usable), std::memory_order_relaxed);
  g_frees.fetch_add(1, std::memory_order_relaxed);
}

void register_hook(const char* backend_name, void (*release_free_memory)()) noexcept {
  g_release_free_memory.store(release_free_memory, std::memory_order_relaxed);
  g_backend.store(backend_name, std::memory_order_relaxed);
}

}  // namespace internal
}  // namespace leanchan::profiler
