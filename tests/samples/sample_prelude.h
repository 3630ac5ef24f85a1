// SPDX-License-Identifier: MIT
// What the code samples of README.md and of the public headers' comments
// take for granted (tests/samples/extract_samples.py): the public headers,
// the message type, the helpers a sample calls without defining them, and
// the context a fragment runs in (LEANCHAN_SAMPLE_CONTEXT: the parameters
// of the function that holds it). Declarations only: fragments are
// compiled, never linked or run; what a helper would do is the reader's.
// A complete program (one with main()) does not see this file.
#ifndef LEANCHAN_TESTS_SAMPLES_SAMPLE_PRELUDE_H_
#define LEANCHAN_TESTS_SAMPLES_SAMPLE_PRELUDE_H_

#include <sys/epoll.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <thread>
#include <utility>

#include "leanchan/async/task.h"
#include "leanchan/block_pool.h"
#include "leanchan/channel.h"
#include "leanchan/channel_registry.h"
#include "leanchan/memory_budget.h"
#include "leanchan/notifier.h"
#include "leanchan/profiler/heap_probe.h"
#include "leanchan/ready_set.h"

// LEANCHAN_SAMPLES_ASIO (set by the script when Asio is there): the Asio
// samples are compiled too. They spell standalone Asio's names (asio::...);
// on Boost.Asio (LEANCHAN_ASIO_USE_BOOST) the namespace asio below stands
// for boost::asio.
#if LEANCHAN_SAMPLES_ASIO
#include "leanchan/asio.h"
#if defined(LEANCHAN_ASIO_USE_BOOST)
#include <boost/asio/experimental/deferred.hpp>
namespace asio {
using namespace ::boost::asio;
using error_code = ::boost::system::error_code;
}  // namespace asio
#else
#include <asio/experimental/deferred.hpp>
#endif
#endif

// The message type of every sample.
struct Event {
  int id;
};

// The helpers the samples call.
void handle(const Event& event);
void use(const Event& event);
void keep(Event event);
void shed(Event event);
void retry_later(Event event);
Event next_event();
void wait_for_callback();
void log(std::uint64_t tag, std::size_t bytes);
void on_ready(void* service);  // a leanchan::Notifier callback
struct MyService {};

// The coroutine type of leanchan/coro.h's sample (leanchan::async::Task).
using Task = leanchan::async::Task<>;

// The context of a fragment compiled in a function body: the names it uses
// without declaring them, the parameters of that function. A fragment may
// declare the same names again (its own block holds it).
// clang-format off
#define LEANCHAN_SAMPLE_CONTEXT                        \
  [[maybe_unused]] leanchan::Sender<Event>& tx,        \
  [[maybe_unused]] leanchan::Receiver<Event>& rx,      \
  [[maybe_unused]] leanchan::Sender<Event>& raw_tx,    \
  [[maybe_unused]] leanchan::Receiver<Event>& raw_rx,  \
  [[maybe_unused]] Event event,                        \
  [[maybe_unused]] Event e,                            \
  [[maybe_unused]] Event v,                            \
  [[maybe_unused]] leanchan::Notifier& n,              \
  [[maybe_unused]] leanchan::MemoryBudget& budget,     \
  [[maybe_unused]] leanchan::BlockPool& pool,          \
  [[maybe_unused]] std::uint64_t service_id,           \
  [[maybe_unused]] MyService& my_service,              \
  [[maybe_unused]] int epoll,                          \
  [[maybe_unused]] epoll_event in_event                \
  LEANCHAN_SAMPLE_ASIO_CONTEXT
#if LEANCHAN_SAMPLES_ASIO
#define LEANCHAN_SAMPLE_ASIO_CONTEXT , [[maybe_unused]] asio::io_context& io
#else
#define LEANCHAN_SAMPLE_ASIO_CONTEXT
#endif
// clang-format on

#endif  // LEANCHAN_TESTS_SAMPLES_SAMPLE_PRELUDE_H_
