// SPDX-License-Identifier: MIT
// leanchan-asio-fanout: an io_context serves many channels, each with a
// receive always pending, for leanchan (leanchan::asio::AsyncReceiver) and
// for Asio's own experimental::concurrent_channel, in the same run. A
// producer thread sends timestamped 24-byte events to random channels at a
// steady rate; the program prints, per design, the bytes each idle channel
// costs with its receive armed, and delivery latency percentiles, and checks
// that every event arrived exactly once.
//
//   leanchan-asio-fanout --channels=10000 --rate=20000 --seconds=3 --threads=2
//
// Exit code 0 when every event arrived once in every design (and for --help
// / -h), 1 if not or for a flag Abseil rejects, 2 on a bad value, a stray
// argument, or no memory for the run's results. Progress goes to stderr.
#include <algorithm>
#include <asio.hpp>
#include <asio/experimental/concurrent_channel.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "cli.h"  // profiler/report/cli.h: --help, -h, stray arguments, list flags
#include "leanchan/asio.h"
#include "leanchan/channel.h"
#include "leanchan/profiler/heap_counters.h"

ABSL_FLAG(int, channels, 10000, "Number of channels (1..200000)");
ABSL_FLAG(int, rate, 20000, "Events per second, in total (1..2000000)");
ABSL_FLAG(double, seconds, 3.0, "How long to send, per design (0.1..600)");
ABSL_FLAG(int, threads, 2, "Threads running the io_context (1..64)");
ABSL_FLAG(std::string, designs, "leanchan,asio",
          "Comma-separated designs to run, in order: leanchan, asio");

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kCapacity = 16;

struct Event {  // 24 bytes, as a proxy's health event
  std::uint32_t channel;
  std::uint32_t sequence;
  std::int64_t sent_ns;
  float weight;
  std::uint32_t flags;
};
static_assert(sizeof(Event) == 24);

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Filled by the handlers (each sequence number by one handler, on any io
// thread); read after the io threads are joined. Allocated once, before
// the first design runs (throws std::bad_alloc), and reset between them.
struct Results {
  explicit Results(std::uint32_t total)
      : latency_ns(total, -1), seen(std::make_unique<std::atomic<std::uint8_t>[]>(total)) {}
  void reset() {
    std::fill(latency_ns.begin(), latency_ns.end(), -1);
    for (std::size_t i = 0; i < latency_ns.size(); ++i) seen[i].store(0, std::memory_order_relaxed);
    duplicates.store(0, std::memory_order_relaxed);
    delivered.store(0, std::memory_order_relaxed);
  }
  void record(const Event& event) {
    latency_ns[event.sequence] = now_ns() - event.sent_ns;
    if (seen[event.sequence].fetch_add(1, std::memory_order_relaxed) != 0) {
      duplicates.fetch_add(1, std::memory_order_relaxed);
    }
    // release: the latency written above is read after the main thread
    // sees the count (and again after the join).
    delivered.fetch_add(1, std::memory_order_release);
  }
  std::vector<std::int64_t> latency_ns;
  std::unique_ptr<std::atomic<std::uint8_t>[]> seen;
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> delivered{0};
};

// --- leanchan: an AsyncReceiver per channel, a callback loop on each --------
struct LeanchanDesign {
  using Receiver = leanchan::asio::AsyncReceiver<Event>;
  struct Channel {
    Channel(asio::io_context& io, std::pair<leanchan::Sender<Event>, leanchan::Receiver<Event>> p)
        : tx(std::move(p.first)), rx(io.get_executor(), std::move(p.second)) {}
    leanchan::Sender<Event> tx;
    Receiver rx;
  };
  static constexpr const char* kName = "leanchan (AsyncReceiver)";
  static constexpr std::size_t kObjectBytes = sizeof(Channel);

  LeanchanDesign(asio::io_context& io, int count, Results& results) : results_(results) {
    channels_.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      channels_.push_back(std::make_unique<Channel>(io, leanchan::channel<Event>(kCapacity)));
    }
  }
  void arm_all() {
    for (auto& channel : channels_) receive(*channel);
  }
  void receive(Channel& channel) {
    channel.rx.async_recv([this, &channel](asio::error_code ec, std::optional<Event> event) {
      if (ec || !event) return;  // the channel ended
      results_.record(*event);
      receive(channel);
    });
  }
  bool try_send(std::uint32_t channel, const Event& event) {
    return channels_[channel]->tx.try_send(event).ok();
  }
  void end_all() {
    for (auto& channel : channels_) {
      leanchan::Sender<Event> gone = std::move(channel->tx);  // the last sender: nullopt
    }
  }

  Results& results_;
  std::vector<std::unique_ptr<Channel>> channels_;
};

// --- Asio's experimental::concurrent_channel, the same callback loop ---------
struct AsioDesign {
  using Channel = asio::experimental::concurrent_channel<void(asio::error_code, Event)>;
  static constexpr const char* kName = "asio::experimental::concurrent_channel";
  static constexpr std::size_t kObjectBytes = sizeof(Channel);

  AsioDesign(asio::io_context& io, int count, Results& results) : results_(results) {
    channels_.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) channels_.push_back(std::make_unique<Channel>(io, kCapacity));
  }
  void arm_all() {
    for (auto& channel : channels_) receive(*channel);
  }
  void receive(Channel& channel) {
    channel.async_receive([this, &channel](asio::error_code ec, Event event) {
      if (ec) return;  // closed
      results_.record(event);
      receive(channel);
    });
  }
  bool try_send(std::uint32_t channel, const Event& event) {
    return channels_[channel]->try_send(asio::error_code(), event);
  }
  void end_all() {
    for (auto& channel : channels_) channel->close();
  }

  Results& results_;
  std::vector<std::unique_ptr<Channel>> channels_;
};

double percentile_us(const std::vector<std::int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto index = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1));
  return static_cast<double>(sorted[index]) / 1000.0;
}

template <class Design>
bool run_design(int channels, int rate, int threads, Results& results) {
  const auto total = static_cast<std::uint32_t>(results.latency_ns.size());
  results.reset();
  asio::io_context io(threads);
  auto work = asio::make_work_guard(io);  // until every channel has ended

  // Bytes per idle channel with its receive armed: the heap the channels and
  // their pending receives hold (counted by the profiler's operator new
  // hook), plus the object the program holds per channel.
  const std::int64_t heap_before = leanchan::profiler::read_heap_counters().live_requested_bytes;
  auto design = std::make_unique<Design>(io, channels, results);
  design->arm_all();
  const std::int64_t heap_after = leanchan::profiler::read_heap_counters().live_requested_bytes;
  // The design's own vector of pointers is the program's bookkeeping, not
  // the channel's: subtract it.
  const double heap_per_channel =
      static_cast<double>(heap_after - heap_before -
                          static_cast<std::int64_t>(design->channels_.capacity() * sizeof(void*)) -
                          static_cast<std::int64_t>(Design::kObjectBytes) * channels) /
      channels;

  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back([&io] { io.run(); });

  std::cerr << "leanchan-asio-fanout: " << Design::kName << ": sending " << total << " events\n";
  std::mt19937 random(42);
  const auto period = std::chrono::nanoseconds(1'000'000'000 / rate);
  auto next = Clock::now();
  std::uint64_t refused = 0;
  for (std::uint32_t sequence = 0; sequence < total; ++sequence) {
    next += period;
    std::this_thread::sleep_until(next);  // pacing the load, not synchronizing
    const auto channel = static_cast<std::uint32_t>(random() % static_cast<unsigned>(channels));
    const Event event{channel, sequence, now_ns(), 1.0f, 0};
    if (!design->try_send(channel, event)) ++refused;  // full: counted, not lost
  }
  // Every accepted event is delivered before the channels end (Asio's close
  // would abort a pending receive with messages still buffered). Bounded
  // (30 s): an event that never arrives is reported as lost, not waited for.
  const std::uint64_t expected = total - refused;
  const auto give_up = Clock::now() + std::chrono::seconds(30);
  while (results.delivered.load(std::memory_order_acquire) < expected && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // polls the io threads' progress
  }
  asio::post(io, [&design] { design->end_all(); });
  work.reset();
  for (auto& thread : pool) thread.join();
  design.reset();

  std::vector<std::int64_t> sorted;
  sorted.reserve(total);
  std::uint64_t lost = 0;
  for (std::uint32_t i = 0; i < total; ++i) {
    if (results.seen[i].load(std::memory_order_relaxed) == 0) {
      ++lost;
    } else {
      sorted.push_back(results.latency_ns[i]);
    }
  }
  lost -= refused;
  std::sort(sorted.begin(), sorted.end());
  const std::uint64_t duplicates = results.duplicates.load();
  std::printf(
      "| %s | %d | %d | %u | %d | %zu | %.0f | %.0f | %.1f | %.1f | %.1f | %llu | %llu | %llu |\n",
      Design::kName, channels, threads, total, rate, Design::kObjectBytes, heap_per_channel,
      static_cast<double>(Design::kObjectBytes) + heap_per_channel, percentile_us(sorted, 0.50),
      percentile_us(sorted, 0.99), percentile_us(sorted, 0.999),
      static_cast<unsigned long long>(lost), static_cast<unsigned long long>(duplicates),
      static_cast<unsigned long long>(refused));
  std::fflush(stdout);
  return lost == 0 && duplicates == 0;
}

int fail(const std::string& message) {
  std::cerr << "leanchan-asio-fanout: " << message << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (auto exit_code = leanchan::cli::parse_command_line(
          "leanchan-asio-fanout",
          "Serves many channels from an io_context, leanchan beside Asio's concurrent_channel, "
          "and reports bytes per idle channel and event latency.\n"
          "Example: leanchan-asio-fanout --channels=10000 --rate=20000 --seconds=3",
          absl::GetFlagReflectionHandle(FLAGS_channels), argc, argv)) {
    return *exit_code;
  }
  const int channels = absl::GetFlag(FLAGS_channels);
  const int rate = absl::GetFlag(FLAGS_rate);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const int threads = absl::GetFlag(FLAGS_threads);
  if (channels < 1 || channels > 200000) return fail("--channels must be in 1..200000");
  if (rate < 1 || rate > 2000000) return fail("--rate must be in 1..2000000");
  if (!(seconds >= 0.1 && seconds <= 600)) return fail("--seconds must be in 0.1..600");
  if (threads < 1 || threads > 64) return fail("--threads must be in 1..64");
  if (static_cast<double>(rate) * seconds < 1) {
    return fail("--rate * --seconds must be at least 1: this run would send no event");
  }
  std::vector<std::string> designs;
  if (std::string error;
      !leanchan::cli::split_list("designs", absl::GetFlag(FLAGS_designs), &designs, &error)) {
    return fail(error + " (give leanchan and/or asio)");
  }
  for (const std::string& design : designs) {
    if (design != "leanchan" && design != "asio") {
      return fail("--designs takes leanchan and/or asio, got '" + design + "'");
    }
  }
  if (!leanchan::profiler::heap_hook_active()) return fail("the heap-counting hook is not linked");
  const auto total = static_cast<std::uint32_t>(static_cast<double>(rate) * seconds);
  std::unique_ptr<Results> results;
  try {
    results = std::make_unique<Results>(total);
  } catch (const std::bad_alloc&) {
    return fail("cannot allocate the results of " + std::to_string(total) +
                " events (9 bytes each): lower --rate or --seconds");
  }

  std::printf(
      "| design | channels | io threads | events | rate/s | object B | heap B per idle channel "
      "(receive armed) | total B | p50 us | p99 us | p999 us | lost | duplicated | refused "
      "(full) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  bool ok = true;
  for (const std::string& design : designs) {
    ok &= design == "leanchan" ? run_design<LeanchanDesign>(channels, rate, threads, *results)
                               : run_design<AsioDesign>(channels, rate, threads, *results);
  }
  return leanchan::cli::finish_output("leanchan-asio-fanout", ok ? 0 : 1);
}
