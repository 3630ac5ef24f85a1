// SPDX-License-Identifier: MIT
#include "http_server.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

namespace proxy {
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr std::uint64_t kMaxRequestBody = 64 * 1024;

// "/svc/<id>/..." or "/svc/<id>": the id, if a number below `services`.
std::optional<std::uint32_t> service_id(std::string_view path, std::size_t services) {
  std::string_view rest = path.substr(5);  // after "/svc/"
  const std::size_t slash = rest.find('/');
  const std::string_view digits = rest.substr(0, slash);
  std::uint64_t id = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
      id >= services) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(id);
}

void classify(const http::request<http::string_body>& message, std::size_t services, Request& out) {
  const std::string_view target = message.target();
  out.keep_alive = message.keep_alive();
  out.service = 0;
  if (target.size() > Request::kMaxTarget) {
    out.kind = Request::Kind::kTooLong;
    out.target_size = 0;
    return;
  }
  std::memcpy(out.target, target.data(), target.size());
  out.target_size = static_cast<std::uint8_t>(target.size());
  const std::string_view path = target.substr(0, target.find('?'));
  const http::verb method = message.method();
  if (path.substr(0, 5) == "/svc/") {
    if (method != http::verb::get) {
      out.kind = Request::Kind::kMethodNotAllowed;
    } else if (auto id = service_id(path, services)) {
      out.kind = Request::Kind::kService;
      out.service = *id;
    } else {
      out.kind = Request::Kind::kNotFound;
    }
  } else if (path == "/admin/stats") {
    out.kind = method == http::verb::get ? Request::Kind::kStats : Request::Kind::kMethodNotAllowed;
  } else if (path == "/admin/flap") {
    out.kind = method == http::verb::post ? Request::Kind::kFlap : Request::Kind::kMethodNotAllowed;
  } else {
    out.kind = Request::Kind::kNotFound;
  }
}

}  // namespace

struct ClientReader::Impl {
  std::size_t services;
  beast::flat_buffer buffer;
};

ClientReader::ClientReader(std::size_t services) : impl_(std::make_unique<Impl>()) {
  impl_->services = services;
}
ClientReader::~ClientReader() = default;

bool ClientReader::has_buffered() const noexcept {
  return impl_->buffer.size() != 0;
}

net::awaitable<ClientReader::Outcome> ClientReader::read(tcp::socket& socket, Request& out) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(kMaxRequestBody);
  auto [error, bytes] = co_await http::async_read(socket, impl_->buffer, parser, kTuple);
  (void)bytes;
  if (error) {
    // A parse error is Beast's http category; the peer closing between or
    // inside requests, or a socket error, is not malformed input.
    const bool parse_error =
        error.category() == http::make_error_code(http::error::bad_target).category() &&
        error != http::error::end_of_stream && error != http::error::partial_message;
    co_return parse_error ? Outcome::kMalformed : Outcome::kEnd;
  }
  classify(parser.get(), impl_->services, out);
  co_return Outcome::kRequest;
}

net::awaitable<bool> write_response(tcp::socket& socket, Response&& response) {
  http::response<http::string_body> message{static_cast<http::status>(response.status), 11};
  message.set(http::field::content_type, response.content_type);
  if (!response.x_endpoint.empty()) message.set("X-Endpoint", response.x_endpoint);
  if (!response.x_path.empty()) message.set("X-Path", response.x_path);
  message.body() = std::move(response.body);
  message.keep_alive(response.keep_alive);
  message.prepare_payload();
  auto [error, bytes] = co_await http::async_write(socket, message, kTuple);
  (void)bytes;
  co_return !error;
}

}  // namespace proxy
