// SPDX-License-Identifier: MIT
// The proxy's two message types: HealthEvent, carried by each service's
// health channel, and Request, carried by each client connection's
// dispatch channel; and Response, what the writing side sends back.
#ifndef LEANCHAN_PROXY_MESSAGES_H_
#define LEANCHAN_PROXY_MESSAGES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace proxy {

// Endpoints are indexed 0..kMaxEndpoints-1; a service's up set is a bit mask.
inline constexpr std::size_t kMaxEndpoints = 32;

class FlapBatch;

// One change of one endpoint's state for one service. `batch`, when not
// null, is told once the event has been applied (FlapBatch outlives every
// event that names it: /admin/flap answers only once all were applied).
struct HealthEvent {
  std::uint32_t endpoint = 0;
  bool up = true;
  float weight = 1.0F;
  FlapBatch* batch = nullptr;
};
static_assert(sizeof(HealthEvent) == 24);

// A parsed client request, classified by the reading side. Fixed size: the
// target travels inline (a longer target is classified kTooLong).
struct Request {
  enum class Kind : std::uint8_t {
    kService,           // GET /svc/<id>/...: forwarded to a backend
    kStats,             // GET /admin/stats
    kFlap,              // POST /admin/flap?...
    kNotFound,          // 404
    kMethodNotAllowed,  // 405
    kBadRequest,        // 400, then the connection closes
    kTooLong,           // 414: the target does not fit in `target`
    kEnd,               // no request: the reading side has ended (asio design)
  };
  static constexpr std::size_t kMaxTarget = 240;

  Kind kind = Kind::kEnd;
  bool keep_alive = false;
  std::uint8_t target_size = 0;
  std::uint32_t service = 0;
  char target[kMaxTarget];

  std::string_view target_view() const noexcept { return {target, target_size}; }
};
static_assert(sizeof(Request) <= 256);

// A response to a client; the writing side adds Content-Length and the
// Connection header.
struct Response {
  unsigned status = 200;
  bool keep_alive = true;
  std::string_view content_type = "text/plain";
  std::string x_endpoint;  // empty: no X-Endpoint header
  std::string x_path;      // empty: no X-Path header
  std::string body;
};

}  // namespace proxy

#endif  // LEANCHAN_PROXY_MESSAGES_H_
