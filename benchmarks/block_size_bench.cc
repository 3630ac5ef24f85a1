// SPDX-License-Identifier: MIT
// Throughput against block size, to choose leanchan's default block size
// (scripts/block_size_choice.sh runs it interleaved and applies the rule:
// the smallest block size within 10 % of the best, per message size).
//
//   block_size/msg:S/b:B/producers:P   items (messages) per second; B is a
//                                      block size or "default"
//
// Capacity 1024 (a deep queue: the rows where a block's size matters most
// for speed); the message is S bytes, its first 8 a counter the receiver
// sums, so nothing is optimized away.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "leanchan/channel.h"

namespace {

template <std::size_t S>
struct Message {
  std::array<unsigned char, S> bytes{};
};

constexpr std::size_t kMessages = 1 << 15;
constexpr std::size_t kCapacity = 1024;

template <std::size_t S, std::size_t B>
void block_size(benchmark::State& state, int producers) {
  const std::size_t per_producer = kMessages / static_cast<std::size_t>(producers);
  std::uint64_t checksum = 0;
  for (auto _ : state) {
    auto [tx, rx] = leanchan::channel<Message<S>, B>(kCapacity);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([sender = tx, per_producer]() mutable {
        for (std::uint64_t i = 0; i < per_producer; ++i) {
          Message<S> message;
          std::memcpy(message.bytes.data(), &i, sizeof i);
          bool sent = sender.send(std::move(message)).ok();
          benchmark::DoNotOptimize(sent);
        }
      });
    }
    { auto gone = std::move(tx); }
    while (auto message = rx.recv()) {
      std::uint64_t value = 0;
      std::memcpy(&value, message->bytes.data(), sizeof value);
      checksum += value;
    }
    for (auto& thread : threads) thread.join();
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(per_producer) * producers);
}

// `label`: the block size, or "default" for channel<T>(capacity)'s.
template <std::size_t S, std::size_t B>
void register_one(const std::string& label = std::to_string(B)) {
  for (int producers : {1, 4}) {
    const std::string name = "block_size/msg:" + std::to_string(S) + "/b:" + label +
                             "/producers:" + std::to_string(producers);
    benchmark::RegisterBenchmark(name.c_str(), block_size<S, B>, producers)->UseRealTime();
  }
}

template <std::size_t S>
void register_size() {
  register_one<S, 1>();
  register_one<S, 2>();
  register_one<S, 4>();
  register_one<S, 8>();
  register_one<S, 16>();
  register_one<S, 32>();
  register_one<S, leanchan::default_block_size<Message<S>>>("default");
}

}  // namespace

int main(int argc, char** argv) {
  register_size<8>();
  register_size<24>();
  register_size<128>();
  register_size<1024>();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
