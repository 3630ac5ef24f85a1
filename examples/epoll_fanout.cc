// SPDX-License-Identifier: MIT
// leanchan-epoll-fanout: one thread serves many channels through a ReadySet
// and epoll (--mode=epoll), or one blocked thread per channel serves them
// (--mode=threads). A producer sends timestamped 24-byte events to random
// channels at a steady rate; the program prints delivery latency
// percentiles and checks that every event arrived exactly once.
//
//   leanchan-epoll-fanout --channels=10000 --rate=1000 --seconds=3 --mode=epoll
//
// Bounded: it sends rate * seconds events, then closes every channel and
// stops. Exit code 0 when every event arrived once (and for --help / -h), 1
// if not or for a flag Abseil rejects, 2 on a bad value or a stray argument,
// or when the run cannot start (memory for its results, epoll, a thread).
#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "cli.h"  // profiler/report/cli.h: --help, -h, stray arguments
#include "leanchan/channel.h"
#include "leanchan/ready_set.h"

ABSL_FLAG(int, channels, 10000, "Number of channels (1..100000)");
ABSL_FLAG(int, rate, 1000, "Events per second, in total (1..1000000)");
ABSL_FLAG(double, seconds, 3.0, "How long to send (0.1..600)");
ABSL_FLAG(std::string, mode, "epoll",
          "epoll (one thread, a ReadySet) or threads (one per channel)");

namespace {

using Clock = std::chrono::steady_clock;

struct Event {  // 24 bytes, as a proxy's health event
  std::uint32_t channel;
  std::uint32_t sequence;
  std::int64_t sent_ns;
  float weight;
  std::uint32_t flags;
};
static_assert(sizeof(Event) == 24);

using Rx = leanchan::Receiver<Event>;
using Tx = leanchan::Sender<Event>;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

struct Results {
  std::vector<std::int64_t> latencies_ns;  // per event, in arrival order
  std::vector<std::uint8_t> seen;          // per sequence number
  std::uint64_t duplicates = 0;
  // The server could not serve (an OS call failed): the run is void.
  std::string setup_error;  // set before the ready flag, read after it
  std::string error;        // set before the server returns, read after its join
};

std::string os_error(const char* call, int error) {
  return std::string(call) + " failed: " + std::strerror(error);
}

void record(Results& results, const Event& event) {
  results.latencies_ns.push_back(now_ns() - event.sent_ns);
  if (results.seen[event.sequence]++ != 0) ++results.duplicates;
}

void set_ready(std::atomic<bool>& ready_flag) {
  ready_flag = true;
  ready_flag.notify_all();
}

// One thread, one epoll, one eventfd for every channel. A failed setup
// sets results.setup_error before the ready flag and returns.
void serve_with_epoll(std::vector<Rx>& receivers, Results& results, std::atomic<bool>& ready_flag) {
  struct Slot {
    Rx* rx;
    std::unique_ptr<leanchan::ReadyEntry> entry;
    bool ended = false;
  };
  std::optional<leanchan::ReadySet> made;
  try {
    made.emplace();
  } catch (const std::system_error& e) {
    results.setup_error = std::string("cannot create the ReadySet: ") + e.what();
    return set_ready(ready_flag);
  }
  leanchan::ReadySet& ready = *made;
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll < 0) {
    results.setup_error = os_error("epoll_create1", errno);
    return set_ready(ready_flag);
  }
  epoll_event in{};
  in.events = EPOLLIN;
  if (::epoll_ctl(epoll, EPOLL_CTL_ADD, ready.fd(), &in) != 0) {
    results.setup_error = os_error("epoll_ctl", errno);
    ::close(epoll);
    return set_ready(ready_flag);
  }
  std::vector<Slot> slots(receivers.size());
  for (std::size_t i = 0; i < receivers.size(); ++i) {
    slots[i].rx = &receivers[i];
    slots[i].entry = std::make_unique<leanchan::ReadyEntry>(ready, &slots[i]);
    slots[i].entry->watch(receivers[i]);
  }
  set_ready(ready_flag);
  std::size_t ended = 0;
  while (ended < slots.size()) {
    epoll_event out{};
    const int n = ::epoll_wait(epoll, &out, 1, -1);
    if (n < 0 && errno != EINTR) {
      results.error = os_error("epoll_wait", errno);  // the run fails: nothing serves the channels
      break;
    }
    if (n <= 0) continue;
    ready.drain([&](leanchan::ReadyEntry& entry) {
      auto* slot = static_cast<Slot*>(entry.user());
      do {
        for (;;) {
          auto result = slot->rx->poll_recv();  // never waits on a stalled sender
          if (result.ok()) {
            record(results, result.value());
            continue;
          }
          if (result.status() == leanchan::PollStatus::kDisconnected && !slot->ended) {
            slot->ended = true;
            ++ended;
          }
          break;
        }
      } while (!slot->ended && slot->rx->arm_notifier());
    });
  }
  ::close(epoll);
  for (auto& slot : slots) slot.rx->clear_notifier();
}

// One thread per channel, each blocked in recv(). Small stacks, so that
// 10,000 threads fit.
void serve_with_threads(std::vector<Rx>& receivers, Results& results,
                        std::atomic<bool>& ready_flag) {
  struct Job {
    Rx* rx;
    std::vector<std::pair<std::int64_t, std::uint32_t>> arrivals;  // latency, sequence
  };
  std::vector<Job> jobs(receivers.size());
  std::vector<pthread_t> threads(receivers.size());
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 * 1024);
  std::size_t started = 0;
  for (std::size_t i = 0; i < receivers.size(); ++i, ++started) {
    jobs[i].rx = &receivers[i];
    const int error = pthread_create(
        &threads[i], &attr,
        [](void* arg) -> void* {
          auto* job = static_cast<Job*>(arg);
          while (std::optional<Event> event = job->rx->recv()) {
            job->arrivals.emplace_back(now_ns() - event->sent_ns, event->sequence);
          }
          return nullptr;
        },
        &jobs[i]);
    if (error != 0) {
      results.setup_error = "cannot start thread " + std::to_string(i + 1) + " of " +
                            std::to_string(receivers.size()) + ": " +
                            os_error("pthread_create", error);
      break;
    }
  }
  pthread_attr_destroy(&attr);
  // Every thread exists (each blocks in recv soon after); or, on an error,
  // the caller ends every channel, and the ones started return.
  set_ready(ready_flag);
  for (std::size_t i = 0; i < started; ++i) pthread_join(threads[i], nullptr);
  if (!results.setup_error.empty()) return;
  for (const Job& job : jobs) {
    for (const auto& [latency, sequence] : job.arrivals) {
      results.latencies_ns.push_back(latency);
      if (results.seen[sequence]++ != 0) ++results.duplicates;
    }
  }
}

double percentile_us(std::vector<std::int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto index = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1));
  return static_cast<double>(sorted[index]) / 1000.0;
}

int fail(const std::string& message) {
  std::cerr << "leanchan-epoll-fanout: " << message << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (auto exit_code = leanchan::cli::parse_command_line(
          "leanchan-epoll-fanout",
          "Serves many channels from one epoll thread (or one thread each) and reports event "
          "latency.\nExample: leanchan-epoll-fanout --channels=10000 --rate=1000 --seconds=3",
          absl::GetFlagReflectionHandle(FLAGS_channels), argc, argv)) {
    return *exit_code;
  }
  const int channels = absl::GetFlag(FLAGS_channels);
  const int rate = absl::GetFlag(FLAGS_rate);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (channels < 1 || channels > 100000) return fail("--channels must be in 1..100000");
  if (rate < 1 || rate > 1000000) return fail("--rate must be in 1..1000000");
  if (!(seconds >= 0.1 && seconds <= 600)) return fail("--seconds must be in 0.1..600");
  if (mode != "epoll" && mode != "threads")
    return fail("--mode must be epoll or threads, got '" + mode + "'");
  if (static_cast<double>(rate) * seconds < 1) {
    return fail("--rate * --seconds must be at least 1: this run would send no event");
  }

  std::vector<Tx> senders;
  std::vector<Rx> receivers;
  senders.reserve(static_cast<std::size_t>(channels));
  receivers.reserve(static_cast<std::size_t>(channels));
  for (int i = 0; i < channels; ++i) {
    auto [tx, rx] = leanchan::channel<Event>(16);
    senders.push_back(std::move(tx));
    receivers.push_back(std::move(rx));
  }
  const std::size_t idle_bytes = receivers[0].memory_usage();
  const auto total = static_cast<std::uint32_t>(static_cast<double>(rate) * seconds);

  Results results;
  try {
    results.seen.assign(total, 0);
    results.latencies_ns.reserve(total);
  } catch (const std::bad_alloc&) {
    return fail("cannot allocate the results of " + std::to_string(total) +
                " events (9 bytes each): lower --rate or --seconds");
  }
  std::atomic<bool> server_ready{false};
  std::thread server([&] {
    if (mode == "epoll") {
      serve_with_epoll(receivers, results, server_ready);
    } else {
      serve_with_threads(receivers, results, server_ready);
    }
  });
  server_ready.wait(false);  // start the clock once the server is set up
  if (!results.setup_error.empty()) {
    senders.clear();  // ends every channel: a receive thread started returns
    server.join();
    return fail(results.setup_error);
  }

  // The producer: a steady rate, random channels.
  std::mt19937 random(42);
  const auto period = std::chrono::nanoseconds(1'000'000'000 / rate);
  auto next = Clock::now();
  std::uint64_t refused = 0;
  for (std::uint32_t sequence = 0; sequence < total; ++sequence) {
    next += period;
    std::this_thread::sleep_until(next);  // pacing the load, not synchronizing
    const auto channel = static_cast<std::uint32_t>(random() % senders.size());
    Event event{channel, sequence, now_ns(), 1.0f, 0};
    if (!senders[channel].try_send(event).ok()) ++refused;  // full: counted as lost
  }
  senders.clear();  // every channel ends; the server drains and stops
  server.join();
  if (!results.error.empty()) return fail(results.error);

  std::vector<std::int64_t> sorted = results.latencies_ns;
  std::sort(sorted.begin(), sorted.end());
  std::uint64_t lost = 0;
  for (auto mark : results.seen) lost += mark == 0 ? 1 : 0;
  lost -= refused;
  std::printf(
      "| mode | channels | events | rate/s | bytes per idle channel | p50 us | p99 us | p999 us | "
      "lost | duplicated | refused (full) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %s | %d | %u | %d | %zu | %.1f | %.1f | %.1f | %llu | %llu | %llu |\n",
              mode.c_str(), channels, total, rate, idle_bytes, percentile_us(sorted, 0.50),
              percentile_us(sorted, 0.99), percentile_us(sorted, 0.999),
              static_cast<unsigned long long>(lost),
              static_cast<unsigned long long>(results.duplicates),
              static_cast<unsigned long long>(refused));
  return leanchan::cli::finish_output("leanchan-epoll-fanout",
                                      lost == 0 && results.duplicates == 0 ? 0 : 1);
}
