// SPDX-License-Identifier: MIT
#include "admin.h"

#include <charconv>
#include <cstdio>

#include "leanchan/profiler/heap_counters.h"
#include "leanchan/profiler/resident_memory.h"

namespace proxy {

std::string stats_json(const Stats& stats) {
  char line[512];
  const int size = std::snprintf(
      line, sizeof(line),
      "{\"channel\":\"%.*s\",\"services\":%zu,\"connections\":%llu,\"requests\":%llu,"
      "\"heap_requested_bytes\":%lld,\"heap_per_service\":%.1f,\"rss_bytes\":%llu,"
      "\"health_events\":%llu,\"service_entry_bytes\":%zu}",
      static_cast<int>(stats.channel.size()), stats.channel.data(), stats.services,
      static_cast<unsigned long long>(stats.connections),
      static_cast<unsigned long long>(stats.requests),
      static_cast<long long>(stats.heap_requested_bytes), stats.heap_per_service,
      static_cast<unsigned long long>(stats.rss_bytes),
      static_cast<unsigned long long>(stats.health_events), stats.service_entry_bytes);
  return std::string(line, size > 0 ? static_cast<std::size_t>(size) : 0);
}

std::int64_t heap_requested_bytes() noexcept {
  return leanchan::profiler::read_heap_counters().live_requested_bytes;
}

std::uint64_t rss_bytes() noexcept {
  return leanchan::profiler::resident_bytes().value_or(0);
}

namespace {
bool parse_size(std::string_view text, std::size_t& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}
}  // namespace

std::optional<FlapParams> parse_flap(std::string_view target, std::size_t services,
                                     std::size_t endpoints) {
  const std::size_t question = target.find('?');
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(question + 1);
  FlapParams params;
  unsigned seen = 0;  // a bit per parameter
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string_view key = pair.substr(0, equals);
    const std::string_view value = pair.substr(equals + 1);
    unsigned bit = 0;
    bool ok = true;
    if (key == "first") {
      bit = 1;
      ok = parse_size(value, params.first);
    } else if (key == "count") {
      bit = 2;
      ok = parse_size(value, params.count);
    } else if (key == "endpoint") {
      bit = 4;
      ok = parse_size(value, params.endpoint);
    } else if (key == "state") {
      bit = 8;
      ok = value == "up" || value == "down";
      params.up = value == "up";
    } else {
      return std::nullopt;
    }
    if (!ok || (seen & bit) != 0) return std::nullopt;
    seen |= bit;
  }
  if (seen != 15 || params.first > services || params.count > services - params.first ||
      params.endpoint >= endpoints) {
    return std::nullopt;
  }
  return params;
}

}  // namespace proxy
