// SPDX-License-Identifier: MIT
// The service table: S services, each with its endpoints' up set and a
// health channel (capacity 16) drained on the proxy's first io_context;
// the senders into it (the active checker, /admin/flap) and FlapBatch, which
// tells /admin/flap when every event it sent was applied.
#ifndef LEANCHAN_PROXY_HEALTH_H_
#define LEANCHAN_PROXY_HEALTH_H_

#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "channels.h"
#include "messages.h"
#include "net.h"

namespace proxy {

// Counts the events of one /admin/flap down to zero, on the drain's thread,
// then wakes the flap's coroutine on its own executor. Lives in that
// coroutine's frame, which waits in wait() until the count reached zero.
class FlapBatch {
 public:
  FlapBatch(const net::any_io_executor& executor, std::size_t events)
      : events_(events), remaining_(events), done_(executor) {}
  // acq_rel: the last decrement sees every earlier event applied, and its
  // notify() carries that to wait() through the post.
  void applied() {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify();
  }
  // Returns once the notify() of the last applied() has run here: never on
  // the count alone, which reaches zero before that notify() is done with
  // this object (the batch goes when wait() returns).
  net::awaitable<void> wait() {
    if (events_ != 0) co_await done_.wait();
  }

 private:
  const std::size_t events_;
  std::atomic<std::size_t> remaining_;
  Wakeup done_;
};

// Per-process counters the health side keeps.
struct HealthCounters {
  std::atomic<std::uint64_t> events{0};  // drained and applied
};

template <class Policy>
class ServiceTable {
 public:
  // Builds `count` services with all `endpoints` up, their channels drained
  // on `drain_context` once start() ran.
  ServiceTable(net::io_context& drain_context, std::size_t count, std::size_t endpoints,
               HealthCounters& counters)
      : hub_(drain_context, &ServiceTable::apply, &ServiceTable::visit),
        count_(count),
        endpoints_(endpoints) {
    events_ = &counters.events;
    services_ = static_cast<Service*>(::operator new(sizeof(Service) * count));
    const std::uint32_t all = endpoints >= 32 ? ~0U : (1U << endpoints) - 1;
    try {
      for (; built_ < count; ++built_) new (&services_[built_]) Service(hub_, all);
    } catch (...) {
      destroy();
      throw;
    }
    for (std::size_t i = 0; i < count; ++i) services_[i].slot.start();
    hub_.start();
  }
  ServiceTable(const ServiceTable&) = delete;
  ServiceTable& operator=(const ServiceTable&) = delete;
  // After the io_contexts stopped: no sender or drain runs any more.
  ~ServiceTable() {
    hub_.quiesce();
    destroy();
  }

  std::size_t size() const noexcept { return count_; }
  // What the table itself holds per service (its up set and the design's
  // slot: the channel's handles and its drain registration), beside what
  // the channel allocates.
  static constexpr std::size_t entry_bytes() noexcept { return sizeof(Service); }
  std::size_t endpoints() const noexcept { return endpoints_; }

  // An up endpoint of `service`, round-robin per thread; nullopt if none.
  std::optional<std::size_t> pick(std::size_t service) const noexcept {
    const std::uint32_t up = services_[service].up.load(std::memory_order_acquire);
    if (up == 0) return std::nullopt;
    thread_local std::uint32_t turn = 0;
    unsigned skip = turn++ % static_cast<unsigned>(std::popcount(up));
    std::uint32_t rest = up;
    while (skip-- > 0) rest &= rest - 1;
    return static_cast<std::size_t>(std::countr_zero(rest));
  }

  // Sends `event` to services [first, first + count), waiting (on a short
  // timer) where a channel is full.
  net::awaitable<void> send(std::size_t first, std::size_t count, HealthEvent event) {
    auto executor = co_await net::this_coro::executor;
    net::steady_timer pause(executor);
    for (std::size_t i = first; i < first + count; ++i) {
      for (;;) {
        const TrySend sent = services_[i].slot.try_send(event);
        if (sent != TrySend::kFull) {
          if (sent == TrySend::kClosed && event.batch != nullptr) event.batch->applied();
          break;
        }
        pause.expires_after(std::chrono::milliseconds(1));
        (void)co_await pause.async_wait(kTuple);
      }
    }
  }

 private:
  struct Service {
    Service(typename Policy::HealthHub& hub, std::uint32_t all) : up(all), slot(hub, this) {}
    std::atomic<std::uint32_t> up;
    typename Policy::HealthSlot slot;
  };

  void destroy() noexcept {
    for (std::size_t i = built_; i > 0; --i) services_[i - 1].~Service();
    ::operator delete(services_);
  }

  // On the drain's thread.
  static void apply(void* user, const HealthEvent& event) {
    auto* service = static_cast<Service*>(user);
    const std::uint32_t bit = 1U << event.endpoint;
    if (event.up) {
      service->up.fetch_or(bit, std::memory_order_release);
    } else {
      service->up.fetch_and(~bit, std::memory_order_release);
    }
    events_->fetch_add(1, std::memory_order_relaxed);
    if (event.batch != nullptr) event.batch->applied();
  }
  static void visit(void* user) {
    if constexpr (requires(typename Policy::HealthSlot & slot) { slot.drain(&apply); }) {
      static_cast<Service*>(user)->slot.drain(&apply);
    }
  }

  // The process's one table of this design counts here (not per service:
  // a service costs only its up set and its slot).
  inline static std::atomic<std::uint64_t>* events_ = nullptr;

  typename Policy::HealthHub hub_;
  std::size_t count_;
  std::size_t endpoints_;
  Service* services_ = nullptr;
  std::size_t built_ = 0;
};

// The active checker: every `interval`, a TCP connect to each endpoint
// (bounded by `timeout`); a change of an endpoint's state is sent to every
// service. The first probe comes one interval after start.
template <class Policy>
net::awaitable<void> run_checker(ServiceTable<Policy>& table, std::vector<tcp::endpoint> endpoints,
                                 std::chrono::milliseconds interval,
                                 std::chrono::milliseconds timeout, const std::atomic<bool>& stop) {
  auto executor = co_await net::this_coro::executor;
  std::vector<bool> up(endpoints.size(), true);
  net::steady_timer timer(executor);
  while (!stop.load(std::memory_order_relaxed)) {
    timer.expires_after(interval);
    (void)co_await timer.async_wait(kTuple);
    for (std::size_t j = 0; j < endpoints.size() && !stop.load(std::memory_order_relaxed); ++j) {
      // Shared with the timer's handler, which may run after this probe.
      auto socket = std::make_shared<tcp::socket>(executor);
      net::steady_timer limit(executor, timeout);
      limit.async_wait([socket](error_code error) {
        if (!error) socket->close(error);
      });
      auto [error] = co_await socket->async_connect(endpoints[j], kTuple);
      const bool now_up = !error && socket->is_open();
      limit.cancel();
      error_code ignored;
      socket->close(ignored);
      if (now_up != up[j]) {
        up[j] = now_up;
        HealthEvent event;
        event.endpoint = static_cast<std::uint32_t>(j);
        event.up = now_up;
        co_await table.send(0, table.size(), event);
      }
    }
  }
}

}  // namespace proxy

#endif  // LEANCHAN_PROXY_HEALTH_H_
