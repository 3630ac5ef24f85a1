// SPDX-License-Identifier: MIT
#include "services.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "designs.h"
#include "leanchan/channel.h"
#include "leanchan/profiler/heap_probe.h"
#include "leanchan/ready_set.h"

namespace leanchan::report {
namespace {

// What a program keeps per channel that a ReadySet serves (as in
// leanchan/ready_set.h's example): the entry first, so that it outlives the
// receiver, which detaches it when destroyed.
template <std::size_t S>
struct ReadyService {
  using T = Message<S>;
  ReadyService(ReadySet& set, std::pair<Sender<T>, Receiver<T>> ends)
      : entry(set, this), tx(std::move(ends.first)), rx(std::move(ends.second)) {}
  ReadyEntry entry;
  Sender<T> tx;
  Receiver<T> rx;
};

constexpr std::int64_t kReadyServiceBytes =
    sizeof(ReadyEntry) + sizeof(Sender<Message<24>>) + sizeof(Receiver<Message<24>>);
// Sender and Receiver hold no T: the same bytes for every message size.
static_assert(sizeof(ReadyService<8>) == kReadyServiceBytes &&
              sizeof(ReadyService<1024>) == kReadyServiceBytes);

template <std::size_t S>
ServiceRow measure_ready_set(std::size_t capacity) {
  using T = Message<S>;
  ReadySet set;  // shared by every service, made before counting
  std::vector<std::unique_ptr<ReadyService<S>>> services;
  services.reserve(kServicesPerRow);
  std::int64_t idle = 0, fill = 0, drain = 0;
  {
    profiler::HeapProbe probe;
    for (std::size_t i = 0; i < kServicesPerRow; ++i) {
      services.push_back(std::make_unique<ReadyService<S>>(set, leanchan::channel<T>(capacity)));
      services.back()->entry.watch(services.back()->rx);
    }
    idle = probe.live_bytes();
    for (auto& service : services) {
      for (std::size_t m = 0; m < capacity; ++m) (void)service->tx.try_send(T{});
    }
    fill = probe.live_bytes();
    // The loop's visit: receive until empty, then re-arm (true: look again).
    set.drain([](ReadyEntry& entry) {
      auto* service = static_cast<ReadyService<S>*>(entry.user());
      for (;;) {
        PollResult<T> result = service->rx.poll_recv();
        if (result.ok()) continue;
        if (result.status() == PollStatus::kDisconnected || !service->rx.arm_notifier()) break;
      }
    });
    drain = probe.live_bytes();
  }
  services.clear();  // before the set (~ReadySet checks)
  const Prediction channel = leanchan_prediction(S, default_block_size<T>, capacity);
  return per_service_row("ReadySet", S, capacity, kServicesPerRow, idle, fill, drain,
                         {channel.create + kReadyServiceBytes, channel.fill + kReadyServiceBytes,
                          channel.drain + kReadyServiceBytes});
}

}  // namespace

Service ready_set_service() {
  Service service;
  service.name = "ReadySet";
  service.holds = "a ReadyEntry, the Sender and the Receiver, the receive notifier armed";
  service.formulas = absl::StrCat(
      "+ ", sizeof(ReadyEntry), " (ReadyEntry) + ", sizeof(Sender<Message<24>>), " (Sender) + ",
      sizeof(Receiver<Message<24>>), " (Receiver) = + ", kReadyServiceBytes, " in every column");
  service.measure = [](std::size_t message_bytes, std::size_t capacity) {
    switch (message_bytes) {
      case 8: return measure_ready_set<8>(capacity);
      case 24: return measure_ready_set<24>(capacity);
      case 128: return measure_ready_set<128>(capacity);
      case 250: return measure_ready_set<250>(capacity);
      default: return measure_ready_set<1024>(capacity);
    }
  };
  return service;
}

const std::vector<Service>& all_services() {
  static const std::vector<Service> services = [] {
    std::vector<Service> list;
    list.push_back(ready_set_service());
#if LEANCHAN_REPORT_HAVE_ASIO
    list.push_back(asio_service());
#endif
    return list;
  }();
  return services;
}

}  // namespace leanchan::report
