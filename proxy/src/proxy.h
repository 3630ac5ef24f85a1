// SPDX-License-Identifier: MIT
// The proxy, generic over its channel design (channels.h), instantiated
// once per design in proxy.cc.
#ifndef LEANCHAN_PROXY_PROXY_H_
#define LEANCHAN_PROXY_PROXY_H_

#include "flags.h"

namespace proxy {

// The channel designs (channels.h).
struct Leanchan;
struct TokioStyle;
struct Asio;

// Runs the proxy until SIGTERM or SIGINT; returns the exit status.
template <class Policy>
int run_proxy(const Config& config);

}  // namespace proxy

#endif  // LEANCHAN_PROXY_PROXY_H_
