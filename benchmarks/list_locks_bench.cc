// SPDX-License-Identifier: MIT
// List locks per message, shallow against deep queues: 4 producers try_send
// into a channel that already holds `depth` messages while the receiver
// takes as many as they send, so the depth stays. A send takes the list
// lock only to number a block (once per BlockSize messages) whatever the
// depth; counted with the test-points build's kListLocked point, so this
// binary's speed is not the library's (the counter is its figure).
//
//   leanchan_bench_list_locks   rows list_locks/depth:D, counter locks_per_msg
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"

namespace {

std::atomic<std::int64_t> g_locks{0};
void count_locks(leanchan::internal::TestPoint point) {
  if (point == leanchan::internal::TestPoint::kListLocked) {
    g_locks.fetch_add(1, std::memory_order_relaxed);
  }
}

void list_locks(benchmark::State& state) {
  constexpr int kProducers = 4;
  constexpr std::size_t kCapacity = std::size_t{1} << 17;
  constexpr std::int64_t kPerProducer = 8192;
  const auto depth = static_cast<std::size_t>(state.range(0));
  std::int64_t messages = 0;
  std::int64_t locks = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto [tx, rx] = leanchan::channel<std::uint64_t, 32>(kCapacity);
    for (std::size_t i = 0; i < depth; ++i) (void)tx.try_send(std::uint64_t{i}).ok();
    g_locks = 0;
    leanchan::internal::test_point_hook.store(&count_locks);
    state.ResumeTiming();
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&tx = tx] {
        for (std::int64_t i = 0; i < kPerProducer; ++i) {
          if (!tx.send(static_cast<std::uint64_t>(i)).ok()) std::abort();
        }
      });
    }
    for (std::int64_t i = 0; i < kProducers * kPerProducer; ++i) {
      if (!rx.recv().has_value()) std::abort();
    }
    for (auto& producer : producers) producer.join();
    state.PauseTiming();
    leanchan::internal::test_point_hook.store(nullptr);
    locks += g_locks.load();
    messages += kProducers * kPerProducer;
    state.ResumeTiming();
  }
  state.counters["locks_per_msg"] =
      benchmark::Counter(static_cast<double>(locks) / static_cast<double>(messages));
  state.counters["depth"] = static_cast<double>(depth);
}

// Shallow (empty at the start), about 2,000 deep, and deeper than the 2^16
// permits the 16-bit returned position can tell apart.
BENCHMARK(list_locks)
    ->ArgName("depth")
    ->Arg(0)
    ->Arg(2000)
    ->Arg(70000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
