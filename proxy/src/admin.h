// SPDX-License-Identifier: MIT
// The admin protocol: /admin/stats's JSON line and /admin/flap's query.
#ifndef LEANCHAN_PROXY_ADMIN_H_
#define LEANCHAN_PROXY_ADMIN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace proxy {

struct Stats {
  std::string_view channel;
  std::size_t services = 0;
  std::uint64_t connections = 0;
  std::uint64_t requests = 0;
  std::int64_t heap_requested_bytes = 0;
  double heap_per_service = 0;
  std::size_t service_entry_bytes = 0;  // the table's own bytes per service
  std::uint64_t rss_bytes = 0;
  std::uint64_t health_events = 0;
};

// One JSON object on one line (no newline), the contract's field order.
std::string stats_json(const Stats& stats);

// The process's figures for Stats: the counting hook's live requested
// bytes and the resident set size (0 if unreadable).
std::int64_t heap_requested_bytes() noexcept;
std::uint64_t rss_bytes() noexcept;

struct FlapParams {
  std::size_t first = 0;
  std::size_t count = 0;
  std::size_t endpoint = 0;
  bool up = false;
};

// Parses "/admin/flap?first=A&count=N&endpoint=J&state=down|up": every
// parameter present once, A + N <= services, J < endpoints; nullopt if not.
std::optional<FlapParams> parse_flap(std::string_view target, std::size_t services,
                                     std::size_t endpoints);

}  // namespace proxy

#endif  // LEANCHAN_PROXY_ADMIN_H_
