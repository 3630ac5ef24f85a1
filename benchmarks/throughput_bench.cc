// SPDX-License-Identifier: MIT
// Throughput (1 and 4 producers to 1 consumer) and ping-pong latency, for
// leanchan at block sizes 1, 4, 8 and 32, the Tokio-style baseline (waiting
// as leanchan waits: the reference of the ratios), the same baseline
// parking at once (what the waiting policy alone is worth), and
// oneTBB's concurrent_bounded_queue and moodycamel's BlockingConcurrentQueue
// (bounded by a semaphore) when installed. After the runs it
// prints each design's figure divided by the baseline's from the same run.
//
//   throughput/<design>/producers:P/msg:S/cap:C    items (messages) per second
//   pingpong/<design>/msg:S                        time per round trip
//   uncontended/<design>/msg:S                     items per second, one thread
//   handoff/cache-line/round-trip                  time per round trip (two moves)
//
// The last two split a throughput figure into its parts on a machine whose
// hardware counters are out of reach (a VM): `uncontended` is the
// instructions of one send plus one receive with no second thread (no
// cache line moves between cores); `handoff` is what one cache line
// costs to move from one thread to the other and back, half of it per
// direction. A throughput row's time per message, less the uncontended
// one, divided by the one-way hand-off, estimates how many lines move
// per message (docs/notebook/2026-11-30-results.md, "Where the time goes").
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "adapters.h"
#include "handoff.h"
#include "ratio_reporter.h"

namespace leanchan::bench {
namespace {

constexpr std::size_t kMessagesPerIteration = 1 << 15;

template <class Design, std::size_t S>
void throughput(benchmark::State& state, int producers, std::size_t capacity) {
  const std::size_t per_producer = kMessagesPerIteration / static_cast<std::size_t>(producers);
  const std::size_t total = per_producer * static_cast<std::size_t>(producers);
  for (auto _ : state) {
    auto [tx, rx] = Design::template make<Message<S>>(capacity);
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(producers));
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([sender = tx, per_producer]() mutable {
        for (std::size_t i = 0; i < per_producer; ++i) {
          // Only the outcome escapes, as in the peers' runners: a whole
          // result object forced to memory costs store-forwarding stalls
          // for small, byte-aligned messages that user code does not pay.
          bool sent = sender.send(Message<S>{}).ok();
          benchmark::DoNotOptimize(sent);
        }
      });
    }
    for (std::size_t i = 0; i < total; ++i) {
      auto message = rx.recv();
      benchmark::DoNotOptimize(message);
    }
    for (auto& thread : threads) thread.join();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * total));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * total * S));
}

// One round trip per iteration: A -> echo thread -> A, over two capacity-1
// channels. A message whose byte 0 is 1 stops the echo thread.
template <class Design, std::size_t S>
void pingpong(benchmark::State& state) {
  auto [to_echo, echo_in] = Design::template make<Message<S>>(1);
  auto [echo_out, from_echo] = Design::template make<Message<S>>(1);
  std::thread echo([in = std::move(echo_in), out = std::move(echo_out)]() mutable {
    for (;;) {
      auto message = in.recv();
      if (!message || message->bytes[0] == 1) return;
      (void)out.send(std::move(*message));
    }
  });
  for (auto _ : state) {
    (void)to_echo.send(Message<S>{});
    auto reply = from_echo.recv();
    benchmark::DoNotOptimize(reply);
  }
  Message<S> stop;
  stop.bytes[0] = 1;
  (void)to_echo.send(stop);
  echo.join();
}

// One thread sends a batch, then receives it, on a channel the batch fits
// in: no send ever waits and no other thread touches the channel.
template <class Design, std::size_t S>
void uncontended(benchmark::State& state) {
  constexpr std::size_t kBatch = 64;
  auto [tx, rx] = Design::template make<Message<S>>(kBatch);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      bool sent = tx.send(Message<S>{}).ok();  // as in throughput()
      benchmark::DoNotOptimize(sent);
    }
    for (std::size_t i = 0; i < kBatch; ++i) {
      auto message = rx.recv();
      benchmark::DoNotOptimize(message);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}

// One round trip of a cache line between two threads per iteration
// (handoff.h): half of it is one move, the floor under any message.
void handoff(benchmark::State& state) {
  CacheLineHandoff line;
  for (auto _ : state) line.round_trip();
}

// Producer counts: 1 and 4, or LEANCHAN_BENCH_PRODUCERS (e.g. "1,2,4,8,15"
// for the scaling run on a larger machine).
std::vector<int> producer_counts() {
  std::vector<int> counts;
  if (const char* text = std::getenv("LEANCHAN_BENCH_PRODUCERS")) {
    for (const char* p = text; *p != '\0';) {
      char* end = nullptr;
      const long value = std::strtol(p, &end, 10);
      if (end == p) break;
      if (value >= 1 && value <= 256) counts.push_back(static_cast<int>(value));
      p = *end == ',' ? end + 1 : end;
    }
  }
  if (counts.empty()) counts = {1, 4};
  return counts;
}

template <class Design, std::size_t S>
void register_design_size() {
  for (int producers : producer_counts()) {
    for (std::size_t capacity : {std::size_t{1}, std::size_t{16}, std::size_t{1024}}) {
      const std::string name = "throughput/" + Design::name() +
                               "/producers:" + std::to_string(producers) +
                               "/msg:" + std::to_string(S) + "/cap:" + std::to_string(capacity);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [producers, capacity](benchmark::State& state) {
                                     throughput<Design, S>(state, producers, capacity);
                                   })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

template <class Design>
void register_design() {
  register_design_size<Design, 8>();
  register_design_size<Design, 24>();
  register_design_size<Design, 128>();
  register_design_size<Design, 1024>();
  for (std::size_t size : {8, 24}) {
    const std::string name = "pingpong/" + Design::name() + "/msg:" + std::to_string(size);
    if (size == 8) {
      benchmark::RegisterBenchmark(name.c_str(), pingpong<Design, 8>)->UseRealTime();
    } else {
      benchmark::RegisterBenchmark(name.c_str(), pingpong<Design, 24>)->UseRealTime();
    }
  }
  benchmark::RegisterBenchmark(("uncontended/" + Design::name() + "/msg:8").c_str(),
                               uncontended<Design, 8>);
  benchmark::RegisterBenchmark(("uncontended/" + Design::name() + "/msg:24").c_str(),
                               uncontended<Design, 24>);
}

}  // namespace
}  // namespace leanchan::bench

int main(int argc, char** argv) {
  using namespace leanchan::bench;
  register_design<TokioStyle>();
  register_design<TokioStyleParkAtOnce>();
  register_design<Leanchan<1>>();
  register_design<Leanchan<4>>();
  register_design<Leanchan<8>>();
  register_design<Leanchan<32>>();
#if defined(LEANCHAN_HAVE_TBB)
  register_design<Tbb>();
#endif
#if defined(LEANCHAN_HAVE_MOODYCAMEL)
  register_design<Moodycamel>();
#endif
  benchmark::RegisterBenchmark("handoff/cache-line/round-trip", handoff)->UseRealTime();
  return run_with_ratios(argc, argv, TokioStyle::name());
}
