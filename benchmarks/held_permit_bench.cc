// SPDX-License-Identifier: MIT
// What a held reservation costs the sends beside it. A channel of capacity
// 2^17 (blocks of 32) is filled to `depth`; then, with nothing held, one
// Permit held, or reserve_many(64) held, one thread makes 2,048 try_sends
// (the receiver does not run, so the depth only grows). A held permit
// numbers blocks past the one the sends write into; the sends must still
// find their block without the list lock and without walking the list.
//
//   held_permit/held:H/depth:D   counter per_send: time per try_send (H: 0 nothing, 1 one
//                                Permit, 64 reserve_many(64))
// The exact lock and walk counts are asserted in
// tests/channel/held_permit_cost_test.cc.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "leanchan/channel.h"

namespace {

constexpr std::size_t kCapacity = std::size_t{1} << 17;
constexpr std::int64_t kSends = 2048;

void held_permit(benchmark::State& state) {
  const auto held = static_cast<std::size_t>(state.range(0));
  const auto depth = static_cast<std::size_t>(state.range(1));
  for (auto _ : state) {
    state.PauseTiming();
    {
      auto [tx, rx] = leanchan::channel<std::uint64_t, 32>(kCapacity);
      for (std::size_t i = 0; i < depth; ++i) {
        if (!tx.try_send(std::uint64_t{i}).ok()) std::abort();
      }
      std::optional<leanchan::Permit<std::uint64_t, 32>> permit;
      std::optional<leanchan::PermitBatch<std::uint64_t, 32>> batch;
      if (held == 1) {
        permit.emplace(tx.try_reserve());
        if (!*permit) std::abort();
      } else if (held > 1) {
        batch.emplace(tx.try_reserve_many(held));
        if (!*batch) std::abort();
      }
      state.ResumeTiming();
      for (std::int64_t i = 0; i < kSends; ++i) {
        if (!tx.try_send(static_cast<std::uint64_t>(i)).ok()) std::abort();
      }
      state.PauseTiming();
    }  // the channel, its messages and what is held go, untimed
    state.ResumeTiming();
  }
  // Seconds per send (shown as ns): the timed part over its sends.
  state.counters["per_send"] = benchmark::Counter(
      static_cast<double>(kSends),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

BENCHMARK(held_permit)
    ->ArgNames({"held", "depth"})
    ->ArgsProduct({{0, 1, 64}, {1000, 100000}})
    // A fixed count: the untimed fill would otherwise dominate the run
    // (the timed part is short, so the library would pick many iterations).
    ->Iterations(300)
    ->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
