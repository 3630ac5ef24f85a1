// SPDX-License-Identifier: MIT
// leanchan-peer-bench: one configuration per process, for scripts/peers.sh.
// The Rust (rust/) and Go (go/) peers take the same arguments, run the same
// workload and print the same line (docs/peers.md).
//
//   leanchan-peer-bench --design=NAME --producers=P --capacity=C --size=S --messages=N
//     P producers each send N/P messages of S bytes; the first 8 bytes carry
//     the payload (producer_id << 32 | i); one consumer receives all N and
//     sums the payloads. Prints
//     design=NAME producers=P capacity=C size=S messages=N seconds=X msgs_per_sec=Y
//       cpu_seconds=U cpu_ns_per_msg=V checksum=Z
//     (one line; U: user + system CPU time of the whole process, every
//     thread, over the timed window, from getrusage(RUSAGE_SELF); V = U / N)
//   leanchan-peer-bench --design=NAME --pingpong --size=S --messages=N
//     N round trips over two capacity-1 channels; prints
//     design=NAME mode=pingpong size=S messages=N seconds=X ns_per_roundtrip=Y
//       cpu_seconds=U cpu_ns_per_roundtrip=V checksum=Z
//   leanchan-peer-bench --handoff --messages=N
//     two threads pass one cache line back and forth N times, rounded up to
//     an even count (no channel; benchmarks/handoff.h);
//     prints mode=handoff messages=N one_way_ns=X: what moving a line from
//     one thread's core to the other costs on this machine right now (on a
//     VM it changes with where the threads land), the floor under every
//     design's figures beside it
//
// --help or -h prints the usage and the design names to stdout and exits 0.
// Exits 2 on a bad argument, 1 if the checksum is wrong.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <sys/resource.h>

#include "adapters.h"
#include "handoff.h"

namespace leanchan::bench::peers {
namespace {

struct Options {
  std::string design;
  std::uint64_t producers = 1;
  std::uint64_t capacity = 0;
  std::uint64_t size = 0;
  std::uint64_t messages = 0;
  bool pingpong = false;
  bool handoff = false;
};

constexpr const char* kUsage =
    "usage: leanchan-peer-bench --design=NAME --producers=P --capacity=C "
    "--size=S --messages=N\n"
    "       leanchan-peer-bench --design=NAME --pingpong --size=S --messages=N\n"
    "       leanchan-peer-bench --handoff --messages=N\n"
    "       leanchan-peer-bench --help | -h\n"
    "designs: leanchan-b1 leanchan-b8 leanchan-b32 tokio-style tokio-style-park"
#if defined(LEANCHAN_HAVE_MOODYCAMEL)
    " moodycamel"
#endif
    "\nsizes: 8 24 128 1024; messages a multiple of producers\n";

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "leanchan-peer-bench: %s\n%s", what.c_str(), kUsage);
  std::exit(2);
}

std::uint64_t parse_count(std::string_view name, std::string_view text) {
  if (text.empty() || text.size() > 18) usage_error("bad value for --" + std::string(name));
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      usage_error("bad value for --" + std::string(name) + ": '" + std::string(text) + "'");
    }
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

Options parse(int argc, char** argv) {
  Options options;
  bool have_producers = false;
  bool have_capacity = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value_of = [&](std::string_view key) -> std::string_view {
      return arg.substr(key.size());
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(std::fflush(stdout) == 0 ? 0 : 2);
    } else if (arg == "--pingpong") {
      options.pingpong = true;
    } else if (arg == "--handoff") {
      options.handoff = true;
    } else if (arg.starts_with("--design=")) {
      options.design = std::string(value_of("--design="));
    } else if (arg.starts_with("--producers=")) {
      options.producers = parse_count("producers", value_of("--producers="));
      have_producers = true;
    } else if (arg.starts_with("--capacity=")) {
      options.capacity = parse_count("capacity", value_of("--capacity="));
      have_capacity = true;
    } else if (arg.starts_with("--size=")) {
      options.size = parse_count("size", value_of("--size="));
    } else if (arg.starts_with("--messages=")) {
      options.messages = parse_count("messages", value_of("--messages="));
    } else if (!arg.starts_with("-")) {
      usage_error("unexpected argument '" + std::string(arg) + "' (every argument is a --flag)");
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (options.handoff) {
    if (!options.design.empty() || have_producers || have_capacity || options.size != 0 ||
        options.pingpong) {
      usage_error("--handoff takes only --messages");
    }
    if (options.messages == 0) usage_error("--messages must be at least 1");
    return options;
  }
  if (options.design.empty()) usage_error("--design is required");
  if (options.size != 8 && options.size != 24 && options.size != 128 && options.size != 1024) {
    usage_error("--size must be 8, 24, 128 or 1024");
  }
  if (options.messages == 0) usage_error("--messages must be at least 1");
  if (options.pingpong) {
    if ((have_producers && options.producers != 1) || (have_capacity && options.capacity != 1)) {
      usage_error("--pingpong uses one producer and capacity 1");
    }
    options.producers = 1;
    options.capacity = 1;
    return options;
  }
  if (!have_capacity) usage_error("--capacity is required");
  if (options.producers < 1 || options.producers > 1024) {
    usage_error("--producers must be 1 to 1024");
  }
  // leanchan's limit (the other runners accept up to 2^30).
  if (options.capacity < 1 || options.capacity > leanchan::kMaxCapacity) {
    usage_error("--capacity must be 1 to " + std::to_string(leanchan::kMaxCapacity) +
                " (leanchan::kMaxCapacity)");
  }
  if (options.messages % options.producers != 0) {
    usage_error("--messages must be a multiple of --producers");
  }
  if ((options.messages / options.producers) >= (std::uint64_t{1} << 32)) {
    usage_error("--messages / --producers must be below 2^32");
  }
  return options;
}

// The closed form of the sum (mod 2^64) of p << 32 | i over producers p and
// messages i < m of each.
std::uint64_t expected_checksum(std::uint64_t producers, std::uint64_t m) {
  const std::uint64_t pairs_p =
      producers % 2 == 0 ? (producers / 2) * (producers - 1) : producers * ((producers - 1) / 2);
  const std::uint64_t pairs_m = m % 2 == 0 ? (m / 2) * (m - 1) : m * ((m - 1) / 2);
  return ((pairs_p * m) << 32) + producers * pairs_m;
}

template <std::size_t S>
void put(Message<S>& message, std::uint64_t payload) {
  std::memcpy(message.bytes.data(), &payload, sizeof payload);
}
template <std::size_t S>
std::uint64_t get(const Message<S>& message) {
  std::uint64_t payload = 0;
  std::memcpy(&payload, message.bytes.data(), sizeof payload);
  return payload;
}

struct Result {
  double seconds = 0;
  double cpu_seconds = 0;
  std::uint64_t checksum = 0;
};

// User + system CPU seconds of the whole process (every thread) so far; the
// Rust and Go runners read the same getrusage(RUSAGE_SELF).
double cpu_seconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  const auto tv = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return tv(usage.ru_utime) + tv(usage.ru_stime);
}

template <class Design, std::size_t S>
Result throughput(const Options& options) {
  const std::uint64_t per_producer = options.messages / options.producers;
  auto [tx, rx] = Design::template make<Message<S>>(options.capacity);
  std::atomic<std::uint64_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  threads.reserve(options.producers);
  for (std::uint64_t p = 0; p < options.producers; ++p) {
    threads.emplace_back([sender = tx, p, per_producer, &ready, &go]() mutable {
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (std::uint64_t i = 0; i < per_producer; ++i) {
        Message<S> message;
        put(message, p << 32 | i);
        if (!sender.send(std::move(message)).ok()) {
          std::fprintf(stderr, "leanchan-peer-bench: send failed\n");
          std::exit(1);
        }
      }
    });
  }
  { auto drop = std::move(tx); }  // the producers hold the only senders
  while (ready.load(std::memory_order_acquire) != options.producers) std::this_thread::yield();
  Result result;
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < options.messages; ++i) {
    auto message = rx.recv();
    if (!message) {
      std::fprintf(stderr, "leanchan-peer-bench: channel closed after %llu messages\n",
                   static_cast<unsigned long long>(i));
      std::exit(1);
    }
    sum += get(*message);
  }
  const auto end = std::chrono::steady_clock::now();
  result.cpu_seconds = cpu_seconds() - cpu_start;
  for (auto& thread : threads) thread.join();
  result.seconds = std::chrono::duration<double>(end - start).count();
  result.checksum = sum;
  return result;
}

// Round trips: main -> echo thread -> main over two capacity-1 channels;
// the echo thread is running (it has said so) before the clock starts, as
// in the Rust and Go runners.
template <class Design, std::size_t S>
Result pingpong(const Options& options) {
  auto [to_echo, echo_in] = Design::template make<Message<S>>(1);
  auto [echo_out, from_echo] = Design::template make<Message<S>>(1);
  const std::uint64_t n = options.messages;
  std::atomic<bool> ready{false};
  std::thread echo([in = std::move(echo_in), out = std::move(echo_out), n, &ready]() mutable {
    ready.store(true, std::memory_order_release);
    for (std::uint64_t i = 0; i < n; ++i) {
      auto message = in.recv();
      if (!message) return;
      (void)out.send(std::move(*message));
    }
  });
  while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
  Result result;
  std::uint64_t sum = 0;
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < n; ++i) {
    Message<S> message;
    put(message, i);
    (void)to_echo.send(std::move(message));
    auto reply = from_echo.recv();
    if (!reply) {
      std::fprintf(stderr, "leanchan-peer-bench: echo channel closed\n");
      std::exit(1);
    }
    sum += get(*reply);
  }
  const auto end = std::chrono::steady_clock::now();
  result.cpu_seconds = cpu_seconds() - cpu_start;
  echo.join();
  result.seconds = std::chrono::duration<double>(end - start).count();
  result.checksum = sum;
  return result;
}

// One cache line passed between two threads (handoff.h): `messages`
// moves, both directions together, timed.
int handoff(const Options& options) {
  const std::uint64_t round_trips = (options.messages + 1) / 2;
  CacheLineHandoff line;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < round_trips; ++i) line.round_trip();
  const double nanoseconds =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("mode=handoff messages=%llu one_way_ns=%.1f\n",
              static_cast<unsigned long long>(round_trips * 2),
              nanoseconds / static_cast<double>(round_trips * 2));
  return 0;
}

template <class Design, std::size_t S>
int run_sized(const Options& options) {
  const Result result =
      options.pingpong ? pingpong<Design, S>(options) : throughput<Design, S>(options);
  const std::uint64_t expected =
      options.pingpong ? expected_checksum(1, options.messages)
                       : expected_checksum(options.producers, options.messages / options.producers);
  const double seconds = result.seconds > 0 ? result.seconds : 1e-9;
  const double cpu_ns = result.cpu_seconds * 1e9 / static_cast<double>(options.messages);
  if (options.pingpong) {
    std::printf(
        "design=%s mode=pingpong size=%llu messages=%llu seconds=%.6f "
        "ns_per_roundtrip=%.1f cpu_seconds=%.6f cpu_ns_per_roundtrip=%.1f checksum=%llu\n",
        options.design.c_str(), static_cast<unsigned long long>(options.size),
        static_cast<unsigned long long>(options.messages), seconds,
        seconds * 1e9 / static_cast<double>(options.messages), result.cpu_seconds, cpu_ns,
        static_cast<unsigned long long>(result.checksum));
  } else {
    std::printf(
        "design=%s producers=%llu capacity=%llu size=%llu messages=%llu seconds=%.6f "
        "msgs_per_sec=%.0f cpu_seconds=%.6f cpu_ns_per_msg=%.1f checksum=%llu\n",
        options.design.c_str(), static_cast<unsigned long long>(options.producers),
        static_cast<unsigned long long>(options.capacity),
        static_cast<unsigned long long>(options.size),
        static_cast<unsigned long long>(options.messages), seconds,
        static_cast<double>(options.messages) / seconds, result.cpu_seconds, cpu_ns,
        static_cast<unsigned long long>(result.checksum));
  }
  if (result.checksum != expected) {
    std::fprintf(stderr, "leanchan-peer-bench: checksum mismatch for %s: got %llu, expected %llu\n",
                 options.design.c_str(), static_cast<unsigned long long>(result.checksum),
                 static_cast<unsigned long long>(expected));
    return 1;
  }
  return 0;
}

template <class Design>
int run_design(const Options& options) {
  switch (options.size) {
    case 8: return run_sized<Design, 8>(options);
    case 24: return run_sized<Design, 24>(options);
    case 128: return run_sized<Design, 128>(options);
    default: return run_sized<Design, 1024>(options);
  }
}

}  // namespace
}  // namespace leanchan::bench::peers

int main(int argc, char** argv) {
  using namespace leanchan::bench;
  using namespace leanchan::bench::peers;
  const Options options = parse(argc, argv);
  if (options.handoff) return handoff(options);
  const std::string& d = options.design;
  if (d == "leanchan-b1") return run_design<Leanchan<1>>(options);
  if (d == "leanchan-b8") return run_design<Leanchan<8>>(options);
  if (d == "leanchan-b32") return run_design<Leanchan<32>>(options);
  if (d == "tokio-style") return run_design<TokioStyle>(options);
  if (d == "tokio-style-park") return run_design<TokioStyleParkAtOnce>(options);
#if defined(LEANCHAN_HAVE_MOODYCAMEL)
  if (d == "moodycamel") return run_design<Moodycamel>(options);
#else
  if (d == "moodycamel") {
    std::fprintf(stderr,
                 "leanchan-peer-bench: built without moodycamel (libconcurrentqueue-dev)\n");
    return 3;
  }
#endif
  usage_error("unknown design '" + d + "'");
}
