// SPDX-License-Identifier: MIT
#include "proxy.h"

#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "designs.h"
#include "histogram.h"
#include "leanchan/profiler/heap_probe.h"
#include "leanchan/profiler/resident_memory.h"

namespace proxy {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}
std::int64_t resident() {
  return static_cast<std::int64_t>(leanchan::profiler::resident_bytes().value_or(0));
}

template <class D>
class Scenario {
 public:
  explicit Scenario(const Options& options) : options_(options), random_(options.seed) {
    if (D::kTakesMemory && options.budget_bytes > 0) budget_.emplace(options.budget_bytes);
    if (D::kTakesMemory && options.top_services > 0) channel_registry_.emplace();
  }

  Report run();

 private:
  // The entry before the receiver: destroyed after it, so that the
  // receiver detaches a live notifier.
  struct Service {
    Service(std::uint64_t service_key, typename D::Rx receiver, leanchan::ReadySet& ready)
        : key(service_key), entry(ready, this), rx(std::move(receiver)) {}
    std::uint64_t key;
    std::uint32_t expected = 0;
    leanchan::ReadyEntry entry;
    typename D::Rx rx;
  };

  struct Worker {
    Worker() : inbox(leanchan::channel<Service*, 32>(1024)), inbox_entry(ready, nullptr) {}
    leanchan::ReadySet ready;
    std::pair<leanchan::Sender<Service*, 32>, leanchan::Receiver<Service*, 32>> inbox;
    leanchan::ReadyEntry inbox_entry;
    absl::flat_hash_map<Service*, std::unique_ptr<Service>> services;
    Histogram latency;  // fixed size, touched at construction
    std::thread thread;
    std::int64_t cpu_ns = 0;  // the worker thread's CPU time, written before it ends
  };

  struct Route {
    typename D::Tx tx;
    std::uint32_t next_sequence = 0;
    std::size_t worker = 0;
  };

  void add_service(std::uint64_t key);
  void remove_random_service();
  void send_event(std::uint64_t key, Route& route);
  void serve(Worker& worker);
  // Options::top_services: one registry walk, into the report.
  void walk_registry(Report& report);
  void serve_service(Worker& worker, Service* service);

  std::pmr::memory_resource* memory() noexcept { return budget_ ? &*budget_ : nullptr; }
  leanchan::ChannelRegistry* listing() noexcept {
    return channel_registry_ ? &*channel_registry_ : nullptr;
  }

  Options options_;
  std::mt19937_64 random_;
  // Declared before the channels' owners (workers_, registry_): it must
  // outlive every channel charged to it.
  std::optional<leanchan::MemoryBudget> budget_;
  std::optional<leanchan::ChannelRegistry> channel_registry_;  // the same, for the listing
  std::vector<std::unique_ptr<Worker>> workers_;
  absl::flat_hash_map<std::uint64_t, Route> registry_;  // the checker's
  std::vector<std::uint64_t> keys_;                     // the checker's
  std::uint64_t next_key_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t refused_budget_ = 0;
  std::uint64_t services_refused_budget_ = 0;
  std::uint64_t added_ = 0;
  std::uint64_t removed_ = 0;
  std::atomic<std::uint64_t> received_{0};
  // The drain wait: run() sleeps on drained_ while draining_ is set; workers
  // notify it after each batch only then, so the steady run costs one load.
  std::atomic<bool> draining_{false};
  std::mutex drain_mutex_;
  std::condition_variable drained_;
  std::atomic<std::uint64_t> lost_{0};
  std::atomic<std::uint64_t> duplicated_{0};
};

template <class D>
void Scenario<D>::add_service(std::uint64_t key) {
  std::optional<decltype(D::make(options_.capacity, nullptr))> made;
  try {
    made.emplace(D::make(options_.capacity, memory(), listing(), key));
  } catch (const leanchan::BudgetExceeded&) {
    ++services_refused_budget_;  // no room for its control block: counted
    return;
  }
  auto& [tx, rx] = *made;
  const std::size_t worker = key % workers_.size();
  auto* service = new Service(key, std::move(rx), workers_[worker]->ready);
  registry_.emplace(key, Route{std::move(tx), 0, worker});
  keys_.push_back(key);
  // The worker adopts it (and starts watching it) on its own thread.
  (void)workers_[worker]->inbox.first.send(service);
  ++added_;
}

template <class D>
void Scenario<D>::remove_random_service() {
  if (keys_.empty()) return;
  const std::size_t at = random_() % keys_.size();
  const std::uint64_t key = keys_[at];
  keys_[at] = keys_.back();
  keys_.pop_back();
  registry_.erase(key);  // drops the sender: the worker drains, sees the end, frees it
  ++removed_;
}

template <class D>
void Scenario<D>::send_event(std::uint64_t key, Route& route) {
  const float weight = (route.next_sequence % 4 == 0) ? NAN : 0.5f;
  HealthEvent event{key, now_ns() + kEventTtlNs, weight, route.next_sequence};
  const auto result = route.tx.try_send(event);
  if (result.ok()) {
    ++route.next_sequence;
    ++sent_;
  } else if (result.status() == leanchan::SendStatus::kNoMemory) {
    ++refused_budget_;  // its block would pass the budget: handed back, counted
  } else {
    ++refused_;  // full: the checker would retry later; not a lost event
  }
}

template <class D>
void Scenario<D>::serve_service(Worker& worker, Service* service) {
  bool ended = false;
  do {
    for (;;) {
      // One slow service never holds the worker (D::poll never waits).
      const std::optional<HealthEvent> result = D::poll(service->rx, ended);
      if (!result) break;
      const HealthEvent& event = *result;
      worker.latency.add(now_ns() - (event.deadline_ns - kEventTtlNs));
      if (event.sequence == service->expected) {
        ++service->expected;
      } else if (event.sequence < service->expected) {
        duplicated_.fetch_add(1, std::memory_order_relaxed);
      } else {
        lost_.fetch_add(event.sequence - service->expected, std::memory_order_relaxed);
        service->expected = event.sequence + 1;
      }
      // seq_cst, with the load of draining_ below: Dekker with the drain
      // wait in run() (either it sees this count, or this sees its flag).
      received_.fetch_add(1, std::memory_order_seq_cst);
    }
  } while (!ended && D::arm(service->rx));
  if (draining_.load(std::memory_order_seq_cst)) {
    // Only while run() waits for the drain: wake it to re-check the count.
    { std::lock_guard<std::mutex> lock(drain_mutex_); }
    drained_.notify_one();
  }
  if (ended) {
    D::unwatch(service->rx);  // nothing fires the entry from here on
    // On the loop's thread, inside its visit: destroying the entry takes it
    // out of the set's queue, where a fire that raced the arming above may
    // have put it again.
    worker.services.erase(service);
  }
}

// CPU time of the calling thread so far (user + system), in nanoseconds.
std::int64_t thread_cpu_ns() {
  rusage usage{};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  const auto ns = [](const timeval& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 +
           static_cast<std::int64_t>(t.tv_usec) * 1'000;
  };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

template <class D>
void Scenario<D>::serve(Worker& worker) {
  const std::int64_t cpu_start = thread_cpu_ns();
  auto& inbox = worker.inbox.second;
  worker.inbox_entry.watch(inbox);
  bool inbox_open = true;
  while (inbox_open || !worker.services.empty()) {
    pollfd fd{worker.ready.fd(), POLLIN, 0};
    ::poll(&fd, 1, 100);
    worker.ready.drain([&](leanchan::ReadyEntry& entry) {
      if (entry.user() != nullptr) {
        serve_service(worker, static_cast<Service*>(entry.user()));
        return;
      }
      do {  // the inbox: adopt new services
        for (;;) {
          auto result = inbox.poll_recv();
          if (!result.ok()) {
            if (result.status() == leanchan::PollStatus::kDisconnected) inbox_open = false;
            break;
          }
          Service* service = result.value();
          worker.services.emplace(service, std::unique_ptr<Service>(service));
          D::watch(service->rx, service->entry);
        }
      } while (inbox_open && inbox.arm_notifier());
    });
  }
  inbox.clear_notifier();
  worker.cpu_ns = thread_cpu_ns() - cpu_start;  // read by run() after the join
}

template <class D>
void Scenario<D>::walk_registry(Report& report) {
  const auto walk_start = Clock::now();
  report.group = channel_registry_->figures(options_.top_services);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - walk_start).count();
  report.walk_ms = std::max(report.walk_ms, ms);
  report.walks += 1;
  report.listed = true;
}

template <class D>
Report Scenario<D>::run() {
  Report report;
  report.design = std::string(D::kName);
  report.services = options_.services;
  {
    leanchan::profiler::HeapProbe one;
    auto pair = D::make(options_.capacity, nullptr);
    report.channel_bytes_idle = static_cast<double>(one.live_bytes());
  }
  for (int w = 0; w < options_.workers; ++w) {
    workers_.push_back(std::make_unique<Worker>());
    // Room for churn up front, so that the proxy's own tables do not grow
    // while channel memory is being measured.
    workers_.back()->services.reserve(2 * options_.services / options_.workers + 64);
  }
  registry_.reserve(options_.services * 2);
  keys_.reserve(options_.services * 2);
  // The RSS series (soak mode): sized up front as well.
  if (options_.rss_every_seconds > 0) {
    report.rss_series.reserve(
        static_cast<std::size_t>(options_.seconds / options_.rss_every_seconds) + 2);
  }
  for (auto& worker : workers_) {
    Worker* raw = worker.get();
    worker->thread = std::thread([this, raw] { serve(*raw); });
  }

  // Idle: every service created and watched, nothing sent.
  const std::int64_t rss_before = resident();
  leanchan::profiler::HeapProbe probe;
  for (std::size_t i = 0; i < options_.services; ++i) add_service(next_key_++);
  const auto per_service = [&](double bytes) {
    return bytes / static_cast<double>(options_.services);
  };
  report.heap_idle = per_service(static_cast<double>(probe.live_bytes()));
  report.rss_idle = per_service(static_cast<double>(resident() - rss_before));

  // The run: steady events, zone bursts, churn.
  leanchan::profiler::reset_heap_peak();
  const std::int64_t heap_base =
      leanchan::profiler::read_heap_counters().live_requested_bytes - probe.live_bytes();
  const std::int64_t checker_cpu_start = thread_cpu_ns();
  const auto start = Clock::now();
  const Clock::time_point end = start + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(options_.seconds));
  const auto steady_period = std::chrono::nanoseconds(1'000'000'000LL / std::max(1, options_.rate));
  const auto burst_period = std::chrono::milliseconds(options_.burst_interval_ms);
  const auto churn_period =
      std::chrono::nanoseconds(1'000'000'000LL / std::max(1, options_.churn_per_second));
  auto next_steady = start;
  auto next_burst = start + burst_period;
  auto next_churn = start + churn_period;
  const auto rss_period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
      options_.rss_every_seconds > 0 ? options_.rss_every_seconds : options_.seconds + 1));
  auto next_rss = start + rss_period;
  while (Clock::now() < end) {
    const auto now = Clock::now();
    if (options_.rss_every_seconds > 0 && next_rss <= now) {
      report.rss_series.push_back({std::chrono::duration<double>(now - start).count(),
                                   per_service(static_cast<double>(resident() - rss_before))});
      next_rss += rss_period;
    }
    for (; next_steady <= now; next_steady += steady_period) {
      // No service (the budget refused every channel, or churn removed the
      // last one and the budget refused its replacement): nothing to send to.
      if (keys_.empty()) continue;
      const std::uint64_t key = keys_[random_() % keys_.size()];
      send_event(key, registry_.find(key)->second);
    }
    if (next_burst <= now) {  // a zone flaps: every service in it gets `capacity` events
      const std::uint64_t zone = random_() % static_cast<std::uint64_t>(options_.zones);
      for (auto& [key, route] : registry_) {
        if (key % static_cast<std::uint64_t>(options_.zones) != zone) continue;
        for (std::size_t i = 0; i < options_.capacity; ++i) send_event(key, route);
      }
      next_burst += burst_period;
      if (channel_registry_) walk_registry(report);  // while the burst is queued
    }
    if (options_.churn_per_second > 0 && next_churn <= now) {
      remove_random_service();
      add_service(next_key_++);
      next_churn += churn_period;
    }
    std::this_thread::sleep_until(
        std::min({next_steady, next_burst, next_churn, next_rss, end}));  // pacing
  }
  const double run_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::int64_t checker_cpu_ns = thread_cpu_ns() - checker_cpu_start;

  // Drain: wait (bounded: 30 s) until the workers have taken every event
  // that was sent; a shortfall is reported as lost.
  {
    std::unique_lock<std::mutex> lock(drain_mutex_);
    draining_.store(true, std::memory_order_seq_cst);
    drained_.wait_for(lock, std::chrono::seconds(30),
                      [this] { return received_.load(std::memory_order_seq_cst) >= sent_; });
    draining_.store(false, std::memory_order_relaxed);
  }
  report.heap_peak = per_service(static_cast<double>(
      leanchan::profiler::read_heap_counters().peak_requested_bytes - heap_base));
  report.heap_drained = per_service(static_cast<double>(probe.live_bytes()));
  report.rss_drained = per_service(static_cast<double>(resident() - rss_before));

  if (budget_) {
    report.budgeted = true;
    report.budget_limit = budget_->limit();
    report.budget = budget_->figures();
  }
  report.refused_budget = refused_budget_;
  report.services_refused_budget = services_refused_budget_;

  // Shutdown: every service goes (its worker frees it), then the workers.
  registry_.clear();
  Histogram latency;
  std::int64_t workers_cpu_ns = 0;
  for (auto& worker : workers_) {
    { auto close_inbox = std::move(worker->inbox.first); }
    worker->thread.join();
    latency.merge(worker->latency);
    workers_cpu_ns += worker->cpu_ns;
  }
  report.sent = sent_;
  report.refused = refused_;
  report.received = received_.load();
  report.lost = lost_.load() + (sent_ > report.received ? sent_ - report.received : 0);
  report.duplicated = duplicated_.load();
  report.services_added = added_;
  report.services_removed = removed_;
  report.events_per_second = static_cast<double>(report.received) / run_seconds;
  report.p50_us = latency.percentile(0.50) / 1000.0;
  report.p99_us = latency.percentile(0.99) / 1000.0;
  report.p999_us = latency.percentile(0.999) / 1000.0;
  const auto per = [](std::int64_t ns, std::uint64_t events) {
    return events == 0 ? 0.0 : static_cast<double>(ns) / static_cast<double>(events);
  };
  report.checker_cpu_ns_per_event = per(checker_cpu_ns, report.sent);
  report.workers_cpu_ns_per_event = per(workers_cpu_ns, report.received);
  for (const auto& worker : workers_) {
    report.worker_cpu_ns_per_event.push_back(per(worker->cpu_ns, report.received));
  }
  return report;
}

}  // namespace

Report run_leanchan(const Options& options) {
  return Scenario<Leanchan>(options).run();
}
Report run_tokio_style(const Options& options) {
  return Scenario<TokioStyle>(options).run();
}

}  // namespace proxy
