// SPDX-License-Identifier: MIT
#include "services_asio.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "designs.h"
#include "leanchan/profiler/heap_probe.h"
#include "services.h"

namespace leanchan::report {
namespace {

namespace net = leanchan::asio::net;
using leanchan::asio::internal::StepGate;

// Sender, AsyncReceiver and the receive's operation hold no T: the same
// bytes for every message size.
constexpr std::size_t kObjectBytes =
    sizeof(Sender<Message<24>>) + sizeof(leanchan::asio::AsyncReceiver<Message<24>>);
static_assert(sizeof(AsioService<8>) == kObjectBytes && sizeof(AsioService<1024>) == kObjectBytes);
static_assert(sizeof(ReceiveOp<8>) == sizeof(ReceiveOp<1024>));

// Per service, whatever is queued: the object, its step gate (allocated once
// by the object) and the pending receive's operation.
constexpr std::int64_t kIdleBytes = static_cast<std::int64_t>(kObjectBytes + sizeof(StepGate)) +
                                    recycled_block_bytes(sizeof(ReceiveOp<24>));

template <std::size_t S>
ServiceRow measure_asio(std::size_t capacity, std::int64_t step) {
  using T = Message<S>;
  net::io_context io(1);
  const net::any_io_executor executor = io.get_executor();
  // The context's registry of leanchan::asio objects is made by the first
  // object, once per context: before counting.
  { AsioService<S> first(executor, leanchan::channel<T>(capacity)); }
  std::vector<std::unique_ptr<AsioService<S>>> services;
  services.reserve(kServicesPerRow);
  std::int64_t idle = 0, fill = 0, drain = 0;
  {
    profiler::HeapProbe probe;
    for (std::size_t i = 0; i < kServicesPerRow; ++i) {
      services.push_back(
          std::make_unique<AsioService<S>>(executor, leanchan::channel<T>(capacity)));
      services.back()->receive();  // from this thread, not an io thread: the heap
    }
    idle = probe.live_bytes();
    // The producer, on a thread that does not run the context: the first
    // message into each channel fires its notifier, which posts one step.
    for (auto& service : services) {
      for (std::size_t m = 0; m < capacity; ++m) (void)service->tx.try_send(T{});
    }
    fill = probe.live_bytes();
    // The server: this thread runs every step and completion until each
    // service has taken its messages and waits again.
    io.poll();
    drain = probe.live_bytes();
  }
  services.clear();  // the pending receives are destroyed, their handlers uncalled
  const Prediction channel = leanchan_prediction(S, default_block_size<T>, capacity);
  return per_service_row(
      "leanchan::asio", S, capacity, kServicesPerRow, idle, fill, drain,
      {channel.create + kIdleBytes, channel.fill + kIdleBytes + step, channel.drain + kIdleBytes});
}

}  // namespace

std::int64_t posted_step_bytes() {
  net::io_context io(1);
  const net::any_io_executor executor = io.get_executor();
  struct Step {
    void* gate;
    void* object;
    void operator()() const noexcept {}
  };
  static_assert(sizeof(Step) == sizeof(leanchan::asio::internal::GateRef) + sizeof(void*));
  profiler::HeapProbe probe;
  net::post(executor, Step{});
  const std::int64_t bytes = probe.live_bytes();
  io.poll();
  return bytes;
}

Service asio_service() {
  const std::int64_t step = posted_step_bytes();
  Service service;
  service.name = "leanchan::asio";
  service.holds = "the Sender and an AsyncReceiver with one receive pending, its handler a pointer";
  service.formulas = absl::StrCat(
      "+ ", sizeof(Sender<Message<24>>), " (Sender) + ",
      sizeof(leanchan::asio::AsyncReceiver<Message<24>>), " (AsyncReceiver) + ", sizeof(StepGate),
      " (its step gate) + ", recycled_block_bytes(sizeof(ReceiveOp<24>)),
      " (the pending receive's operation: ", sizeof(ReceiveOp<24>),
      " bytes in a block of Asio's recycling allocator, 4·ceil(", sizeof(ReceiveOp<24>),
      "/4) + 1) = + ", kIdleBytes, " in every column; fill also + ", step,
      " (the step the first message posts until the io thread runs it: Asio's blocks for one "
      "post, measured)");
  service.measure = [step](std::size_t message_bytes, std::size_t capacity) {
    switch (message_bytes) {
      case 8: return measure_asio<8>(capacity, step);
      case 24: return measure_asio<24>(capacity, step);
      case 128: return measure_asio<128>(capacity, step);
      case 250: return measure_asio<250>(capacity, step);
      default: return measure_asio<1024>(capacity, step);
    }
  };
  return service;
}

}  // namespace leanchan::report
