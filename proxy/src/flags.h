// SPDX-License-Identifier: MIT
// The proxy's command line: the flags the C++ and Rust proxies share
// (usage() in flags.cc lists them).
#ifndef LEANCHAN_PROXY_FLAGS_H_
#define LEANCHAN_PROXY_FLAGS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace proxy {

enum class ChannelKind { kLeanchan, kTokioStyle, kAsio };

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

struct Config {
  HostPort listen{"127.0.0.1", 0};
  std::vector<HostPort> backends;
  std::size_t services = 10000;
  ChannelKind channel = ChannelKind::kLeanchan;
  std::size_t threads = 1;
  std::chrono::milliseconds probe_interval{1000};    // 0: no probing
  std::chrono::milliseconds upstream_timeout{2000};  // connect + response
  std::chrono::milliseconds header_timeout{5000};    // a whole request head
  std::chrono::milliseconds idle_timeout{0};         // 0: forever
};

const char* channel_name(ChannelKind kind) noexcept;

// Parses argv. On --help prints the usage to stdout and exits 0; on a bad
// or unknown flag, a bad value or a stray argument prints one line naming
// it to stderr and exits 2.
Config parse_flags(int argc, char** argv);

}  // namespace proxy

#endif  // LEANCHAN_PROXY_FLAGS_H_
