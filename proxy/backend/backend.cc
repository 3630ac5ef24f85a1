// SPDX-License-Identifier: MIT
// leanchan-proxy-backend: the backend the proxy is tested and measured
// against. Listens on E loopback ports; every response is 200 with
// X-Endpoint (the port's index), X-Path (the request target) and a fixed
// body of 'x', keep-alive as the client asks.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "command_line.h"

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
constexpr auto kTuple = net::as_tuple(net::use_awaitable);

struct Options {
  std::size_t endpoints = 2;
  std::string host = "127.0.0.1";
  std::size_t body_bytes = 64;
  std::chrono::milliseconds delay{0};
  std::size_t threads = 1;
};

[[noreturn]] void fail(std::string_view flag, std::string_view why) {
  proxy::flag_error("leanchan-proxy-backend", flag, why);
}

std::size_t parse_number(std::string_view flag, std::string_view value, std::size_t min,
                         std::size_t max) {
  return static_cast<std::size_t>(
      proxy::parse_flag_number("leanchan-proxy-backend", flag, value, min, max));
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(
          "usage: leanchan-proxy-backend [--endpoints=E] [--host=127.0.0.1] [--body-bytes=64]\n"
          "                              [--delay-ms=0] [--threads=1]\n"
          "Listens on E ports; prints 'ready ports=P1,P2,...'.\n",
          stdout);
      std::exit(0);
    }
    const std::size_t equals = arg.find('=');
    const std::string_view name = arg.substr(0, equals);
    if (arg.substr(0, 2) != "--") fail(arg, "unexpected argument");
    if (equals == std::string_view::npos) fail(name, "needs a value (--flag=value)");
    const std::string_view value = arg.substr(equals + 1);
    if (name == "--endpoints") {
      options.endpoints = parse_number(name, value, 1, 64);
    } else if (name == "--host") {
      options.host = std::string(value);
    } else if (name == "--body-bytes") {
      options.body_bytes = parse_number(name, value, 0, 64 * 1024 * 1024);
    } else if (name == "--delay-ms") {
      options.delay = std::chrono::milliseconds(parse_number(name, value, 0, 3'600'000));
    } else if (name == "--threads") {
      options.threads = parse_number(name, value, 1, 1024);
    } else {
      fail(name, "unknown flag");
    }
  }
  return options;
}

net::awaitable<void> serve(tcp::socket socket, std::size_t index, const Options& options,
                           const std::string& body) {
  beast::flat_buffer buffer;
  net::steady_timer delay(socket.get_executor());
  const std::string endpoint = std::to_string(index);
  for (;;) {
    http::request<http::string_body> request;
    auto [read_error, read] = co_await http::async_read(socket, buffer, request, kTuple);
    (void)read;
    if (read_error) break;
    if (options.delay.count() > 0) {
      delay.expires_after(options.delay);
      (void)co_await delay.async_wait(kTuple);
    }
    http::response<http::string_body> response{http::status::ok, request.version()};
    response.set(http::field::content_type, "text/plain");
    response.set("X-Endpoint", endpoint);
    response.set("X-Path", request.target());
    response.body() = body;
    response.keep_alive(request.keep_alive());
    response.prepare_payload();
    auto [write_error, written] = co_await http::async_write(socket, response, kTuple);
    (void)written;
    if (write_error || !response.keep_alive()) break;
  }
  error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
}

net::awaitable<void> accept(tcp::acceptor& acceptor, std::size_t index, const Options& options,
                            const std::string& body) {
  for (;;) {
    auto [error, socket] = co_await acceptor.async_accept(kTuple);
    if (error) {
      if (!acceptor.is_open()) co_return;
      continue;
    }
    net::co_spawn(acceptor.get_executor(), serve(std::move(socket), index, options, body),
                  net::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  error_code error;
  const auto address = net::ip::make_address(options.host, error);
  if (error) fail("--host", "bad address '" + options.host + "' (an IP address)");
  const std::string body(options.body_bytes, 'x');

  net::io_context context(static_cast<int>(options.threads));
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  std::string ports;
  for (std::size_t i = 0; i < options.endpoints; ++i) {
    auto acceptor = std::make_unique<tcp::acceptor>(context, tcp::endpoint(address, 0));
    if (!ports.empty()) ports += ',';
    ports += std::to_string(acceptor->local_endpoint().port());
    net::co_spawn(context, accept(*acceptor, i, options, body), net::detached);
    acceptors.push_back(std::move(acceptor));
  }
  net::signal_set signals(context, SIGINT, SIGTERM);
  signals.async_wait([&](error_code, int) { context.stop(); });
  std::printf("ready ports=%s\n", ports.c_str());
  std::fflush(stdout);

  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < options.threads; ++i) threads.emplace_back([&] { context.run(); });
  context.run();
  for (std::thread& thread : threads) thread.join();
  return 0;
}
