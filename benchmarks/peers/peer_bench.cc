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
//   leanchan-peer-bench --design=NAME --single --capacity=C --size=S --messages=N
//     one thread, no other: rounds of min(C, left) sends, then as many
//     receives, until N messages went through; prints
//     design=NAME mode=single capacity=C size=S messages=N seconds=X
//       ns_per_msg=Y cpu_seconds=U cpu_ns_per_msg=V checksum=Z
//     (what a send plus a receive costs with no other thread in the way:
//     the single-thread part of the floor scripts/peers.sh prints; the
//     OS-thread designs only)
//   The designs leanchan-coro, leanchan-asio and asio-channel run the
//   first two modes with every party a task on two threads (docs/peers.md, "Tasks
//   on two threads"): coroutines on a ThreadPoolExecutor(2), or
//   asio::awaitable coroutines on an io_context run by two threads.
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
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "adapters.h"
#include "handoff.h"
#include "leanchan/coro.h"
#include "leanchan/executor.h"

#if defined(LEANCHAN_PEERS_HAVE_ASIO)
#include <asio.hpp>
#include <asio/experimental/concurrent_channel.hpp>

#include "leanchan/asio.h"
#endif

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
  bool single = false;
};

constexpr const char* kUsage =
    "usage: leanchan-peer-bench --design=NAME --producers=P --capacity=C "
    "--size=S --messages=N\n"
    "       leanchan-peer-bench --design=NAME --pingpong --size=S --messages=N\n"
    "       leanchan-peer-bench --design=NAME --single --capacity=C --size=S --messages=N\n"
    "       leanchan-peer-bench --handoff --messages=N\n"
    "       leanchan-peer-bench --help | -h\n"
    "designs: leanchan-b1 leanchan-b8 leanchan-b32 tokio-style tokio-style-park"
#if defined(LEANCHAN_HAVE_MOODYCAMEL)
    " moodycamel"
#endif
#if defined(LEANCHAN_HAVE_TBB)
    " onetbb"
#endif
    " leanchan-coro"
#if defined(LEANCHAN_PEERS_HAVE_ASIO)
    " leanchan-asio asio-channel"
#endif
    "\nsizes: 8 24 128 1024; messages a multiple of producers\n";

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "leanchan-peer-bench: %s\n%s", what.c_str(), kUsage);
  std::exit(2);
}

// A decimal count below 10^18 (leading zeros allowed).
std::uint64_t parse_count(std::string_view name, std::string_view text) {
  const std::string bad = "bad value for --" + std::string(name) + ": '" + std::string(text) + "'";
  if (text.empty()) usage_error(bad + " (a number)");
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') usage_error(bad + " (a number)");
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value >= 1'000'000'000'000'000'000ULL) usage_error(bad + " (below 10^18)");
  }
  return value;
}

// Standard output flushed: the scripts read the result line from it, so a
// line that could not be written is a failed run (exit 2), not a success.
int flushed(int exit_code) {
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return exit_code;
  std::fprintf(stderr, "leanchan-peer-bench: cannot write to standard output\n");
  return 2;
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
    } else if (arg == "--single") {
      options.single = true;
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
    } else if (arg == "--design" || arg == "--producers" || arg == "--capacity" ||
               arg == "--size" || arg == "--messages") {
      usage_error(std::string(arg) + " needs its value after '=': " + std::string(arg) + "=...");
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (options.handoff) {
    if (!options.design.empty() || have_producers || have_capacity || options.size != 0 ||
        options.pingpong || options.single) {
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
  if (options.pingpong && options.single) usage_error("--pingpong and --single exclude each other");
  if (options.single && have_producers && options.producers != 1) {
    usage_error("--single uses one thread (no --producers)");
  }
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

// A timed window: the wall clock and the process's CPU time from its
// construction to stop(), which makes the Result of the messages it saw.
class Window {
 public:
  Window() noexcept : cpu_start_(cpu_seconds()), start_(std::chrono::steady_clock::now()) {}
  Result stop(std::uint64_t checksum) const noexcept {
    const auto end = std::chrono::steady_clock::now();
    Result result;
    result.cpu_seconds = cpu_seconds() - cpu_start_;
    result.seconds = std::chrono::duration<double>(end - start_).count();
    result.checksum = checksum;
    return result;
  }

 private:
  double cpu_start_;
  std::chrono::steady_clock::time_point start_;
};

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
  const Window window;  // the timed window opens
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
  const Result result = window.stop(sum);
  for (auto& thread : threads) thread.join();
  return result;
}

// One thread: rounds of up to `capacity` sends, then as many receives (no
// other thread, so neither side ever waits).
template <class Design, std::size_t S>
Result single(const Options& options) {
  auto [tx, rx] = Design::template make<Message<S>>(options.capacity);
  std::uint64_t sum = 0;
  const Window window;
  for (std::uint64_t sent = 0; sent < options.messages;) {
    const std::uint64_t round = std::min(options.capacity, options.messages - sent);
    for (std::uint64_t i = 0; i < round; ++i) {
      Message<S> message;
      put(message, sent + i);
      if (!tx.send(std::move(message)).ok()) {
        std::fprintf(stderr, "leanchan-peer-bench: send failed\n");
        std::exit(1);
      }
    }
    for (std::uint64_t i = 0; i < round; ++i) {
      auto message = rx.recv();
      if (!message) {
        std::fprintf(stderr, "leanchan-peer-bench: channel closed\n");
        std::exit(1);
      }
      sum += get(*message);
    }
    sent += round;
  }
  return window.stop(sum);
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
  std::uint64_t sum = 0;
  const Window window;  // the timed window opens
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
  const Result result = window.stop(sum);
  echo.join();
  return result;
}

// ---- Tasks on two threads -------------------------------------------------
// The same workload with the producers, the consumer, the echo and the
// pinger as tasks on two threads, line for line Tokio's runner
// (tokio_throughput / tokio_pingpong in rust/src/main.rs): the producers are
// started before the clock and park at a start gate; the consumer task
// reads getrusage and the clock, opens the gate, receives N messages adding
// up their payloads, and reads the clock and getrusage after the last one;
// the main thread waits for its result and tears down outside the window.

// The consumer's (or the pinger's) result, handed to the main thread.
class Outcome {
 public:
  void set(const Result& result) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      result_ = result;
      done_ = true;
    }
    changed_.notify_all();
  }
  Result wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return done_; });
    return result_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  Result result_;
  bool done_ = false;
};

// Waits (outside the timed window) until `count` reaches `target`.
void wait_count(std::atomic<std::uint64_t>& count, std::uint64_t target) {
  for (std::uint64_t seen = count.load(); seen != target; seen = count.load()) count.wait(seen);
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "leanchan-peer-bench: %s\n", what);
  std::exit(1);
}

// A coroutine that starts suspended and frees its own frame when it ends.
struct Detached {
  struct promise_type {
    Detached get_return_object() {
      return Detached{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
  std::coroutine_handle<promise_type> handle;
};

// A coroutine's first resumption, as a task for an executor.
struct Starter : leanchan::ExecutorTask {
  explicit Starter(std::coroutine_handle<> h) : handle(h) {
    run = [](leanchan::ExecutorTask* self) { static_cast<Starter*>(self)->handle.resume(); };
  }
  std::coroutine_handle<> handle;
};

// The coroutines' start gate (Tokio's Semaphore with no permits): `co_await
// gate.wait()` parks the coroutine; open() schedules every parked one.
class CoroGate {
 public:
  struct Waiter : leanchan::ExecutorTask {
    explicit Waiter(CoroGate& g) noexcept : gate(&g) {
      run = [](leanchan::ExecutorTask* self) { static_cast<Waiter*>(self)->handle.resume(); };
    }
    bool await_ready() noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      handle = h;
      std::lock_guard<std::mutex> lock(gate->mutex_);
      gate->waiters_.push_back(this);
      gate->parked_.fetch_add(1);
      gate->parked_.notify_all();
    }
    void await_resume() noexcept {}
    CoroGate* gate;
    std::coroutine_handle<> handle;
  };
  Waiter wait() noexcept { return Waiter(*this); }
  void open(leanchan::Executor& executor) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Waiter* waiter : waiters_) executor.schedule(*waiter);
    waiters_.clear();
  }
  std::atomic<std::uint64_t>& parked() noexcept { return parked_; }

 private:
  std::mutex mutex_;
  std::vector<Waiter*> waiters_;
  std::atomic<std::uint64_t> parked_{0};
};

// leanchan-coro: leanchan's coroutine API (async_send / async_recv) on a
// ThreadPoolExecutor of two threads, over channel<Message<S>>(C) (the
// default block size).
template <std::size_t S>
Detached coro_producer(leanchan::Sender<Message<S>> tx, leanchan::Executor& executor,
                       CoroGate& gate, std::uint64_t p, std::uint64_t per_producer) {
  co_await gate.wait();
  for (std::uint64_t i = 0; i < per_producer; ++i) {
    Message<S> message;
    put(message, p << 32 | i);
    auto sent = co_await tx.async_send(std::move(message), executor);
    if (!sent.ok()) fail("send failed");
  }
}

template <std::size_t S>
Detached coro_consumer(leanchan::Receiver<Message<S>>& rx, leanchan::Executor& executor,
                       CoroGate& gate, std::uint64_t n, Outcome& outcome) {
  std::uint64_t sum = 0;
  const Window window;  // the timed window opens
  gate.open(executor);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::optional<Message<S>> message = co_await rx.async_recv(executor);
    if (!message) fail("channel closed early");
    sum += get(*message);
  }
  const Result result = window.stop(sum);
  outcome.set(result);
}

template <std::size_t S>
Result coro_throughput(const Options& options) {
  const std::uint64_t per_producer = options.messages / options.producers;
  Outcome outcome;
  auto [tx, rx] = leanchan::channel<Message<S>>(options.capacity);
  CoroGate gate;
  std::vector<Starter> starters;
  starters.reserve(options.producers + 1);
  // Declared last: its destructor joins the threads before anything the
  // coroutines use goes.
  leanchan::ThreadPoolExecutor executor(2);
  for (std::uint64_t p = 0; p < options.producers; ++p) {
    starters.emplace_back(coro_producer<S>(tx, executor, gate, p, per_producer).handle);
    executor.schedule(starters.back());
  }
  { auto drop = std::move(tx); }  // the producers hold the only senders
  wait_count(gate.parked(), options.producers);
  starters.emplace_back(coro_consumer<S>(rx, executor, gate, options.messages, outcome).handle);
  executor.schedule(starters.back());
  return outcome.wait();  // then the pool's destructor joins its threads
}

template <std::size_t S>
Detached coro_echo(leanchan::Receiver<Message<S>> in, leanchan::Sender<Message<S>> out,
                   leanchan::Executor& executor, std::uint64_t n, std::atomic<bool>& ready) {
  ready.store(true, std::memory_order_release);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::optional<Message<S>> message = co_await in.async_recv(executor);
    if (!message) co_return;
    auto sent = co_await out.async_send(std::move(*message), executor);
    if (!sent.ok()) co_return;
  }
}

template <std::size_t S>
Detached coro_pinger(leanchan::Sender<Message<S>>& to_echo,
                     leanchan::Receiver<Message<S>>& from_echo, leanchan::Executor& executor,
                     std::uint64_t n, Outcome& outcome) {
  std::uint64_t sum = 0;
  const Window window;  // the timed window opens
  for (std::uint64_t i = 0; i < n; ++i) {
    Message<S> message;
    put(message, i);
    auto sent = co_await to_echo.async_send(std::move(message), executor);
    if (!sent.ok()) fail("send failed");
    std::optional<Message<S>> reply = co_await from_echo.async_recv(executor);
    if (!reply) fail("echo channel closed");
    sum += get(*reply);
  }
  const Result result = window.stop(sum);
  outcome.set(result);
}

template <std::size_t S>
Result coro_pingpong(const Options& options) {
  auto [to_echo, echo_in] = leanchan::channel<Message<S>>(1);
  auto [echo_out, from_echo] = leanchan::channel<Message<S>>(1);
  Outcome outcome;
  std::atomic<bool> ready{false};
  std::optional<Starter> echo;
  std::optional<Starter> pinger;
  leanchan::ThreadPoolExecutor executor(2);  // last: joins before the rest goes
  echo.emplace(
      coro_echo<S>(std::move(echo_in), std::move(echo_out), executor, options.messages, ready)
          .handle);
  executor.schedule(*echo);
  while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
  pinger.emplace(coro_pinger<S>(to_echo, from_echo, executor, options.messages, outcome).handle);
  executor.schedule(*pinger);
  return outcome.wait();
}

#if defined(LEANCHAN_PEERS_HAVE_ASIO)
// leanchan-asio and asio-channel: ::asio::awaitable coroutines (co_spawn,
// use_awaitable) on one io_context run by two threads. leanchan-asio sends
// with leanchan::asio::AsyncSender (one per producer, over its own Sender)
// and receives with AsyncReceiver, over leanchan::channel<Message<S>>(C);
// asio-channel uses ::asio::experimental::concurrent_channel<void(error_code,
// Message<S>)>(io, C). The bodies are the same but for the two calls.
// The gate: a concurrent_channel<void(error_code, int)> with room for every
// producer, which each producer receives from; the consumer opens it with
// P try_sends.
// (void(error_code, int): Asio 1.22 does not build a channel of void(error_code).)
using GateChannel = ::asio::experimental::concurrent_channel<void(::asio::error_code, int)>;

// Runs `io` on two threads until this object goes (declared after every
// object the coroutines use, so that the threads have finished with them).
class IoThreads {
 public:
  explicit IoThreads(::asio::io_context& io) : io_(io), work_(io.get_executor()) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~IoThreads() {
    work_.reset();
    for (std::thread& t : threads_) t.join();
  }

 private:
  ::asio::io_context& io_;
  ::asio::executor_work_guard<::asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

void open_gate(GateChannel& gate, std::uint64_t producers) {
  for (std::uint64_t p = 0; p < producers; ++p) {
    if (!gate.try_send(::asio::error_code(), 0)) fail("start gate");
  }
}

template <std::size_t S>
using AsioMessageChannel =
    ::asio::experimental::concurrent_channel<void(::asio::error_code, Message<S>)>;

template <std::size_t S>
::asio::awaitable<void> lasio_producer(leanchan::Sender<Message<S>> raw_tx, GateChannel& gate,
                                       std::atomic<std::uint64_t>& parked, std::uint64_t p,
                                       std::uint64_t per_producer) {
  leanchan::asio::AsyncSender<Message<S>> tx(co_await ::asio::this_coro::executor,
                                             std::move(raw_tx));
  parked.fetch_add(1);
  parked.notify_all();
  co_await gate.async_receive(::asio::use_awaitable);
  for (std::uint64_t i = 0; i < per_producer; ++i) {
    Message<S> message;
    put(message, p << 32 | i);
    co_await tx.async_send(std::move(message), ::asio::use_awaitable);
  }
}

template <std::size_t S>
::asio::awaitable<void> achan_producer(AsioMessageChannel<S>& tx, GateChannel& gate,
                                       std::atomic<std::uint64_t>& parked, std::uint64_t p,
                                       std::uint64_t per_producer) {
  parked.fetch_add(1);
  parked.notify_all();
  co_await gate.async_receive(::asio::use_awaitable);
  for (std::uint64_t i = 0; i < per_producer; ++i) {
    Message<S> message;
    put(message, p << 32 | i);
    co_await tx.async_send(::asio::error_code(), std::move(message), ::asio::use_awaitable);
  }
}

template <std::size_t S>
::asio::awaitable<void> lasio_consumer(leanchan::asio::AsyncReceiver<Message<S>>& rx,
                                       GateChannel& gate, std::uint64_t producers, std::uint64_t n,
                                       Outcome& outcome) {
  std::uint64_t sum = 0;
  const Window window;  // the timed window opens
  open_gate(gate, producers);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::optional<Message<S>> message = co_await rx.async_recv(::asio::use_awaitable);
    if (!message) fail("channel closed early");
    sum += get(*message);
  }
  const Result result = window.stop(sum);
  outcome.set(result);
}

template <std::size_t S>
::asio::awaitable<void> achan_consumer(AsioMessageChannel<S>& rx, GateChannel& gate,
                                       std::uint64_t producers, std::uint64_t n, Outcome& outcome) {
  std::uint64_t sum = 0;
  const Window window;  // the timed window opens
  open_gate(gate, producers);
  for (std::uint64_t i = 0; i < n; ++i) {
    Message<S> message = co_await rx.async_receive(::asio::use_awaitable);
    sum += get(message);
  }
  const Result result = window.stop(sum);
  outcome.set(result);
}

// A failure inside a co_spawned coroutine (an exception from use_awaitable)
// ends the run with exit status 1.
void on_spawned_end(std::exception_ptr error) {
  if (error) fail("a coroutine failed");
}

template <std::size_t S>
Result lasio_throughput(const Options& options) {
  const std::uint64_t per_producer = options.messages / options.producers;
  Outcome outcome;
  ::asio::io_context io(2);
  auto [tx, raw_rx] = leanchan::channel<Message<S>>(options.capacity);
  leanchan::asio::AsyncReceiver<Message<S>> rx(io.get_executor(), std::move(raw_rx));
  GateChannel gate(io, options.producers);
  std::atomic<std::uint64_t> parked{0};
  IoThreads threads(io);
  for (std::uint64_t p = 0; p < options.producers; ++p) {
    ::asio::co_spawn(io, lasio_producer<S>(tx, gate, parked, p, per_producer), on_spawned_end);
  }
  { auto drop = std::move(tx); }  // the producers hold the only senders
  wait_count(parked, options.producers);
  ::asio::co_spawn(io, lasio_consumer<S>(rx, gate, options.producers, options.messages, outcome),
                   on_spawned_end);
  return outcome.wait();  // then the threads finish the producers and join
}

template <std::size_t S>
Result achan_throughput(const Options& options) {
  const std::uint64_t per_producer = options.messages / options.producers;
  Outcome outcome;
  ::asio::io_context io(2);
  AsioMessageChannel<S> channel(io, options.capacity);
  GateChannel gate(io, options.producers);
  std::atomic<std::uint64_t> parked{0};
  IoThreads threads(io);
  for (std::uint64_t p = 0; p < options.producers; ++p) {
    ::asio::co_spawn(io, achan_producer<S>(channel, gate, parked, p, per_producer), on_spawned_end);
  }
  wait_count(parked, options.producers);
  ::asio::co_spawn(io,
                   achan_consumer<S>(channel, gate, options.producers, options.messages, outcome),
                   on_spawned_end);
  return outcome.wait();
}

template <std::size_t S>
::asio::awaitable<void> lasio_echo(leanchan::asio::AsyncReceiver<Message<S>>& in,
                                   leanchan::asio::AsyncSender<Message<S>>& out, std::uint64_t n,
                                   std::atomic<bool>& ready) {
  ready.store(true, std::memory_order_release);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::optional<Message<S>> message = co_await in.async_recv(::asio::use_awaitable);
    if (!message) co_return;
    co_await out.async_send(std::move(*message), ::asio::use_awaitable);
  }
}

template <std::size_t S>
::asio::awaitable<void> achan_echo(AsioMessageChannel<S>& in, AsioMessageChannel<S>& out,
                                   std::uint64_t n, std::atomic<bool>& ready) {
  ready.store(true, std::memory_order_release);
  for (std::uint64_t i = 0; i < n; ++i) {
    Message<S> message = co_await in.async_receive(::asio::use_awaitable);
    co_await out.async_send(::asio::error_code(), std::move(message), ::asio::use_awaitable);
  }
}

template <std::size_t S>
::asio::awaitable<void> lasio_pinger(leanchan::asio::AsyncSender<Message<S>>& to_echo,
                                     leanchan::asio::AsyncReceiver<Message<S>>& from_echo,
                                     std::uint64_t n, Outcome& outcome) {
  std::uint64_t sum = 0;
  const Window window;  // the timed window opens
  for (std::uint64_t i = 0; i < n; ++i) {
    Message<S> message;
    put(message, i);
    co_await to_echo.async_send(std::move(message), ::asio::use_awaitable);
    std::optional<Message<S>> reply = co_await from_echo.async_recv(::asio::use_awaitable);
    if (!reply) fail("echo channel closed");
    sum += get(*reply);
  }
  const Result result = window.stop(sum);
  outcome.set(result);
}

template <std::size_t S>
::asio::awaitable<void> achan_pinger(AsioMessageChannel<S>& to_echo,
                                     AsioMessageChannel<S>& from_echo, std::uint64_t n,
                                     Outcome& outcome) {
  std::uint64_t sum = 0;
  const Window window;  // the timed window opens
  for (std::uint64_t i = 0; i < n; ++i) {
    Message<S> message;
    put(message, i);
    co_await to_echo.async_send(::asio::error_code(), std::move(message), ::asio::use_awaitable);
    Message<S> reply = co_await from_echo.async_receive(::asio::use_awaitable);
    sum += get(reply);
  }
  const Result result = window.stop(sum);
  outcome.set(result);
}

template <std::size_t S>
Result lasio_pingpong(const Options& options) {
  Outcome outcome;
  ::asio::io_context io(2);
  const auto executor = io.get_executor();
  auto [raw_to_echo, raw_echo_in] = leanchan::channel<Message<S>>(1);
  auto [raw_echo_out, raw_from_echo] = leanchan::channel<Message<S>>(1);
  leanchan::asio::AsyncSender<Message<S>> to_echo(executor, std::move(raw_to_echo));
  leanchan::asio::AsyncReceiver<Message<S>> echo_in(executor, std::move(raw_echo_in));
  leanchan::asio::AsyncSender<Message<S>> echo_out(executor, std::move(raw_echo_out));
  leanchan::asio::AsyncReceiver<Message<S>> from_echo(executor, std::move(raw_from_echo));
  std::atomic<bool> ready{false};
  IoThreads threads(io);
  ::asio::co_spawn(io, lasio_echo<S>(echo_in, echo_out, options.messages, ready), on_spawned_end);
  while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
  ::asio::co_spawn(io, lasio_pinger<S>(to_echo, from_echo, options.messages, outcome),
                   on_spawned_end);
  return outcome.wait();
}

template <std::size_t S>
Result achan_pingpong(const Options& options) {
  Outcome outcome;
  ::asio::io_context io(2);
  AsioMessageChannel<S> to_echo(io, 1);
  AsioMessageChannel<S> from_echo(io, 1);
  std::atomic<bool> ready{false};
  IoThreads threads(io);
  ::asio::co_spawn(io, achan_echo<S>(to_echo, from_echo, options.messages, ready), on_spawned_end);
  while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
  ::asio::co_spawn(io, achan_pinger<S>(to_echo, from_echo, options.messages, outcome),
                   on_spawned_end);
  return outcome.wait();
}
#endif  // LEANCHAN_PEERS_HAVE_ASIO

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
  return flushed(0);
}

// The OS-thread designs: Design's blocking send() / recv() on std::threads.
template <class Design>
struct Threads {
  template <std::size_t S>
  static Result run(const Options& options) {
    if (options.single) return single<Design, S>(options);
    return options.pingpong ? pingpong<Design, S>(options) : throughput<Design, S>(options);
  }
};

// The designs whose parties are tasks on two threads.
struct LeanchanCoro {
  template <std::size_t S>
  static Result run(const Options& options) {
    return options.pingpong ? coro_pingpong<S>(options) : coro_throughput<S>(options);
  }
};
#if defined(LEANCHAN_PEERS_HAVE_ASIO)
struct LeanchanAsio {
  template <std::size_t S>
  static Result run(const Options& options) {
    return options.pingpong ? lasio_pingpong<S>(options) : lasio_throughput<S>(options);
  }
};
struct AsioChannel {
  template <std::size_t S>
  static Result run(const Options& options) {
    return options.pingpong ? achan_pingpong<S>(options) : achan_throughput<S>(options);
  }
};
#endif

template <class Runner, std::size_t S>
int run_sized(const Options& options) {
  const Result result = Runner::template run<S>(options);
  const std::uint64_t expected =
      options.pingpong || options.single
          ? expected_checksum(1, options.messages)
          : expected_checksum(options.producers, options.messages / options.producers);
  const double seconds = result.seconds > 0 ? result.seconds : 1e-9;
  const double cpu_ns = result.cpu_seconds * 1e9 / static_cast<double>(options.messages);
  if (options.single) {
    std::printf(
        "design=%s mode=single capacity=%llu size=%llu messages=%llu seconds=%.6f "
        "ns_per_msg=%.1f cpu_seconds=%.6f cpu_ns_per_msg=%.1f checksum=%llu\n",
        options.design.c_str(), static_cast<unsigned long long>(options.capacity),
        static_cast<unsigned long long>(options.size),
        static_cast<unsigned long long>(options.messages), seconds,
        seconds * 1e9 / static_cast<double>(options.messages), result.cpu_seconds, cpu_ns,
        static_cast<unsigned long long>(result.checksum));
  } else if (options.pingpong) {
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
  if (flushed(0) != 0) return 2;
  if (result.checksum != expected) {
    std::fprintf(stderr, "leanchan-peer-bench: checksum mismatch for %s: got %llu, expected %llu\n",
                 options.design.c_str(), static_cast<unsigned long long>(result.checksum),
                 static_cast<unsigned long long>(expected));
    return 1;
  }
  return 0;
}

template <class Runner>
int run_design(const Options& options) {
  switch (options.size) {
    case 8: return run_sized<Runner, 8>(options);
    case 24: return run_sized<Runner, 24>(options);
    case 128: return run_sized<Runner, 128>(options);
    default: return run_sized<Runner, 1024>(options);
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
  if (options.single && (d == "leanchan-coro" || d == "leanchan-asio" || d == "asio-channel")) {
    usage_error("--single is for the OS-thread designs");
  }
  if (d == "leanchan-b1") return run_design<Threads<Leanchan<1>>>(options);
  if (d == "leanchan-b8") return run_design<Threads<Leanchan<8>>>(options);
  if (d == "leanchan-b32") return run_design<Threads<Leanchan<32>>>(options);
  if (d == "tokio-style") return run_design<Threads<TokioStyle>>(options);
  if (d == "tokio-style-park") return run_design<Threads<TokioStyleParkAtOnce>>(options);
  if (d == "leanchan-coro") return run_design<LeanchanCoro>(options);
#if defined(LEANCHAN_PEERS_HAVE_ASIO)
  if (d == "leanchan-asio") return run_design<LeanchanAsio>(options);
  if (d == "asio-channel") return run_design<AsioChannel>(options);
#else
  if (d == "leanchan-asio" || d == "asio-channel") {
    std::fprintf(stderr, "leanchan-peer-bench: built without Asio (libasio-dev)\n");
    return 3;
  }
#endif
#if defined(LEANCHAN_HAVE_MOODYCAMEL)
  if (d == "moodycamel") return run_design<Threads<Moodycamel>>(options);
#else
  if (d == "moodycamel") {
    std::fprintf(stderr,
                 "leanchan-peer-bench: built without moodycamel (libconcurrentqueue-dev)\n");
    return 3;
  }
#endif
#if defined(LEANCHAN_HAVE_TBB)
  if (d == "onetbb") return run_design<Threads<Tbb>>(options);
#else
  if (d == "onetbb") {
    std::fprintf(stderr, "leanchan-peer-bench: built without oneTBB (libtbb-dev)\n");
    return 3;
  }
#endif
  usage_error("unknown design '" + d + "'");
}
