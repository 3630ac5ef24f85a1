// SPDX-License-Identifier: MIT
// The upstream side: a pool of keep-alive connections per endpoint, one pool
// per io_context (used from that io_context's thread only), and the
// forwarding of one GET through it.
#ifndef LEANCHAN_PROXY_UPSTREAM_H_
#define LEANCHAN_PROXY_UPSTREAM_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net.h"

namespace proxy {

struct UpstreamResponse {
  unsigned status = 0;
  std::string x_endpoint;
  std::string x_path;
  std::string body;
};

class UpstreamPool {
 public:
  UpstreamPool(const net::any_io_executor& executor, std::vector<tcp::endpoint> endpoints,
               std::chrono::milliseconds timeout);
  ~UpstreamPool();
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  // GET `target` from endpoint `endpoint` over a pooled connection (a fresh
  // one if none is idle, or if a pooled one turns out closed by the peer).
  // nullopt: connect error, timeout (connect + response beyond `timeout`),
  // reset or a malformed response: the client gets 502.
  net::awaitable<std::optional<UpstreamResponse>> get(std::size_t endpoint,
                                                      std::string_view target);
  // Closes every idle connection.
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace proxy

#endif  // LEANCHAN_PROXY_UPSTREAM_H_
