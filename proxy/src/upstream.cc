// SPDX-License-Identifier: MIT
#include "upstream.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <utility>

namespace proxy {
namespace beast = boost::beast;
namespace http = beast::http;

namespace {
constexpr std::size_t kMaxIdlePerEndpoint = 256;
constexpr std::uint64_t kMaxResponseBody = 16 * 1024 * 1024;
}  // namespace

struct UpstreamPool::Impl {
  net::any_io_executor executor;
  std::vector<tcp::endpoint> endpoints;
  std::chrono::milliseconds timeout;
  std::vector<std::vector<std::unique_ptr<beast::tcp_stream>>> idle;  // per endpoint
};

UpstreamPool::UpstreamPool(const net::any_io_executor& executor,
                           std::vector<tcp::endpoint> endpoints, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->executor = executor;
  impl_->idle.resize(endpoints.size());
  impl_->endpoints = std::move(endpoints);
  impl_->timeout = timeout;
}

UpstreamPool::~UpstreamPool() = default;

void UpstreamPool::clear() {
  for (auto& list : impl_->idle) list.clear();
}

net::awaitable<std::optional<UpstreamResponse>> UpstreamPool::get(std::size_t endpoint,
                                                                  std::string_view target) {
  Impl& impl = *impl_;
  // A pooled connection the backend closed meanwhile fails on first use
  // without any response byte: then once more on a fresh one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<beast::tcp_stream> stream;
    auto& idle = impl.idle[endpoint];
    const bool pooled = !idle.empty() && attempt == 0;
    if (pooled) {
      stream = std::move(idle.back());
      idle.pop_back();
    } else {
      stream = std::make_unique<beast::tcp_stream>(impl.executor);
    }
    // One deadline for connect + request + response.
    stream->expires_after(impl.timeout);
    if (!pooled) {
      auto [error] = co_await stream->async_connect(impl.endpoints[endpoint], kTuple);
      if (error) co_return std::nullopt;
      stream->socket().set_option(tcp::no_delay(true), error);
    }
    http::request<http::empty_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "backend");
    request.keep_alive(true);
    auto [write_error, written] = co_await http::async_write(*stream, request, kTuple);
    (void)written;
    if (write_error) {
      if (pooled) continue;
      co_return std::nullopt;
    }
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBody);
    auto [read_error, read] = co_await http::async_read(*stream, buffer, parser, kTuple);
    if (read_error) {
      const bool stale = read == 0 && read_error != beast::error::timeout;
      if (pooled && stale) continue;
      co_return std::nullopt;
    }
    auto& message = parser.get();
    UpstreamResponse response;
    response.status = message.result_int();
    response.x_endpoint = std::string(message["X-Endpoint"]);
    response.x_path = std::string(message["X-Path"]);
    response.body = std::move(message.body());
    if (message.keep_alive() && buffer.size() == 0 && idle.size() < kMaxIdlePerEndpoint) {
      stream->expires_never();
      idle.push_back(std::move(stream));
    }
    co_return response;
  }
  co_return std::nullopt;
}

}  // namespace proxy
