// SPDX-License-Identifier: MIT
// The leanchan::asio service of the services table (services.h): its types,
// so that the report's prediction and the tests name the same sizes. Only in
// a build with Asio (LEANCHAN_REPORT_HAVE_ASIO), whose translation units
// all see Asio configured alike: its recycled blocks come from operator new
// (ASIO_DISABLE_STD_ALIGNED_ALLOC, or Boost.Asio's macros), where the
// counting hook sees them.
#ifndef LEANCHAN_PROFILER_REPORT_SERVICES_ASIO_H_
#define LEANCHAN_PROFILER_REPORT_SERVICES_ASIO_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "leanchan/asio.h"
#include "leanchan/channel.h"
#include "memtable.h"

namespace leanchan::report {

template <std::size_t S>
struct AsioService;

// The pending receive's handler: one pointer; on a message it receives
// again, so the service always has one receive pending.
template <std::size_t S>
struct ReceiveAgain {
  AsioService<S>* service;
  void operator()(leanchan::asio::error_code error, std::optional<Message<S>> message) const;
};

// What a program keeps per channel that leanchan::asio serves: the Sender
// (the producer's) and the AsyncReceiver.
template <std::size_t S>
struct AsioService {
  using T = Message<S>;
  AsioService(const leanchan::asio::net::any_io_executor& executor,
              std::pair<Sender<T>, Receiver<T>> ends)
      : tx(std::move(ends.first)), rx(executor, std::move(ends.second)) {}
  void receive() { rx.async_recv(ReceiveAgain<S>{this}); }
  Sender<T> tx;
  leanchan::asio::AsyncReceiver<T> rx;
};

template <std::size_t S>
void ReceiveAgain<S>::operator()(leanchan::asio::error_code error,
                                 std::optional<Message<S>> message) const {
  if (!error && message) service->receive();
}

// The operation a pending receive allocates (leanchan::asio's, with the
// handler's allocator: Asio's recycling allocator for ReceiveAgain).
template <std::size_t S>
using ReceiveOp =
    leanchan::asio::internal::HandlerOp<leanchan::asio::net::any_io_executor, ReceiveAgain<S>,
                                        leanchan::asio::internal::NoPayload,
                                        leanchan::asio::error_code, std::optional<Message<S>>>;

// Requested bytes of a block of Asio's recycling allocator for an object of
// `size` bytes, off an io thread (docs/asio.md, "Allocation"): the size
// rounded up to 4 bytes, plus one.
constexpr std::int64_t recycled_block_bytes(std::size_t size) {
  return static_cast<std::int64_t>(4 * ((size + 3) / 4) + 1);
}

// Requested heap bytes of one post, off an io thread, of a function the size
// of the step a kick posts (a gate reference and the object's pointer) to an
// io_context's any_io_executor, while the step waits to run: Asio's own
// allocations, measured (posting such a function and running it).
std::int64_t posted_step_bytes();

}  // namespace leanchan::report

#endif  // LEANCHAN_PROFILER_REPORT_SERVICES_ASIO_H_
