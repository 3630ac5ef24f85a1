// SPDX-License-Identifier: MIT
// The memory-table report's measurements: what a channel costs in heap bytes
// at create, after a fill and after a drain, and what many idle channels cost
// in heap and resident memory. Each design is measured through the same
// template, so a row for leanchan and a row for the baseline mean the same.
#ifndef LEANCHAN_PROFILER_REPORT_MEMTABLE_H_
#define LEANCHAN_PROFILER_REPORT_MEMTABLE_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "leanchan/profiler/heap_probe.h"
#include "leanchan/profiler/resident_memory.h"

namespace leanchan::report {

// A message of exactly `Bytes` bytes (alignment 1), as in docs/problem.md.
template <std::size_t Bytes>
struct Message {
  std::array<unsigned char, Bytes> bytes{};
};

// What a design's formulas predict for one (message size, capacity).
struct Prediction {
  std::int64_t create = 0;
  std::int64_t fill = 0;
  std::int64_t drain = 0;
};

struct MemoryRow {
  std::string design;
  std::size_t message_bytes = 0;
  std::size_t capacity = 0;
  std::int64_t create = 0;  // heap bytes after create (requested)
  std::int64_t fill = 0;    // ... after `capacity` sends
  std::int64_t drain = 0;   // ... after receiving them all
  std::uint64_t fill_allocations = 0;
  Prediction predicted;
  bool matches() const {
    return create == predicted.create && fill == predicted.fill && drain == predicted.drain;
  }
};

// Create / fill / drain one channel made by `make(capacity)`; one sender and
// one receiver alive throughout, bytes relative to just before creation.
template <class T, class MakeChannel>
MemoryRow measure_create_fill_drain(MakeChannel make, std::size_t capacity) {
  MemoryRow row;
  profiler::HeapProbe probe;
  {
    auto [tx, rx] = make(capacity);
    row.create = probe.live_bytes();
    const std::uint64_t allocations_before = probe.allocations();
    for (std::size_t i = 0; i < capacity; ++i) {
      if (!tx.try_send(T{}).ok()) break;
    }
    row.fill = probe.live_bytes();
    row.fill_allocations = probe.allocations() - allocations_before;
    // Until the receiver finds the channel empty: that is when a drained
    // leanchan gives its spare blocks back (docs/design.md, step 10).
    for (std::size_t i = 0; i <= capacity; ++i) {
      if (!rx.try_recv().ok()) break;
    }
    row.drain = probe.live_bytes();
  }
  return row;
}

struct ManyChannelsRow {
  std::string design;
  std::string allocator;
  std::size_t channels = 0;
  std::size_t burst = 0;
  // Heap bytes per channel (requested) and resident bytes per channel, each
  // relative to just before the channels were created.
  double heap_idle = 0, heap_burst = 0, heap_drained = 0;
  double rss_idle = 0, rss_burst = 0, rss_drained = 0;
  // After the drain, once the allocator was asked to return free memory.
  double rss_trimmed = 0;
  // The retention policy: "one", "none", or "-" for a design without one.
  std::string retain = "-";
  // Where the channels' memory came from: "default" (the global operator
  // new) or "pool" (a leanchan::BlockPool: ChannelOptions::memory).
  std::string memory = "default";
  // The cost of the policy: a second burst into the drained channels,
  // allocations per channel and nanoseconds per message sent (try_send).
  double burst2_allocs = 0, burst2_ns_per_msg = 0;
};

inline double per_channel(std::int64_t bytes, std::size_t channels) {
  return static_cast<double>(bytes) / static_cast<double>(channels);
}

inline std::int64_t resident_now() {
  return static_cast<std::int64_t>(profiler::resident_bytes().value_or(0));
}

// N channels, a burst of `burst` messages into every one, then a drain.
template <class T, class MakeChannel>
ManyChannelsRow measure_many_channels(MakeChannel make, std::size_t channels, std::size_t capacity,
                                      std::size_t burst) {
  using Pair = decltype(make(capacity));
  ManyChannelsRow row;
  row.channels = channels;
  row.burst = burst;
  row.allocator = profiler::heap_backend_name();
  std::optional<profiler::HeapProbe> probe;
  std::int64_t rss_before = 0;
  {
    std::vector<Pair> pairs;
    pairs.reserve(channels);
    // The vector of handles belongs to the caller, not to the channels: touch
    // its pages now so they are resident before the baseline is read.
    std::memset(static_cast<void*>(pairs.data()), 0, channels * sizeof(Pair));
    rss_before = resident_now();
    probe.emplace();
    for (std::size_t i = 0; i < channels; ++i) pairs.push_back(make(capacity));
    row.heap_idle = per_channel(probe->live_bytes(), channels);
    row.rss_idle = per_channel(resident_now() - rss_before, channels);
    for (auto& pair : pairs) {
      for (std::size_t m = 0; m < burst; ++m) (void)pair.first.try_send(T{});
    }
    row.heap_burst = per_channel(probe->live_bytes(), channels);
    row.rss_burst = per_channel(resident_now() - rss_before, channels);
    for (auto& pair : pairs) {
      // One receive more than the burst: it finds the channel empty (step 10).
      for (std::size_t m = 0; m <= burst; ++m) (void)pair.second.try_recv();
    }
    row.heap_drained = per_channel(probe->live_bytes(), channels);
    row.rss_drained = per_channel(resident_now() - rss_before, channels);
    profiler::release_free_memory();
    row.rss_trimmed = per_channel(resident_now() - rss_before, channels);
    // The policy's price: a second burst into the drained channels.
    const std::uint64_t allocations = profiler::read_heap_counters().allocations;
    const auto started = std::chrono::steady_clock::now();
    for (auto& pair : pairs) {
      for (std::size_t m = 0; m < burst; ++m) (void)pair.first.try_send(T{});
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    row.burst2_allocs = per_channel(
        static_cast<std::int64_t>(profiler::read_heap_counters().allocations - allocations),
        channels);
    row.burst2_ns_per_msg = burst == 0 ? 0 : seconds * 1e9 / static_cast<double>(channels * burst);
  }
  return row;
}

}  // namespace leanchan::report

#endif  // LEANCHAN_PROFILER_REPORT_MEMTABLE_H_
