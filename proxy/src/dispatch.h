// SPDX-License-Identifier: MIT
// One client connection: a reading coroutine that parses requests and
// sends them into the connection's dispatch channel (capacity 2), and a
// writing coroutine that receives them in order, answers each (forwarding
// /svc requests over the worker's upstream pool) and writes the responses
// back, so pipelined requests are answered in order. Both run on the
// connection's worker, one thread: the connection's state needs no lock.
#ifndef LEANCHAN_PROXY_DISPATCH_H_
#define LEANCHAN_PROXY_DISPATCH_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "admin.h"
#include "channels.h"
#include "flags.h"
#include "health.h"
#include "http_server.h"
#include "messages.h"
#include "net.h"
#include "upstream.h"

namespace proxy {

// What every connection of the process shares (lives until every worker
// is destroyed).
struct ProxyState {
  Config config;
  std::string_view channel;
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> connections{0};
  std::atomic<std::uint64_t> requests{0};
  HealthCounters health;
  double heap_per_service = 0;  // written before any worker runs
};

class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // On the connection's worker, once the proxy began to stop: closes the
  // connection if it is idle; otherwise it closes after its last answer.
  virtual void on_stop() = 0;
};

// One thread's io_context, its upstream pool and its connections.
struct Worker {
  Worker(const std::vector<tcp::endpoint>& endpoints, std::chrono::milliseconds timeout)
      : pool(context.get_executor(), endpoints, timeout) {}
  // Declared before the context: connections owned by coroutine frames
  // leave this set while the context's destructor destroys those frames.
  std::set<ConnectionBase*> connections;
  net::io_context context{1};
  UpstreamPool pool;  // destroyed before the context its sockets use
};

template <class Policy>
class Connection final : public ConnectionBase,
                         public std::enable_shared_from_this<Connection<Policy>> {
 public:
  Connection(ProxyState& state, ServiceTable<Policy>& table, Worker& worker, tcp::socket socket)
      : state_(state),
        table_(table),
        worker_(worker),
        socket_(std::move(socket)),
        dispatch_(socket_.get_executor()),
        reader_(table.size()),
        deadline_(socket_.get_executor()) {
    state_.connections.fetch_add(1, std::memory_order_relaxed);
    worker_.connections.insert(this);
  }
  ~Connection() override {
    worker_.connections.erase(this);
    state_.connections.fetch_sub(1, std::memory_order_relaxed);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  static void start(const std::shared_ptr<Connection>& self) {
    error_code ignored;
    self->socket_.set_option(tcp::no_delay(true), ignored);
    net::co_spawn(self->socket_.get_executor(), read_side(self), net::detached);
    net::co_spawn(self->socket_.get_executor(), write_side(self), net::detached);
  }

  void on_stop() override {
    if (!reader_idle_) return;  // it checks `stopping` after its request
    error_code ignored;
    if (in_flight_ == 0) {
      close_socket();
    } else {
      // Wakes the idle reader; the writer answers what is in flight.
      socket_.shutdown(tcp::socket::shutdown_receive, ignored);
    }
  }

 private:
  static net::awaitable<void> read_side(std::shared_ptr<Connection> self) {
    co_await self->read_requests();
    co_await finish_send(self->dispatch_);
  }
  static net::awaitable<void> write_side(std::shared_ptr<Connection> self) {
    const bool answered_all = co_await self->write_responses();
    self->dispatch_.finish_recv();
    if (answered_all) co_await self->linger();
    self->close_socket();
  }
  // After the last answer: half-closes, then reads and drops what the
  // client still sends until it closes or kLinger passes. Closing with
  // unread input would send a reset, which can destroy the answer just
  // written before the client reads it (after a 400, say). Only after the
  // writer answered all: it ended on the request the reader sent last, or
  // on the end of the channel, so the reader has ended and no read runs
  // beside this one.
  net::awaitable<void> linger() {
    error_code error;
    socket_.shutdown(tcp::socket::shutdown_send, error);
    if (error) co_return;
    arm_deadline(kLinger, /*idle=*/false);  // closes the socket when it passes
    char sink[4096];
    for (;;) {
      auto [read_error, bytes] = co_await socket_.async_read_some(net::buffer(sink), kTuple);
      (void)bytes;
      if (read_error) break;
    }
    disarm_deadline();
  }
  static constexpr std::chrono::milliseconds kLinger{1000};

  bool stopping() const noexcept { return state_.stopping.load(std::memory_order_relaxed); }

  net::awaitable<void> read_requests() {
    const Config& config = state_.config;
    for (;;) {
      if (!reader_.has_buffered()) {
        if (stopping()) co_return;
        reader_idle_ = true;
        if (config.idle_timeout.count() > 0) arm_deadline(config.idle_timeout, /*idle=*/true);
        auto [error] = co_await socket_.async_wait(tcp::socket::wait_read, kTuple);
        reader_idle_ = false;
        disarm_deadline();
        if (error || stopping()) co_return;
      }
      // From the first byte of a request, its whole head within the limit.
      arm_deadline(config.header_timeout, /*idle=*/false);
      Request request;
      const ClientReader::Outcome outcome = co_await reader_.read(socket_, request);
      disarm_deadline();
      if (outcome == ClientReader::Outcome::kEnd) co_return;
      if (outcome == ClientReader::Outcome::kMalformed) {
        request.kind = Request::Kind::kBadRequest;
        request.keep_alive = false;
        request.target_size = 0;
      }
      if (stopping()) request.keep_alive = false;
      ++in_flight_;
      if (!co_await dispatch_.send(request)) co_return;
      if (!request.keep_alive) co_return;
    }
  }

  // True once it answered the last request; false on a failed write.
  net::awaitable<bool> write_responses() {
    for (;;) {
      std::optional<Request> request = co_await dispatch_.recv();
      if (!request) co_return true;
      // Once the proxy stops, the reader marks the last request it reads
      // keep_alive = false; every request read before it is still answered.
      Response response = co_await answer(*request);
      response.keep_alive = request->keep_alive;
      // Counted before the write, so a client that read its response sees
      // it counted in /admin/stats.
      if (request->kind == Request::Kind::kService) {
        state_.requests.fetch_add(1, std::memory_order_relaxed);
      }
      const bool keep_alive = response.keep_alive;
      const bool written = co_await write_response(socket_, std::move(response));
      --in_flight_;
      if (!written) co_return false;
      if (!keep_alive) co_return true;
    }
  }

  static Response plain(unsigned status, std::string body) {
    Response response;
    response.status = status;
    response.body = std::move(body);
    return response;
  }

  net::awaitable<Response> answer(const Request& request) {
    switch (request.kind) {
      case Request::Kind::kService: co_return co_await forward(request);
      case Request::Kind::kStats: co_return stats();
      case Request::Kind::kFlap: co_return co_await flap(request);
      case Request::Kind::kNotFound: co_return plain(404, "not found\n");
      case Request::Kind::kMethodNotAllowed: co_return plain(405, "method not allowed\n");
      case Request::Kind::kTooLong: co_return plain(414, "target too long\n");
      case Request::Kind::kBadRequest:
      case Request::Kind::kEnd: break;
    }
    co_return plain(400, "bad request\n");
  }

  net::awaitable<Response> forward(const Request& request) {
    const std::optional<std::size_t> endpoint = table_.pick(request.service);
    if (!endpoint) co_return plain(503, "no endpoint up\n");
    std::optional<UpstreamResponse> upstream =
        co_await worker_.pool.get(*endpoint, request.target_view());
    if (!upstream) co_return plain(502, "bad gateway\n");
    Response response;
    response.status = upstream->status;
    response.x_endpoint = std::move(upstream->x_endpoint);
    response.x_path = std::move(upstream->x_path);
    response.body = std::move(upstream->body);
    co_return response;
  }

  Response stats() const {
    Stats stats;
    stats.channel = state_.channel;
    stats.services = table_.size();
    stats.connections = state_.connections.load(std::memory_order_relaxed);
    stats.requests = state_.requests.load(std::memory_order_relaxed);
    stats.heap_requested_bytes = heap_requested_bytes();
    stats.heap_per_service = state_.heap_per_service;
    stats.service_entry_bytes = table_.entry_bytes();
    stats.rss_bytes = rss_bytes();
    stats.health_events = state_.health.events.load(std::memory_order_relaxed);
    Response response = plain(200, stats_json(stats) + "\n");
    response.content_type = "application/json";
    return response;
  }

  net::awaitable<Response> flap(const Request& request) {
    const std::optional<FlapParams> params =
        parse_flap(request.target_view(), table_.size(), table_.endpoints());
    if (!params) co_return plain(400, "bad flap parameters\n");
    FlapBatch batch(socket_.get_executor(), params->count);
    HealthEvent event;
    event.endpoint = static_cast<std::uint32_t>(params->endpoint);
    event.up = params->up;
    event.batch = &batch;
    co_await table_.send(params->first, params->count, event);
    co_await batch.wait();  // every event applied: the batch may go
    co_return plain(200, "applied " + std::to_string(params->count));
  }

  // The deadline closes the connection when it expires (a generation tells
  // a stale expiry, already queued when disarmed, from the current one). An
  // idle deadline waits for the answers still in flight: it starts again.
  void arm_deadline(std::chrono::milliseconds after, bool idle) {
    const std::uint64_t generation = ++deadline_generation_;
    deadline_.expires_after(after);
    deadline_.async_wait(
        [weak = this->weak_from_this(), generation, after, idle](error_code error) {
          if (error) return;
          auto self = weak.lock();
          if (!self || self->deadline_generation_ != generation) return;
          if (idle && self->in_flight_ != 0) {
            self->arm_deadline(after, idle);
          } else {
            self->close_socket();
          }
        });
  }
  void disarm_deadline() {
    ++deadline_generation_;
    deadline_.cancel();
  }
  void close_socket() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  ProxyState& state_;
  ServiceTable<Policy>& table_;
  Worker& worker_;
  tcp::socket socket_;
  typename Policy::Dispatch dispatch_;
  ClientReader reader_;
  net::steady_timer deadline_;
  std::uint64_t deadline_generation_ = 0;
  std::size_t in_flight_ = 0;  // read and not yet answered
  bool reader_idle_ = false;   // the reader waits for a next request's first byte
};

}  // namespace proxy

#endif  // LEANCHAN_PROXY_DISPATCH_H_
