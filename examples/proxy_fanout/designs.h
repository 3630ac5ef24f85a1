// SPDX-License-Identifier: MIT
// The two channel designs the proxy scenario runs on, behind one shape:
// make(capacity), watch(rx, entry) to attach a ReadyEntry, arm(rx) after
// draining (true = something is there already), unwatch(rx).
#ifndef LEANCHAN_EXAMPLES_PROXY_FANOUT_DESIGNS_H_
#define LEANCHAN_EXAMPLES_PROXY_FANOUT_DESIGNS_H_

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <string_view>

#include "leanchan/channel.h"
#include "leanchan/channel_registry.h"
#include "leanchan/ready_set.h"
#include "tokio_style/channel.h"

namespace proxy {

// A health or eviction event for one upstream service: 24 bytes.
struct HealthEvent {
  std::uint64_t service_key;
  std::int64_t deadline_ns;  // sent_ns + kEventTtlNs
  float weight;              // NaN: no weight
  std::uint32_t sequence;    // per service, from 0, for the exactly-once check
};
static_assert(sizeof(HealthEvent) == 24);

inline constexpr std::int64_t kEventTtlNs = 30'000'000'000;

struct Leanchan {
  static constexpr std::string_view kName = "leanchan";
  using Tx = leanchan::Sender<HealthEvent>;
  using Rx = leanchan::Receiver<HealthEvent>;
  // Health events are small and rare: a drained service channel keeps no
  // block (Retention::kKeepNone), so an idle service costs 64 heap bytes.
  // `memory`: the services' shared budget, or null; `registry`: where the
  // service is listed under `key`, or null.
  static constexpr bool kTakesMemory = true;
  static auto make(std::size_t capacity, std::pmr::memory_resource* memory,
                   leanchan::ChannelRegistry* registry = nullptr, std::uint64_t key = 0) {
    return leanchan::channel<HealthEvent>(capacity, {.retention = leanchan::Retention::kKeepNone,
                                                     .memory = memory,
                                                     .registry = registry,
                                                     .registry_tag = key});
  }
  static void watch(Rx& rx, leanchan::ReadyEntry& entry) { entry.watch(rx); }
  static bool arm(Rx& rx) { return rx.arm_notifier(); }
  static void unwatch(Rx& rx) { rx.clear_notifier(); }
  // An event if one is there now, never waiting on a stalled sender;
  // `ended` once the channel has ended.
  static std::optional<HealthEvent> poll(Rx& rx, bool& ended) {
    auto result = rx.poll_recv();
    if (result.ok()) return std::move(result).value();
    ended = result.status() == leanchan::PollStatus::kDisconnected;
    return std::nullopt;
  }
};

struct TokioStyle {
  static constexpr std::string_view kName = "tokio-style";
  using Tx = tokio_style::Sender<HealthEvent>;
  using Rx = tokio_style::Receiver<HealthEvent>;
  static constexpr bool kTakesMemory = false;
  static auto make(std::size_t capacity, std::pmr::memory_resource*,
                   leanchan::ChannelRegistry* = nullptr, std::uint64_t = 0) {
    return tokio_style::channel<HealthEvent>(capacity);
  }
  static void watch(Rx& rx, leanchan::ReadyEntry& entry) {
    rx.set_notifier(&leanchan::ReadyEntry::on_ready, &entry);
    if (rx.arm_notifier()) leanchan::ReadyEntry::on_ready(&entry);
  }
  static bool arm(Rx& rx) { return rx.arm_notifier(); }
  static void unwatch(Rx& rx) { rx.disarm(); }
  // Its try_recv.
  static std::optional<HealthEvent> poll(Rx& rx, bool& ended) {
    auto result = rx.try_recv();
    if (result.ok()) return std::move(result).value();
    ended = result.status() == leanchan::RecvStatus::kDisconnected;
    return std::nullopt;
  }
};

}  // namespace proxy

#endif  // LEANCHAN_EXAMPLES_PROXY_FANOUT_DESIGNS_H_
