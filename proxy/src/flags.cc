// SPDX-License-Identifier: MIT
#include "flags.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "command_line.h"
#include "messages.h"

namespace proxy {
namespace {

constexpr const char* kUsage =
    "usage: leanchan-proxy [flags]\n"
    "An HTTP/1.1 reverse proxy whose health and dispatch channels are leanchan's,\n"
    "the Tokio-style baseline's or Boost.Asio's.\n"
    "Flags:\n"
    "  --listen=HOST:PORT           address to listen on (default 127.0.0.1:0; port 0 picks one)\n"
    "  --backends=HOST:PORT,...     the endpoints every service has (required, at most 32)\n"
    "  --services=S                 number of services (default 10000)\n"
    "  --channel=NAME               leanchan, tokio-style or asio (default leanchan)\n"
    "  --threads=N                  threads (default: hardware concurrency)\n"
    "  --probe-interval-ms=MS       active TCP health probe period, 0 = none (default 1000)\n"
    "  --upstream-timeout-ms=MS     upstream connect + response limit (default 2000)\n"
    "  --header-timeout-ms=MS       limit for a whole request head (default 5000)\n"
    "  --idle-timeout-ms=MS         idle client connection limit, 0 = none (default 0)\n"
    "  --help                       this text\n"
    "Prints 'ready port=P' once listening.\n";

[[noreturn]] void fail(std::string_view flag, std::string_view why) {
  flag_error("leanchan-proxy", flag, why);
}

std::uint64_t parse_number(std::string_view flag, std::string_view value, std::uint64_t min,
                           std::uint64_t max) {
  return static_cast<std::uint64_t>(parse_flag_number("leanchan-proxy", flag, value, min, max));
}

HostPort parse_host_port(std::string_view flag, std::string_view value) {
  const std::size_t colon = value.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    fail(flag, "bad address '" + std::string(value) + "' (HOST:PORT)");
  }
  HostPort result;
  result.host = std::string(value.substr(0, colon));
  const std::string_view port = value.substr(colon + 1);
  std::uint16_t number = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || error != std::errc() || end != port.data() + port.size()) {
    fail(flag, "bad port in '" + std::string(value) + "' (0 to 65535)");
  }
  result.port = number;
  return result;
}

std::chrono::milliseconds parse_ms(std::string_view flag, std::string_view value) {
  return std::chrono::milliseconds(parse_number(flag, value, 0, 86'400'000));
}

}  // namespace

const char* channel_name(ChannelKind kind) noexcept {
  switch (kind) {
    case ChannelKind::kLeanchan: return "leanchan";
    case ChannelKind::kTokioStyle: return "tokio-style";
    case ChannelKind::kAsio: return "asio";
  }
  return "?";
}

Config parse_flags(int argc, char** argv) {
  Config config;
  config.threads = std::max(1U, std::thread::hardware_concurrency());
  bool have_backends = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(std::fflush(stdout) == 0 ? 0 : 2);
    }
    if (arg.substr(0, 2) != "--") fail(arg, "unexpected argument");
    const std::size_t equals = arg.find('=');
    const std::string_view name = arg.substr(0, equals);
    if (equals == std::string_view::npos) {
      const bool known = name == "--listen" || name == "--backends" || name == "--services" ||
                         name == "--channel" || name == "--threads" ||
                         name == "--probe-interval-ms" || name == "--upstream-timeout-ms" ||
                         name == "--header-timeout-ms" || name == "--idle-timeout-ms";
      fail(name, known ? "needs a value (--flag=value)" : "unknown flag");
    }
    const std::string_view value = arg.substr(equals + 1);
    if (name == "--listen") {
      config.listen = parse_host_port(name, value);
    } else if (name == "--backends") {
      config.backends.clear();
      std::string_view rest = value;
      for (;;) {
        const std::size_t comma = rest.find(',');
        config.backends.push_back(parse_host_port(name, rest.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
      if (config.backends.size() > kMaxEndpoints) fail(name, "more than 32 endpoints");
      have_backends = true;
    } else if (name == "--services") {
      config.services = parse_number(name, value, 1, 10'000'000);
    } else if (name == "--channel") {
      if (value == "leanchan") {
        config.channel = ChannelKind::kLeanchan;
      } else if (value == "tokio-style") {
        config.channel = ChannelKind::kTokioStyle;
      } else if (value == "asio") {
        config.channel = ChannelKind::kAsio;
      } else {
        fail(name, "bad value '" + std::string(value) + "' (leanchan, tokio-style or asio)");
      }
    } else if (name == "--threads") {
      config.threads = parse_number(name, value, 1, 1024);
    } else if (name == "--probe-interval-ms") {
      config.probe_interval = parse_ms(name, value);
    } else if (name == "--upstream-timeout-ms") {
      config.upstream_timeout = parse_ms(name, value);
      if (config.upstream_timeout.count() == 0) fail(name, "bad value '0' (at least 1)");
    } else if (name == "--header-timeout-ms") {
      config.header_timeout = parse_ms(name, value);
      if (config.header_timeout.count() == 0) fail(name, "bad value '0' (at least 1)");
    } else if (name == "--idle-timeout-ms") {
      config.idle_timeout = parse_ms(name, value);
    } else {
      fail(name, "unknown flag");
    }
  }
  if (!have_backends) fail("--backends", "missing (the backend endpoints, HOST:PORT,...)");
  return config;
}

}  // namespace proxy
