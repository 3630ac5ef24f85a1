// SPDX-License-Identifier: MIT
#include "proxy.h"

#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "channels.h"
#include "command_line.h"
#include "dispatch.h"
#include "health.h"
#include "leanchan/profiler/heap_counters.h"

namespace proxy {
namespace {

using WorkGuard = net::executor_work_guard<net::io_context::executor_type>;

tcp::endpoint resolve(const char* flag, const HostPort& address) {
  error_code error;
  const auto ip = net::ip::make_address(address.host, error);
  if (error)
    flag_error("leanchan-proxy", flag, "bad address '" + address.host + "' (an IP address)");
  return tcp::endpoint(ip, address.port);
}

// Accepts on the first worker, hands each connection to the next worker in
// turn (its coroutines run there).
template <class Policy>
net::awaitable<void> accept_loop(tcp::acceptor& acceptor, ProxyState& state,
                                 ServiceTable<Policy>& table,
                                 std::vector<std::unique_ptr<Worker>>& workers) {
  std::size_t next = 0;
  net::steady_timer pause(acceptor.get_executor());
  while (!state.stopping.load(std::memory_order_relaxed)) {
    Worker& worker = *workers[next];
    next = (next + 1) % workers.size();
    auto [error, socket] = co_await acceptor.async_accept(worker.context, kTuple);
    if (error) {
      if (error == net::error::operation_aborted || !acceptor.is_open()) co_return;
      // Out of descriptors or similar: try again a little later.
      pause.expires_after(std::chrono::milliseconds(10));
      (void)co_await pause.async_wait(kTuple);
      continue;
    }
    net::post(worker.context, [&state, &table, &worker, socket = std::move(socket)]() mutable {
      auto connection =
          std::make_shared<Connection<Policy>>(state, table, worker, std::move(socket));
      Connection<Policy>::start(connection);
    });
  }
}

// After a stop signal: waits until every connection closed (each answers
// what it read, then closes) or the grace period passed, then stops the
// workers.
net::awaitable<void> wait_and_stop(ProxyState& state, std::vector<std::unique_ptr<Worker>>& workers,
                                   std::vector<WorkGuard>& guards) {
  const auto deadline = std::chrono::steady_clock::now() + state.config.upstream_timeout +
                        std::chrono::milliseconds(500);
  net::steady_timer timer(co_await net::this_coro::executor);
  while (state.connections.load(std::memory_order_relaxed) != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    timer.expires_after(std::chrono::milliseconds(5));
    (void)co_await timer.async_wait(kTuple);
  }
  guards.clear();
  for (auto& worker : workers) worker->context.stop();
}

}  // namespace

template <class Policy>
int run_proxy(const Config& config) {
  std::vector<tcp::endpoint> endpoints;
  for (const HostPort& backend : config.backends)
    endpoints.push_back(resolve("--backends", backend));
  const tcp::endpoint listen_at = resolve("--listen", config.listen);

  ProxyState state;
  state.config = config;
  state.channel = Policy::kName;

  // Destroyed last: the frames the contexts own refer to the state above.
  std::vector<std::unique_ptr<Worker>> workers;
  for (std::size_t i = 0; i < config.threads; ++i) {
    workers.push_back(std::make_unique<Worker>(endpoints, config.upstream_timeout));
  }
  net::io_context& main_context = workers[0]->context;
  std::vector<WorkGuard> guards;
  for (auto& worker : workers) guards.push_back(net::make_work_guard(worker->context));

  // The service table's cost: the S services with their health channels
  // and their drain registration.
  const std::int64_t heap_before = leanchan::profiler::read_heap_counters().live_requested_bytes;
  auto table = std::make_unique<ServiceTable<Policy>>(main_context, config.services,
                                                      endpoints.size(), state.health);
  const std::int64_t heap_after = leanchan::profiler::read_heap_counters().live_requested_bytes;
  state.heap_per_service =
      static_cast<double>(heap_after - heap_before) / static_cast<double>(config.services);

  auto acceptor = std::make_unique<tcp::acceptor>(main_context);
  error_code error;
  acceptor->open(listen_at.protocol(), error);
  if (!error) acceptor->set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor->bind(listen_at, error);
  if (!error) acceptor->listen(net::socket_base::max_listen_connections, error);
  if (error) {
    std::fprintf(stderr, "leanchan-proxy: --listen: cannot listen on %s:%u: %s\n",
                 config.listen.host.c_str(), static_cast<unsigned>(config.listen.port),
                 error.message().c_str());
    return 2;
  }

  auto signals = std::make_unique<net::signal_set>(main_context, SIGINT, SIGTERM);
  signals->async_wait([&](error_code signal_error, int) {
    if (signal_error) return;
    state.stopping.store(true);
    error_code ignored;
    acceptor->close(ignored);
    for (auto& worker : workers) {
      net::post(worker->context, [&worker = *worker] {
        worker.pool.clear();
        // on_stop may close a connection, which leaves the set later (its
        // coroutines end on this thread after this loop).
        for (ConnectionBase* connection : worker.connections) connection->on_stop();
      });
    }
    net::co_spawn(main_context, wait_and_stop(state, workers, guards), net::detached);
  });

  net::co_spawn(main_context, accept_loop<Policy>(*acceptor, state, *table, workers),
                net::detached);
  if (config.probe_interval.count() > 0) {
    net::co_spawn(main_context,
                  run_checker<Policy>(*table, endpoints, config.probe_interval,
                                      config.upstream_timeout, state.stopping),
                  net::detached);
  }

  std::printf("ready port=%u\n", static_cast<unsigned>(acceptor->local_endpoint().port()));
  std::fflush(stdout);

  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < workers.size(); ++i) {
    threads.emplace_back([&worker = *workers[i]] { worker.context.run(); });
  }
  main_context.run();
  for (std::thread& thread : threads) thread.join();

  // Every thread stopped: no sender or drain runs. The table, the acceptor
  // and the signal set go before the contexts they use.
  table.reset();
  signals.reset();
  acceptor.reset();
  workers.clear();
  return 0;
}

template int run_proxy<Leanchan>(const Config&);
template int run_proxy<TokioStyle>(const Config&);
template int run_proxy<Asio>(const Config&);

}  // namespace proxy
