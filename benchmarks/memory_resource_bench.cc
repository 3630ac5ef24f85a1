// SPDX-License-Identifier: MIT
// What a channel's memory resource costs per message: a deep queue (one
// producer thread, one consumer, capacity 1024, 24-byte messages) with the
// default allocation (global operator new), through a MemoryBudget (over
// new/delete), through a BlockPool, and through a budget over a pool; the
// pool rows with the pool's default (8 emptied pages kept) and with
// BlockPoolOptions::keep_empty_pages = 0. The target: each within 5 % of
// the default per message.
//
//   memory_resource/deep_queue/<resource>[/keep:0]    items (messages) per second
//   memory_resource/uncontended/<resource>[/keep:0]   one thread filling and draining
//   memory_resource/registry_walk/100000               ms per ChannelRegistry walk
//
// Each iteration makes a fresh channel (its control block and blocks come
// from the resource) and moves 2^15 messages through it, so a block is
// allocated and freed as the queue's depth moves. The budget's limit is
// never reached. Run with --benchmark_repetitions and
// --benchmark_enable_random_interleaving to compare medians.
#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "leanchan/block_pool.h"
#include "leanchan/channel.h"
#include "leanchan/channel_registry.h"
#include "leanchan/memory_budget.h"

namespace {

struct Message {
  std::array<unsigned char, 24> bytes{};
};

constexpr std::size_t kMessages = 1 << 15;
constexpr std::size_t kCapacity = 1024;
constexpr std::size_t kNoLimit = std::size_t{1} << 40;
// BlockPoolOptions::keep_empty_pages for the pool rows: the default (8),
// and 0 for the ".../keep:0" rows (every emptied page back at once).
constexpr std::size_t kKeep = leanchan::BlockPoolOptions::kDefaultKeptPages;

void deep_queue(benchmark::State& state, std::pmr::memory_resource* memory) {
  std::uint64_t checksum = 0;
  for (auto _ : state) {
    auto [tx, rx] = leanchan::channel<Message>(kCapacity, {.memory = memory});
    std::thread producer([sender = std::move(tx)]() mutable {
      for (std::uint64_t i = 0; i < kMessages; ++i) {
        Message message;
        std::memcpy(message.bytes.data(), &i, sizeof i);
        bool sent = sender.send(std::move(message)).ok();
        benchmark::DoNotOptimize(sent);
      }
    });
    while (auto message = rx.recv()) {
      std::uint64_t value = 0;
      std::memcpy(&value, message->bytes.data(), sizeof value);
      checksum += value;
    }
    producer.join();
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kMessages));
}

// One thread fills the channel to its capacity and drains it, 32 times per
// iteration: the resource's own cost without a second thread's scheduling
// (a quieter comparison on a loaded machine).
void uncontended(benchmark::State& state, std::pmr::memory_resource* memory) {
  constexpr std::size_t kRounds = kMessages / kCapacity;
  std::uint64_t checksum = 0;
  for (auto _ : state) {
    auto [tx, rx] = leanchan::channel<Message>(kCapacity, {.memory = memory});
    for (std::size_t round = 0; round < kRounds; ++round) {
      for (std::uint64_t i = 0; i < kCapacity; ++i) {
        Message message;
        std::memcpy(message.bytes.data(), &i, sizeof i);
        bool sent = tx.try_send(std::move(message)).ok();
        benchmark::DoNotOptimize(sent);
      }
      for (auto r = rx.try_recv(); r.ok(); r = rx.try_recv()) {
        std::uint64_t value = 0;
        std::memcpy(&value, r.value().bytes.data(), sizeof value);
        checksum += value;
      }
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kMessages));
}

// A ChannelRegistry's walk: 100,000 listed channel<Message>(16), each
// holding one message (so the walk reads a block's tags as well as each
// control block), and figures(10) per iteration: its time is the walk's.
void registry_walk(benchmark::State& state) {
  const auto channels = static_cast<std::size_t>(state.range(0));
  leanchan::ChannelRegistry registry;
  std::vector<std::pair<leanchan::Sender<Message>, leanchan::Receiver<Message>>> ends;
  ends.reserve(channels);
  for (std::size_t i = 0; i < channels; ++i) {
    ends.push_back(leanchan::channel<Message>(16, {.registry = &registry, .registry_tag = i}));
    if (!ends.back().first.try_send(Message{}).ok()) state.SkipWithError("send failed");
  }
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto figures = registry.figures(10);
    bytes = figures.bytes;
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["channels"] = static_cast<double>(channels);
  state.counters["bytes"] = static_cast<double>(bytes);
}

using Shape = void (*)(benchmark::State&, std::pmr::memory_resource*);

// Registers `shape` through each resource: memory_resource/<name>/<resource>.
void register_shape(const std::string& name, Shape shape) {
  const std::string prefix = "memory_resource/" + name + "/";
  benchmark::RegisterBenchmark((prefix + "default").c_str(), [shape](benchmark::State& state) {
    shape(state, nullptr);
  })->UseRealTime();
  benchmark::RegisterBenchmark((prefix + "budget").c_str(), [shape](benchmark::State& state) {
    leanchan::MemoryBudget budget(kNoLimit);
    shape(state, &budget);
    state.counters["refusals"] = static_cast<double>(budget.figures().refusals);
  })->UseRealTime();
  for (std::size_t keep : {kKeep, std::size_t{0}}) {
    const std::string suffix = keep == kKeep ? "" : "/keep:" + std::to_string(keep);
    benchmark::RegisterBenchmark((prefix + "pool" + suffix).c_str(), [shape, keep](
                                                                         benchmark::State& state) {
      leanchan::BlockPool pool(leanchan::BlockPoolOptions{.keep_empty_pages = keep});
      shape(state, &pool);
      state.counters["pages_given_back"] = static_cast<double>(pool.figures().pages_given_back);
    })->UseRealTime();
    benchmark::RegisterBenchmark(
        (prefix + "budget_over_pool" + suffix).c_str(),
        [shape, keep](benchmark::State& state) {
          leanchan::BlockPool pool(leanchan::BlockPoolOptions{.keep_empty_pages = keep});
          leanchan::MemoryBudget budget(kNoLimit, &pool);
          shape(state, &budget);
        })
        ->UseRealTime();
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_shape("deep_queue", deep_queue);
  register_shape("uncontended", uncontended);
  benchmark::RegisterBenchmark("memory_resource/registry_walk", registry_walk)
      ->Arg(100'000)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
