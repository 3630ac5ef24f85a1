// SPDX-License-Identifier: MIT
// leanchan-proxy: parses the flags and runs the proxy on the channel
// design --channel names.
#include <cstdio>
#include <exception>

#include "flags.h"
#include "proxy.h"

int main(int argc, char** argv) {
  const proxy::Config config = proxy::parse_flags(argc, argv);
  try {
    switch (config.channel) {
      case proxy::ChannelKind::kLeanchan: return proxy::run_proxy<proxy::Leanchan>(config);
      case proxy::ChannelKind::kTokioStyle: return proxy::run_proxy<proxy::TokioStyle>(config);
      case proxy::ChannelKind::kAsio: return proxy::run_proxy<proxy::Asio>(config);
    }
  } catch (const std::exception& error) {
    // Start-up failures (the service table's allocation, the ReadySet's
    // eventfd, a thread that cannot start).
    std::fprintf(stderr, "leanchan-proxy: %s\n", error.what());
    return 1;
  }
  return 2;
}
