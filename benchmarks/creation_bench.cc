// SPDX-License-Identifier: MIT
// Creation: 10,000 channels created and destroyed (create), or created, one
// message sent and received on each, and destroyed (create+message). The
// counting heap hook is linked in, so each run also reports heap bytes per
// channel as counters (measured on one extra, untimed pass).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <vector>

#include "adapters.h"
#include "leanchan/profiler/heap_probe.h"
#include "ratio_reporter.h"

namespace leanchan::bench {
namespace {

constexpr std::size_t kChannels = 10'000;
using Event = Message<24>;

template <class Design>
void creation(benchmark::State& state, bool with_message) {
  using Pair = decltype(Design::template make<Event>(16));
  std::vector<Pair> pairs;
  pairs.reserve(kChannels);
  auto one_pass = [&] {
    for (std::size_t i = 0; i < kChannels; ++i) pairs.push_back(Design::template make<Event>(16));
    if (with_message) {
      for (auto& pair : pairs) {
        (void)pair.first.send(Event{});
        auto message = pair.second.recv();
        benchmark::DoNotOptimize(message);
      }
    }
  };
  for (auto _ : state) {
    one_pass();
    pairs.clear();
  }
  profiler::HeapProbe probe;
  one_pass();
  state.counters["heap_bytes_per_channel"] =
      static_cast<double>(probe.live_bytes()) / static_cast<double>(kChannels);
  state.counters["allocations_per_channel"] =
      static_cast<double>(probe.allocations()) / static_cast<double>(kChannels);
  pairs.clear();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kChannels));
}

template <class Design>
void register_design() {
  for (bool with_message : {false, true}) {
    const std::string name =
        std::string("creation/") + Design::name() + (with_message ? "/create+message" : "/create");
    benchmark::RegisterBenchmark(name.c_str(), [with_message](benchmark::State& state) {
      creation<Design>(state, with_message);
    })->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace leanchan::bench

int main(int argc, char** argv) {
  using namespace leanchan::bench;
  register_design<TokioStyle>();
  register_design<Leanchan<1>>();
  register_design<Leanchan<8>>();
  register_design<Leanchan<32>>();
  return run_with_ratios(argc, argv, TokioStyle::name());
}
