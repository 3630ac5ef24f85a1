// SPDX-License-Identifier: MIT
// The client side's HTTP: reading and classifying one request (Beast's
// parser) and writing one response. The connection logic that uses them
// (dispatch.h) sees no Beast type.
#ifndef LEANCHAN_PROXY_HTTP_SERVER_H_
#define LEANCHAN_PROXY_HTTP_SERVER_H_

#include <cstddef>
#include <memory>

#include "messages.h"
#include "net.h"

namespace proxy {

class ClientReader {
 public:
  enum class Outcome {
    kRequest,    // `out` holds the request (possibly kNotFound etc.)
    kMalformed,  // a parse error: answer 400 and close
    kEnd,        // the peer closed, or a read error: nothing to answer
  };

  explicit ClientReader(std::size_t services);
  ~ClientReader();
  ClientReader(const ClientReader&) = delete;
  ClientReader& operator=(const ClientReader&) = delete;

  // Whether bytes of a next request were already read (pipelining).
  bool has_buffered() const noexcept;
  // Reads the head (and any body) of one request from `socket`.
  net::awaitable<Outcome> read(tcp::socket& socket, Request& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes `response` with Content-Length and Connection headers; false on a
// write error. Takes the body over (no copy of it per answer).
net::awaitable<bool> write_response(tcp::socket& socket, Response&& response);

}  // namespace proxy

#endif  // LEANCHAN_PROXY_HTTP_SERVER_H_
