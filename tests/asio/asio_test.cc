// SPDX-License-Identifier: MIT
// leanchan::asio on real io_contexts: completion tokens (callbacks,
// use_awaitable, deferred), end of stream, cancellation (slots and
// cancel(), racing with sends), resumption on the handler's executor, work
// tracking (only while waiting, once per executor) and one execution per
// completion, the handler's allocator (and no heap allocation per operation
// with the default one), a multi-threaded stress with exactly-once,
// per-producer FIFO delivery, and destruction with a resumption already
// posted.
// The window between arming and suspending, opened by a test hook (see
// leanchan/asio/resumer.h): what runs there runs inside the operation.
void leanchan_test_after_arm();
#define LEANCHAN_ASIO_TEST_AFTER_ARM() ::leanchan_test_after_arm()

#include "leanchan/asio.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <memory_resource>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "asio_flavour.h"
#include "gtest/gtest.h"
#include "leanchan/channel.h"
#include "leanchan/profiler/heap_probe.h"
#include "test_support.h"

namespace {
std::function<void()> after_arm;  // runs once, then clears itself
}  // namespace

void leanchan_test_after_arm() {
  if (after_arm) std::exchange(after_arm, nullptr)();
}

namespace {

using leanchan::asio::AsyncReceiver;
using leanchan::asio::AsyncSender;
using leanchan::asio::error_code;

// Runs `io` on `threads` threads until it runs out of work.
void run_on_threads(asio::io_context& io, int threads) {
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  for (auto& t : pool) t.join();
}

TEST(AsioReceiver, ReadyMessageCompletesOutsideTheInitiatingCall) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  auto& tx = tx_rx.first;
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  ASSERT_TRUE(tx.try_send(7).ok());
  std::optional<int> got;
  bool called = false;
  rx.async_recv([&](error_code ec, std::optional<int> value) {
    EXPECT_FALSE(ec);
    got = value;
    called = true;
  });
  EXPECT_FALSE(called);  // never inside async_recv
  io.run();
  EXPECT_TRUE(called);
  EXPECT_EQ(got, 7);
}

TEST(AsioReceiver, PendingReceiveKeepsRunBusyUntilAMessageArrives) {
  // Without outstanding work on the executor, run() would return at once
  // and the handler would never run.
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  auto& tx = tx_rx.first;
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  std::atomic<int> got{0};
  rx.async_recv([&](error_code ec, std::optional<int> value) {
    EXPECT_FALSE(ec);
    got = value.value_or(-1);
  });
  std::thread runner([&io] { io.run(); });
  ASSERT_TRUE(tx.send(42).ok());
  runner.join();  // returns only after the handler ran
  EXPECT_EQ(got.load(), 42);
}

TEST(AsioResumer, AKickWhileActiveMakesSuspendFail) {
  leanchan::asio::internal::Resumer resumer;
  resumer.begin();
  EXPECT_FALSE(resumer.kick());     // active: the resumption will look again
  EXPECT_FALSE(resumer.suspend());  // ... because suspend fails
  EXPECT_TRUE(resumer.suspend());   // no kick since: waits
  EXPECT_TRUE(resumer.kick());      // the kicker posts the resumption
  EXPECT_FALSE(resumer.kick());     // one post only
  resumer.begin();
  resumer.end();
  EXPECT_FALSE(resumer.kick());  // no operation: nothing to post
}

TEST(AsioStepGate, AClosedGateLetsNoStepIn) {
  leanchan::asio::internal::GateRef object(leanchan::asio::internal::StepGate::create());
  leanchan::asio::internal::GateRef step = object;  // what a posted step holds
  EXPECT_TRUE(step->enter());
  step->leave();  // close() would have waited until here
  object->close();
  EXPECT_FALSE(step->enter());  // the object is gone: the step does nothing
}  // the last reference deletes the gate (ASan checks it is not leaked)

TEST(AsioReceiver, MessageInTheArmToSuspendWindowIsNotLost) {
  // The message arrives after the notifier is armed and before the
  // operation suspends: its callback's kick finds the operation active.
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  auto& tx = tx_rx.first;
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  after_arm = [&tx] { ASSERT_TRUE(tx.try_send(11).ok()); };
  std::optional<int> got;
  rx.async_recv([&](error_code ec, std::optional<int> value) {
    EXPECT_FALSE(ec);
    got = value;
  });
  EXPECT_FALSE(after_arm);  // the window was reached
  io.poll();                // runs what is ready, never blocks
  EXPECT_EQ(got, 11);
}

TEST(AsioSender, SlotInTheQueueToSuspendWindowIsNotLost) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(1);
  auto& raw_rx = tx_rx.second;
  AsyncSender<int> tx(io.get_executor(), tx_rx.first);
  ASSERT_TRUE(tx_rx.first.try_send(0).ok());
  after_arm = [&raw_rx] { ASSERT_EQ(raw_rx.try_recv().value(), 0); };  // hands the slot over
  bool sent = false;
  tx.async_send(1, [&](error_code ec) {
    EXPECT_FALSE(ec);
    sent = true;
  });
  EXPECT_FALSE(after_arm);
  io.poll();
  EXPECT_TRUE(sent);
  EXPECT_EQ(raw_rx.try_recv().value(), 1);
}

TEST(AsioReceiver, EndOfChannelIsNulloptWithoutError) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  ASSERT_TRUE(tx_rx.first.try_send(1).ok());
  std::vector<std::optional<int>> results;
  std::function<void()> next = [&] {
    rx.async_recv([&](error_code ec, std::optional<int> value) {
      EXPECT_FALSE(ec);
      results.push_back(value);
      if (value) next();
    });
  };
  next();
  std::thread dropper([sender = std::move(tx_rx.first)]() mutable {
    leanchan::Sender<int> gone = std::move(sender);
  });
  io.run();
  dropper.join();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], 1);
  EXPECT_EQ(results[1], std::nullopt);
}

TEST(AsioReceiver, CoroutinesWithUseAwaitableOnSeveralThreads) {
  constexpr int kProducers = 3;
  constexpr std::uint32_t kPerProducer = 20000;
  asio::io_context io;
  auto tx_rx = leanchan::channel<std::uint64_t>(2);
  AsyncReceiver<std::uint64_t> rx(io.get_executor(), std::move(tx_rx.second));
  std::vector<std::uint32_t> next(kProducers, 0);
  std::uint64_t received = 0;
  bool in_order = true;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        while (std::optional<std::uint64_t> v = co_await rx.async_recv(asio::use_awaitable)) {
          const auto producer = static_cast<std::size_t>(*v >> 32);
          const auto sequence = static_cast<std::uint32_t>(*v);
          if (next[producer] != sequence) in_order = false;
          next[producer] = sequence + 1;
          ++received;
        }
      },
      asio::detached);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([tx = tx_rx.first, p]() mutable {
      for (std::uint32_t i = 0; i < kPerProducer; ++i) {
        ASSERT_TRUE(tx.send((std::uint64_t{static_cast<std::uint32_t>(p)} << 32) | i).ok());
      }
    });
  }
  { leanchan::Sender<std::uint64_t> gone = std::move(tx_rx.first); }
  run_on_threads(io, 4);
  for (auto& t : producers) t.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(received, std::uint64_t{kProducers} * kPerProducer);
  for (int p = 0; p < kProducers; ++p) EXPECT_EQ(next[static_cast<std::size_t>(p)], kPerProducer);
}

TEST(AsioReceiver, DeferredOperationStartsWhenInvoked) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  auto op = rx.async_recv(asio::experimental::deferred);
  ASSERT_TRUE(tx_rx.first.try_send(5).ok());
  std::optional<int> got;
  std::move(op)([&](error_code ec, std::optional<int> value) {
    EXPECT_FALSE(ec);
    got = value;
  });
  io.run();
  EXPECT_EQ(got, 5);
}

TEST(AsioReceiver, CancellationSlotAbortsAndLosesNothing) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  auto& tx = tx_rx.first;
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  asio::cancellation_signal signal;
  error_code first_ec;
  std::optional<int> first_value = -1;
  rx.async_recv(
      asio::bind_cancellation_slot(signal.slot(), [&](error_code ec, std::optional<int> value) {
        first_ec = ec;
        first_value = value;
      }));
  io.poll();  // nothing there: pending
  signal.emit(asio::cancellation_type::terminal);
  io.run();
  EXPECT_EQ(first_ec, asio::error::operation_aborted);
  EXPECT_EQ(first_value, std::nullopt);
  // The channel and the object stay usable: the next message arrives.
  io.restart();
  ASSERT_TRUE(tx.try_send(9).ok());
  std::optional<int> second;
  rx.async_recv([&](error_code ec, std::optional<int> value) {
    EXPECT_FALSE(ec);
    second = value;
  });
  io.run();
  EXPECT_EQ(second, 9);
}

TEST(AsioReceiver, CancelRacingWithSendsDeliversEveryMessageOnce) {
  // Each round: a pending receive, one send and one cancel() from two other
  // threads at once. The receive either takes the message or is aborted;
  // an aborted round's message is taken by the next receive.
  constexpr int kRounds = 3000;
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread runner([&io] { io.run(); });
  auto tx_rx = leanchan::channel<int>(kRounds + 1);
  auto& tx = tx_rx.first;
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  std::vector<int> received;
  int aborted = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::promise<void> done;
    asio::post(io, [&] {
      rx.async_recv([&](error_code ec, std::optional<int> value) {
        if (ec == asio::error::operation_aborted) {
          EXPECT_FALSE(value.has_value());
          ++aborted;
        } else {
          EXPECT_FALSE(ec);
          ASSERT_TRUE(value.has_value());
          received.push_back(*value);
        }
        done.set_value();
      });
    });
    std::thread sender([&tx, round] { ASSERT_TRUE(tx.try_send(round).ok()); });
    rx.cancel();
    sender.join();
    done.get_future().wait();
  }
  // Drain what aborted rounds left behind.
  for (;;) {
    auto r = rx.try_recv();
    if (!r.ok()) break;
    received.push_back(std::move(r).value());
  }
  work.reset();
  runner.join();
  ASSERT_EQ(received.size(), static_cast<std::size_t>(kRounds));
  for (int i = 0; i < kRounds; ++i) EXPECT_EQ(received[static_cast<std::size_t>(i)], i);
  RecordProperty("aborted_rounds", aborted);
}

// A cancellation requested while a message arrives wins: the receive is
// aborted and the message stays for the next one. (The step used to take
// the message first: completed with a value, a cancelled receive inside an
// operator|| or a parallel_group had its message thrown away.)
TEST(AsioReceiver, CancellationWinsOverAMessageThatCameMeanwhile) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  auto& tx = tx_rx.first;
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  asio::cancellation_signal signal;
  error_code ec;
  std::optional<int> value = -1;
  rx.async_recv(
      asio::bind_cancellation_slot(signal.slot(), [&](error_code e, std::optional<int> v) {
        ec = e;
        value = v;
      }));
  io.poll();                         // pending
  ASSERT_TRUE(tx.try_send(5).ok());  // posts the next step
  signal.emit(asio::cancellation_type::terminal);
  io.run();
  EXPECT_EQ(ec, asio::error::operation_aborted);
  EXPECT_EQ(value, std::nullopt);
  EXPECT_EQ(rx.try_recv().value(), 5) << "the cancelled receive took the message";
}

// The cancellation slot is left on the handler's executor, just before the
// handler runs: the I/O side does not touch it once the operation has
// completed. (It used to clear it from the completing step, on the I/O
// executor, racing the slot's owner emitting on the handler's strand: a
// coroutine awaiting `rx.async_recv(...) || timer.async_wait(...)` on a
// strand crashed in emit under AddressSanitizer.) So the slot may emit
// after the operation completed; meant for that operation, it must not
// cancel the next one started meanwhile.
TEST(AsioReceiver, ALateCancellationDoesNotCancelTheNextReceive) {
  asio::io_context io;     // the object's executor
  asio::io_context other;  // the first handler's, not run until the end
  auto tx_rx = leanchan::channel<int>(4);
  auto& tx = tx_rx.first;
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  asio::cancellation_signal signal;
  std::optional<int> first;
  rx.async_recv(asio::bind_cancellation_slot(
      signal.slot(),
      asio::bind_executor(other, [&](error_code, std::optional<int> v) { first = v; })));
  io.poll();  // pending
  ASSERT_TRUE(tx.try_send(1).ok());
  io.run();  // completes: its handler is queued on `other`
  EXPECT_TRUE(signal.slot().has_handler()) << "the slot was cleared from the I/O side";
  io.restart();
  error_code second_ec;
  std::optional<int> second;
  rx.async_recv([&](error_code e, std::optional<int> v) {
    second_ec = e;
    second = v;
  });
  signal.emit(asio::cancellation_type::terminal);  // late: meant for the first
  ASSERT_TRUE(tx.try_send(2).ok());
  io.run();
  EXPECT_FALSE(second_ec) << "a late cancellation aborted the next receive";
  EXPECT_EQ(second, 2);
  other.run();
  EXPECT_EQ(first, 1);
  EXPECT_FALSE(signal.slot().has_handler()) << "left when the handler ran";
}

// A handler on a strand, its cancellation signal emitted on that strand
// while the receive completes on another thread of the context, as an
// operator|| on a strand does: every message arrives once, in order,
// whether its receive was aborted or not.
TEST(AsioReceiver, CancellationOnAStrandRacingCompletionLosesNothing) {
  const int rounds = std::max(200, static_cast<int>(2000 * leanchan::testing::stress_scale()));
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::vector<std::thread> runners;
  for (int i = 0; i < 2; ++i) runners.emplace_back([&io] { io.run(); });
  auto strand = asio::make_strand(io);
  auto tx_rx = leanchan::channel<int>(static_cast<std::size_t>(rounds) + 1);
  auto& tx = tx_rx.first;
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  std::vector<int> received;
  for (int round = 0; round < rounds; ++round) {
    asio::cancellation_signal signal;
    std::promise<void> done;
    asio::post(strand, [&] {
      rx.async_recv(asio::bind_cancellation_slot(
          signal.slot(), asio::bind_executor(strand, [&](error_code ec, std::optional<int> value) {
            if (!ec) received.push_back(*value);
            done.set_value();
          })));
    });
    std::promise<void> emitted;
    asio::post(strand, [&] {
      signal.emit(asio::cancellation_type::terminal);
      emitted.set_value();
    });
    ASSERT_TRUE(tx.try_send(round).ok());
    done.get_future().wait();
    emitted.get_future().wait();
  }
  for (;;) {  // what aborted rounds left behind
    auto r = rx.try_recv();
    if (!r.ok()) break;
    received.push_back(std::move(r).value());
  }
  work.reset();
  for (auto& t : runners) t.join();
  ASSERT_EQ(received.size(), static_cast<std::size_t>(rounds));
  for (int i = 0; i < rounds; ++i) EXPECT_EQ(received[static_cast<std::size_t>(i)], i);
}

TEST(AsioReceiver, HandlerRunsOnItsAssociatedExecutor) {
  asio::io_context io;     // the object's executor
  asio::io_context other;  // the handler's
  auto tx_rx = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  auto strand = asio::make_strand(other);
  std::thread::id handler_thread;
  bool in_strand = false;
  rx.async_recv(asio::bind_executor(strand, [&](error_code, std::optional<int>) {
    handler_thread = std::this_thread::get_id();
    in_strand = strand.running_in_this_thread();
  }));
  std::thread other_runner([&other] { other.run(); });  // held by the pending op's work
  const std::thread::id other_id = other_runner.get_id();
  ASSERT_TRUE(tx_rx.first.send(1).ok());
  io.run();
  other_runner.join();
  EXPECT_TRUE(in_strand);
  EXPECT_EQ(handler_thread, other_id);
}

// Counts allocations made through it: the pending operation must use the
// handler's associated allocator.
template <class T>
struct CountingAllocator {
  using value_type = T;
  std::atomic<int>* count;
  explicit CountingAllocator(std::atomic<int>* c) noexcept : count(c) {}
  template <class U>
  CountingAllocator(const CountingAllocator<U>& other) noexcept : count(other.count) {}
  T* allocate(std::size_t n) {
    ++*count;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
  template <class U>
  bool operator==(const CountingAllocator<U>& other) const noexcept {
    return count == other.count;
  }
};

TEST(AsioReceiver, PendingOperationUsesTheHandlersAllocator) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  std::atomic<int> allocations{0};
  std::optional<int> got;
  rx.async_recv(asio::bind_allocator(CountingAllocator<void>(&allocations),
                                     [&](error_code, std::optional<int> v) { got = v; }));
  ASSERT_TRUE(tx_rx.first.try_send(3).ok());
  io.run();
  EXPECT_EQ(got, 3);
  EXPECT_EQ(allocations.load(), 1);
}

// Receives with callbacks until the channel ends, counting the messages.
class ReceiveLoop {
 public:
  explicit ReceiveLoop(AsyncReceiver<int>& rx) : rx_(rx) { next(); }
  int received() const { return received_.load(); }

 private:
  void next() {
    rx_.async_recv([this](error_code, std::optional<int> v) {
      if (!v) return;  // the channel ended
      received_.fetch_add(1);
      next();
    });
  }
  AsyncReceiver<int>& rx_;
  std::atomic<int> received_{0};
};

// A message that readies a waiting receive from inside a handler on one of
// the context's threads must reach the other thread at once: the handler
// may go on for long, or block. Here it blocks in send() until the
// receive has taken the first message. When the kick was deferred (queued
// behind the current handler on its own thread) the receive could not run
// until that handler returned, and the send timed out; the deadline only
// bounds that failure.
TEST(AsioReceiver, AKickFromABlockingHandlerRunsOnAnotherThread) {
  asio::io_context io(2);
  auto tx_rx = leanchan::channel<int>(1);
  std::optional<leanchan::Sender<int>> tx(std::move(tx_rx.first));
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  ReceiveLoop loop(rx);  // waits: the channel is empty
  std::atomic<bool> sent_first{false};
  std::atomic<bool> sent_second{false};
  asio::post(io, [&] {
    sent_first = tx->try_send(1).ok();  // readies the receive, on this thread
    if (sent_first) sent_second = tx->send_for(2, std::chrono::seconds(10)).ok();  // needs 1 taken
    tx.reset();  // the receive loop ends after the second message (also on a failure)
  });
  run_on_threads(io, 2);
  EXPECT_TRUE(sent_first.load());
  EXPECT_TRUE(sent_second.load());
  EXPECT_EQ(loop.received(), 2);
}

// The same with the message sent by a coroutine that co_spawn runs inline
// from the handler (co_spawn on an io thread starts the coroutine at once):
// the kick happens inside a use_awaitable initiation, yet the handler goes
// on after it. A kick deferred there waited behind the blocked handler.
TEST(AsioReceiver, AKickFromACoroutineSpawnedInlineRunsOnAnotherThread) {
  asio::io_context io(2);
  auto tx_rx = leanchan::channel<int>(1);
  std::optional<leanchan::Sender<int>> tx(tx_rx.first);
  std::optional<AsyncSender<int>> atx;
  atx.emplace(io.get_executor(), std::move(tx_rx.first));
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  ReceiveLoop loop(rx);  // waits: the channel is empty
  std::atomic<bool> sent_second{false};
  asio::post(io, [&] {
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { co_await atx->async_send(1, asio::use_awaitable); },
        asio::detached);
    sent_second = tx->send_for(2, std::chrono::seconds(10)).ok();  // needs 1 taken
    tx.reset();
    atx.reset();  // its send completed: the last sender goes, the loop ends
  });
  run_on_threads(io, 2);
  EXPECT_TRUE(sent_second.load());
  EXPECT_EQ(loop.received(), 2);
}

// A handler whose allocator comes from its own state (a shared arena), as
// a handler with a per-connection arena has: a moved-from handler has no
// arena any more. The operation must be freed with the allocator it was
// allocated with, taken before the handler moves out; before, it was
// freed through the moved-from handler's (no arena: 1 allocation, 0
// deallocations through the arena).
struct Arena {
  int allocations = 0;
  int deallocations = 0;
};
int deallocations_without_an_arena = 0;
template <class T>
struct ArenaAllocator {
  using value_type = T;
  Arena* arena;
  explicit ArenaAllocator(Arena* a) noexcept : arena(a) {}
  template <class U>
  ArenaAllocator(const ArenaAllocator<U>& other) noexcept : arena(other.arena) {}
  T* allocate(std::size_t n) {
    if (arena != nullptr) ++arena->allocations;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (arena != nullptr) {
      ++arena->deallocations;
    } else {
      ++deallocations_without_an_arena;
    }
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const ArenaAllocator<U>& other) const noexcept {
    return arena == other.arena;
  }
};
struct ArenaHandler {
  using allocator_type = ArenaAllocator<void>;
  allocator_type get_allocator() const noexcept { return allocator_type(arena.get()); }
  void operator()(error_code, std::optional<int> v) { *got = v; }
  std::shared_ptr<Arena> arena;
  std::optional<int>* got;
};

TEST(AsioReceiver, FreesTheOperationWithTheAllocatorThatAllocatedIt) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  auto arena = std::make_shared<Arena>();
  deallocations_without_an_arena = 0;
  std::optional<int> ready;
  ASSERT_TRUE(tx_rx.first.try_send(1).ok());
  rx.async_recv(ArenaHandler{arena, &ready});  // ready at once
  io.run();
  EXPECT_EQ(ready, 1);
  std::optional<int> waited;
  rx.async_recv(ArenaHandler{arena, &waited});  // waits, then a send completes it
  io.restart();
  io.poll();
  ASSERT_TRUE(tx_rx.first.try_send(2).ok());
  io.run();
  EXPECT_EQ(waited, 2);
  EXPECT_EQ(arena->allocations, 2);
  EXPECT_EQ(arena->deallocations, 2);
  EXPECT_EQ(deallocations_without_an_arena, 0);
}

// An executor over an io_context's that counts what leanchan::asio asks of
// it: functions executed, and tracked work taken
// (prefer(outstanding_work.tracked)). That work is only counted: the I/O
// object's own executor, of another type, is what keeps run() going. It
// always queues, never runs inline.
struct ExecutorCounts {
  std::atomic<int> executed{0};
  std::atomic<int> tracked{0};
};
struct CountingExecutor {
  asio::io_context::executor_type inner;
  ExecutorCounts* counts;

  asio::execution_context& query(asio::execution::context_t) const noexcept {
    return inner.context();
  }
  static constexpr asio::execution::blocking_t query(asio::execution::blocking_t) noexcept {
    return asio::execution::blocking.never;
  }
  CountingExecutor require(asio::execution::blocking_t::never_t) const { return *this; }
  CountingExecutor prefer(asio::execution::outstanding_work_t::tracked_t) const {
    counts->tracked.fetch_add(1);
    return *this;
  }
  template <class F>
  void execute(F&& f) const {
    counts->executed.fetch_add(1);
    asio::post(inner, std::forward<F>(f));
  }
  bool operator==(const CountingExecutor& other) const noexcept {
    return inner == other.inner && counts == other.counts;
  }
  bool operator!=(const CountingExecutor& other) const noexcept { return !(*this == other); }
};

// A receive that finds a message completes with one function queued on the
// handler's executor, holding no work (its queued completion counts by
// itself). Before, it took tracked work when it started, and its completion
// went through a work_dispatcher: tracked work once more and two functions
// executed on that same executor.
TEST(AsioReceiver, ReadyCompletionIsOneFunctionWithoutWork) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  ExecutorCounts counts;
  std::optional<int> got;
  ASSERT_TRUE(tx_rx.first.try_send(3).ok());
  rx.async_recv(asio::bind_executor(CountingExecutor{io.get_executor(), &counts},
                                    [&](error_code, std::optional<int> v) { got = v; }));
  io.run();
  EXPECT_EQ(got, 3);
  EXPECT_EQ(counts.executed.load(), 1);
  EXPECT_EQ(counts.tracked.load(), 0);
}

// A receive that waits holds work on the handler's executor once, from
// before it waits, and completes with one function executed there.
TEST(AsioReceiver, WaitingReceiveHoldsWorkOnceAndExecutesOnce) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  ExecutorCounts counts;
  std::optional<int> got;
  rx.async_recv(asio::bind_executor(CountingExecutor{io.get_executor(), &counts},
                                    [&](error_code, std::optional<int> v) { got = v; }));
  EXPECT_EQ(counts.tracked.load(), 1);
  ASSERT_TRUE(tx_rx.first.try_send(4).ok());  // kicks the receive from this thread
  io.run();
  EXPECT_EQ(got, 4);
  EXPECT_EQ(counts.executed.load(), 1);
  EXPECT_EQ(counts.tracked.load(), 1);
}

// The same for a send that waits for room, then for one that finds room.
TEST(AsioSender, SendsHoldWorkOnlyWhileWaitingAndExecuteOnce) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(1);
  AsyncSender<int> tx(io.get_executor(), std::move(tx_rx.first));
  ASSERT_TRUE(tx.try_send(1).ok());  // full
  ExecutorCounts counts;
  error_code first(asio::error::would_block);
  tx.async_send(2, asio::bind_executor(CountingExecutor{io.get_executor(), &counts},
                                       [&](error_code ec) { first = ec; }));
  EXPECT_EQ(counts.tracked.load(), 1);
  EXPECT_EQ(tx_rx.second.try_recv().value(), 1);  // hands the slot to the waiting send
  io.run();
  EXPECT_FALSE(first);
  EXPECT_EQ(counts.executed.load(), 1);
  EXPECT_EQ(counts.tracked.load(), 1);
  EXPECT_EQ(tx_rx.second.try_recv().value(), 2);
  error_code second(asio::error::would_block);
  tx.async_send(3, asio::bind_executor(CountingExecutor{io.get_executor(), &counts},
                                       [&](error_code ec) { second = ec; }));
  io.restart();
  io.run();
  EXPECT_FALSE(second);
  EXPECT_EQ(counts.executed.load(), 2);
  EXPECT_EQ(counts.tracked.load(), 1);
  EXPECT_EQ(tx_rx.second.try_recv().value(), 3);
}

// With the default allocator (use_awaitable's), operations come from
// Asio's per-thread recycling allocator, as Asio's own do: a stream of sends
// and receives on an io thread, waiting or not, reaches the heap for none
// (before, each operation allocated one block).
class AsioSteadyStream : public ::testing::TestWithParam<std::size_t> {};

TEST_P(AsioSteadyStream, AllocatesNothingPerOperation) {
  constexpr int kWarmUp = 64;
  constexpr int kMessages = 4000;
  asio::io_context io(1);
  auto tx_rx = leanchan::channel<int>(GetParam());
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  AsyncSender<int> tx(io.get_executor(), std::move(tx_rx.first));
  long long sum = 0;
  int received = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < kWarmUp + kMessages; ++i) {
          co_await tx.async_send(i, asio::use_awaitable);
        }
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < kWarmUp + kMessages; ++i) {
          std::optional<int> value = co_await rx.async_recv(asio::use_awaitable);
          sum += value.value_or(-1);
          ++received;
        }
      },
      asio::detached);
  while (received < kWarmUp) ASSERT_EQ(io.run_one(), 1u);
  leanchan::profiler::HeapProbe probe;
  while (received < kWarmUp + kMessages) ASSERT_EQ(io.run_one(), 1u);
  const std::uint64_t allocations = probe.allocations();
  io.run();
  EXPECT_EQ(allocations, 0u);
  const long long n = kWarmUp + kMessages;
  EXPECT_EQ(sum, n * (n - 1) / 2);
}

// Capacity 1: nearly every operation waits; 16: most complete at once.
INSTANTIATE_TEST_SUITE_P(Capacities, AsioSteadyStream, ::testing::Values(1, 16));

TEST(AsioReceiver, DestroyedAfterTheContextStoppedDestroysThePendingHandler) {
  auto io = std::make_unique<asio::io_context>();
  auto tx_rx = leanchan::channel<int>(4);
  auto token = std::make_shared<int>(0);
  bool called = false;
  {
    AsyncReceiver<int> rx(io->get_executor(), std::move(tx_rx.second));
    rx.async_recv([&called, token](error_code, std::optional<int>) { called = true; });
    EXPECT_EQ(token.use_count(), 2);
    io->stop();
  }
  EXPECT_EQ(token.use_count(), 1);  // the handler went with the object
  io.reset();
  EXPECT_FALSE(called);
}

TEST(AsioSender, WaitsForRoomAndCompletesInFifoOrder) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(1);
  auto& raw_rx = tx_rx.second;
  AsyncSender<int> first(io.get_executor(), tx_rx.first);
  AsyncSender<int> second(io.get_executor(), tx_rx.first);
  ASSERT_TRUE(tx_rx.first.try_send(0).ok());  // full
  std::vector<int> completed;
  first.async_send(1, [&](error_code ec) {
    EXPECT_FALSE(ec);
    completed.push_back(1);
  });
  io.poll();
  second.async_send(2, [&](error_code ec) {
    EXPECT_FALSE(ec);
    completed.push_back(2);
  });
  io.poll();
  EXPECT_TRUE(completed.empty());
  std::vector<int> taken;
  for (int i = 0; i < 3; ++i) {
    auto r = raw_rx.recv();  // frees a slot: handed to the longest waiter
    ASSERT_TRUE(r.has_value());
    taken.push_back(*r);
    io.poll();
  }
  EXPECT_EQ(taken, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(completed, (std::vector<int>{1, 2}));
}

TEST(AsioSender, CancelledSendPassesItsPlaceOn) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(1);
  auto& raw_rx = tx_rx.second;
  AsyncSender<int> first(io.get_executor(), tx_rx.first);
  AsyncSender<int> second(io.get_executor(), tx_rx.first);
  ASSERT_TRUE(tx_rx.first.try_send(0).ok());
  asio::cancellation_signal signal;
  error_code first_ec, second_ec = asio::error::would_block;
  first.async_send(
      1, asio::bind_cancellation_slot(signal.slot(), [&](error_code ec) { first_ec = ec; }));
  second.async_send(2, [&](error_code ec) { second_ec = ec; });
  io.poll();
  signal.emit(asio::cancellation_type::terminal);
  io.poll();
  EXPECT_EQ(first_ec, asio::error::operation_aborted);
  EXPECT_EQ(raw_rx.recv(), 0);
  io.poll();
  EXPECT_FALSE(second_ec);
  EXPECT_EQ(raw_rx.recv(), 2);
  EXPECT_EQ(raw_rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
}

TEST(AsioSender, ClosedChannelCompletesWithChannelClosed) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(1);
  AsyncSender<int> tx(io.get_executor(), tx_rx.first);
  ASSERT_TRUE(tx_rx.first.try_send(0).ok());
  error_code ec;
  tx.async_send(1, [&](error_code e) { ec = e; });
  io.poll();
  std::thread closer([&raw_rx = tx_rx.second] { raw_rx.close(); });
  closer.join();
  io.run();
  EXPECT_EQ(ec, asio::experimental::error::channel_closed);
}

// Blocks come from a resource that can be told to fail: the send fails
// with no_memory at once (it does not wait), and the channel is unchanged.
using leanchan::testing::FailingResource;

TEST(AsioSender, AllocationFailureCompletesWithNoMemory) {
  FailingResource resource;
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(
      4, leanchan::ChannelOptions{leanchan::Retention::kKeepNone, &resource});
  AsyncSender<int> tx(io.get_executor(), tx_rx.first);
  resource.fail = true;
  std::optional<error_code> ec;
  tx.async_send(1, [&](error_code e) { ec = e; });
  io.run();
  ASSERT_TRUE(ec.has_value());
  EXPECT_EQ(*ec, asio::error::no_memory);
  EXPECT_EQ(tx_rx.second.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(tx_rx.first.capacity(), 4u);
  resource.fail = false;
  ec.reset();
  io.restart();
  tx.async_send(2, [&](error_code e) { ec = e; });
  io.run();
  ASSERT_TRUE(ec.has_value());
  EXPECT_FALSE(*ec);
  EXPECT_EQ(tx_rx.second.try_recv().value(), 2);
}

TEST(AsioSender, CoroutineProducersAndConsumerOnFourThreads) {
  // Capacity 1: nearly every send waits; four io threads resume them.
  constexpr int kProducers = 4;
  constexpr std::uint32_t kPerProducer = 5000;
  asio::io_context io;
  auto tx_rx = leanchan::channel<std::uint64_t, 1>(1);
  AsyncReceiver<std::uint64_t, 1> rx(io.get_executor(), std::move(tx_rx.second));
  std::vector<std::unique_ptr<AsyncSender<std::uint64_t, 1>>> senders;
  for (int p = 0; p < kProducers; ++p) {
    senders.push_back(
        std::make_unique<AsyncSender<std::uint64_t, 1>>(asio::make_strand(io), tx_rx.first));
  }
  { leanchan::Sender<std::uint64_t, 1> gone = std::move(tx_rx.first); }
  std::vector<std::uint32_t> next(kProducers, 0);
  std::uint64_t received = 0;
  bool in_order = true;
  std::atomic<int> send_errors{0};
  for (int p = 0; p < kProducers; ++p) {
    asio::co_spawn(
        io,
        [&, p]() -> asio::awaitable<void> {
          auto& tx = *senders[static_cast<std::size_t>(p)];
          for (std::uint32_t i = 0; i < kPerProducer; ++i) {
            auto [ec] =
                co_await tx.async_send((std::uint64_t{static_cast<std::uint32_t>(p)} << 32) | i,
                                       asio::experimental::as_tuple(asio::use_awaitable));
            if (ec) ++send_errors;
          }
          senders[static_cast<std::size_t>(p)].reset();  // the last one ends the channel
        },
        asio::detached);
  }
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        while (auto v = co_await rx.async_recv(asio::use_awaitable)) {
          const auto producer = static_cast<std::size_t>(*v >> 32);
          if (next[producer] != static_cast<std::uint32_t>(*v)) in_order = false;
          next[producer] = static_cast<std::uint32_t>(*v) + 1;
          ++received;
        }
      },
      asio::detached);
  run_on_threads(io, 4);
  EXPECT_EQ(send_errors.load(), 0);
  EXPECT_TRUE(in_order);
  EXPECT_EQ(received, std::uint64_t{kProducers} * kPerProducer);
}

// A coroutine that owns its AsyncReceiver and waits in it: destroying the
// io_context destroys the pending operation, hence the coroutine, hence the
// receiver: the senders see the channel closed, and a later send touches
// nothing that is gone (ASan checks the last part).
TEST(AsioLifetime, ContextShutdownDestroysACoroutineWaitingInItsOwnReceiver) {
  auto tx_rx = leanchan::channel<int>(4);
  auto& tx = tx_rx.first;
  auto raw_rx = std::make_shared<leanchan::Receiver<int>>(std::move(tx_rx.second));
  bool started = false;
  {
    asio::io_context io;
    asio::co_spawn(
        io,
        [raw_rx, &started]() -> asio::awaitable<void> {
          AsyncReceiver<int> rx(co_await asio::this_coro::executor, std::move(*raw_rx));
          started = true;
          (void)co_await rx.async_recv(asio::use_awaitable);  // never completes
        },
        asio::detached);
    io.poll();
    ASSERT_TRUE(started);
    EXPECT_FALSE(tx.is_closed());
  }  // ~io_context: shutdown destroys the pending operation and the coroutine
  EXPECT_TRUE(tx.is_closed());  // the receiver went with the coroutine
  EXPECT_EQ(tx.try_send(1).status(), leanchan::SendStatus::kClosed);
}

TEST(AsioLifetime, ContextShutdownDestroysACoroutineWaitingInItsOwnSender) {
  auto tx_rx = leanchan::channel<int>(1);
  auto& raw_rx = tx_rx.second;
  ASSERT_TRUE(tx_rx.first.try_send(0).ok());  // full: the send waits
  bool started = false;
  {
    asio::io_context io;
    asio::co_spawn(
        io,
        [tx = tx_rx.first, &started]() mutable -> asio::awaitable<void> {
          AsyncSender<int> sender(co_await asio::this_coro::executor, std::move(tx));
          started = true;
          co_await sender.async_send(1, asio::use_awaitable);  // never completes
        },
        asio::detached);
    io.poll();
    ASSERT_TRUE(started);
    EXPECT_EQ(tx_rx.first.strong_count(), 2u);
  }
  EXPECT_EQ(tx_rx.first.strong_count(), 1u);  // the coroutine's sender is gone
  EXPECT_EQ(raw_rx.try_recv().value(), 0);    // its queued notifier left the queue:
  ASSERT_TRUE(tx_rx.first.try_send(2).ok());  // the freed slot is free for anyone
}

// An allocator that throws: async_recv must fail before taking anything.
template <class T>
struct ThrowingAllocator {
  using value_type = T;
  ThrowingAllocator() = default;
  template <class U>
  ThrowingAllocator(const ThrowingAllocator<U>&) noexcept {}
  T* allocate(std::size_t) { throw std::bad_alloc(); }
  void deallocate(T*, std::size_t) noexcept {}
  template <class U>
  bool operator==(const ThrowingAllocator<U>&) const noexcept {
    return true;
  }
};

TEST(AsioReceiver, AllocationFailureLeavesTheMessageInTheChannel) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
  ASSERT_TRUE(tx_rx.first.try_send(7).ok());
  EXPECT_THROW(rx.async_recv(asio::bind_allocator(ThrowingAllocator<void>(),
                                                  [](error_code, std::optional<int>) {})),
               std::bad_alloc);
  EXPECT_EQ(rx.try_recv().value(), 7);
}

TEST(AsioReceiver, ReleaseHandsTheReceiverBackDetached) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  leanchan::Receiver<int> raw = [&] {
    AsyncReceiver<int> rx(io.get_executor(), std::move(tx_rx.second));
    return rx.release();
  }();
  ASSERT_TRUE(tx_rx.first.try_send(3).ok());  // no notifier of a dead object fires
  EXPECT_EQ(raw.try_recv().value(), 3);
}

TEST(AsioSender, ReleaseHandsTheSenderBack) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  leanchan::Sender<int> raw = [&] {
    AsyncSender<int> tx(io.get_executor(), tx_rx.first);
    return tx.release();
  }();
  EXPECT_EQ(tx_rx.first.strong_count(), 2u);
  ASSERT_TRUE(raw.try_send(4).ok());
  EXPECT_EQ(tx_rx.second.try_recv().value(), 4);
}

// Destroying an object right after a kick posted its resumption (documented
// as allowed with an operation pending): the posted step must not touch the
// destroyed object, the handler is destroyed uncalled, nothing is lost and
// a send handed a slot before its sender went stays sent. The objects
// live on the heap so that ASan sees a step that runs on freed memory.
// A receive pending, `kick` posts its resumption, the receiver goes, then
// the io_context runs the posted step.
template <class Kick>
void destroy_receiver_after_kick(Kick kick) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(4);
  auto& tx = tx_rx.first;
  auto rx = std::make_unique<AsyncReceiver<int>>(io.get_executor(), std::move(tx_rx.second));
  auto token = std::make_shared<int>(0);
  bool called = false;
  rx->async_recv([&called, token](error_code, std::optional<int>) { called = true; });
  kick(tx, *rx);
  rx.reset();
  EXPECT_EQ(token.use_count(), 1);  // the handler went with the object
  io.run();                         // runs the posted step
  EXPECT_FALSE(called);
  EXPECT_EQ(tx.try_send(1).status(), leanchan::SendStatus::kClosed);
}

TEST(AsioLifetime, ReceiverDestroyedAfterASendKickedItsPendingReceive) {
  destroy_receiver_after_kick([](leanchan::Sender<int>& tx, AsyncReceiver<int>&) {
    ASSERT_TRUE(tx.try_send(5).ok());  // fires the notifier: the kick posts a step
  });
}

TEST(AsioLifetime, ReceiverDestroyedAfterCancelKickedItsPendingReceive) {
  destroy_receiver_after_kick([](leanchan::Sender<int>&, AsyncReceiver<int>& rx) {
    rx.cancel();  // the kick posts a step
  });
}

TEST(AsioLifetime, PendingSendIsSentByTheReceiveThatFreesItsSlot) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(1);
  auto& raw_tx = tx_rx.first;
  auto& raw_rx = tx_rx.second;
  ASSERT_TRUE(raw_tx.try_send(0).ok());  // full
  auto tx = std::make_unique<AsyncSender<int>>(io.get_executor(), raw_tx);
  auto token = std::make_shared<int>(0);
  bool called = false;
  tx->async_send(1, [&called, token](error_code) { called = true; });
  ASSERT_EQ(raw_rx.try_recv().value(), 0);  // frees the slot: the pending send's 1 goes in
  // There before the sender's step has run (the io_context has not run yet).
  ASSERT_EQ(raw_rx.try_recv().value(), 1);
  EXPECT_FALSE(called);
  tx.reset();  // its handler is destroyed uncalled; the send stays done
  EXPECT_EQ(token.use_count(), 1);
  io.run();
  EXPECT_FALSE(called);
  EXPECT_EQ(raw_tx.capacity(), raw_tx.max_capacity());
  EXPECT_EQ(raw_rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  ASSERT_TRUE(raw_tx.try_send(2).ok());
  EXPECT_EQ(raw_rx.try_recv().value(), 2);
}

TEST(AsioLifetime, SenderDestroyedAfterCancelKickedItsPendingSend) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<int>(1);
  auto& raw_tx = tx_rx.first;
  auto& raw_rx = tx_rx.second;
  ASSERT_TRUE(raw_tx.try_send(0).ok());
  auto tx = std::make_unique<AsyncSender<int>>(io.get_executor(), raw_tx);
  auto token = std::make_shared<int>(0);
  bool called = false;
  tx->async_send(1, [&called, token](error_code) { called = true; });
  tx->cancel();
  tx.reset();
  EXPECT_EQ(token.use_count(), 1);
  io.run();
  EXPECT_FALSE(called);
  EXPECT_EQ(raw_rx.try_recv().value(), 0);
  EXPECT_EQ(raw_rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(raw_tx.capacity(), raw_tx.max_capacity());
}

// A message that counts the live ones (moved-from ones do not count).
struct Counted {
  explicit Counted(std::atomic<int>* counter) : live(counter) { live->fetch_add(1); }
  Counted(Counted&& other) noexcept : live(std::exchange(other.live, nullptr)) {}
  Counted& operator=(Counted&& other) noexcept {
    if (this != &other) {
      reset();
      live = std::exchange(other.live, nullptr);
    }
    return *this;
  }
  ~Counted() { reset(); }
  void reset() noexcept {
    if (live != nullptr) std::exchange(live, nullptr)->fetch_sub(1);
  }
  std::atomic<int>* live;
};

// Counts up `gone` when the last copy of the handler that holds it is
// destroyed (after it ran, or uncalled).
std::shared_ptr<void> handler_gone_signal(std::atomic<int>& gone) {
  return std::shared_ptr<void>(new int(0), [&gone](void* p) {
    delete static_cast<int*>(p);
    gone.fetch_add(1);
    gone.notify_all();
  });
}

void wait_for(std::atomic<int>& counter, int value) {
  for (int now = counter.load(); now != value; now = counter.load()) counter.wait(now);
}

TEST(AsioLifetime, DestroyedWhileFourThreadsRunTheKickedStep) {
  // Each round kicks a pending operation (a message or a freed slot, or
  // cancel()) and destroys its object at once while four threads run the
  // io_context: the step either completes the operation first (its handler
  // runs once) or finds the object gone (the handler is destroyed uncalled).
  constexpr int kRounds = 200;
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::vector<std::thread> pool;
  for (int i = 0; i < 4; ++i) pool.emplace_back([&io] { io.run(); });
  std::atomic<int> live{0};  // messages not yet destroyed
  std::atomic<int> gone{0};  // handlers destroyed (after running, or uncalled)
  int completed_first = 0;   // rounds whose step won the race
  // Yielding a varying number of times between the kick and the
  // destruction lets the step win some rounds and lose others (timing
  // only: the outcome of each round is checked whichever wins).
  const auto jitter = [](int round) {
    for (int i = 0; i < round % 8; ++i) std::this_thread::yield();
  };
  for (int round = 0; round < kRounds; ++round) {
    const bool by_cancel = round % 4 >= 2;
    std::atomic<int> calls{0};
    std::atomic<int> ok{0};  // completions without error (a message received or sent)
    if (round % 2 == 0) {
      auto tx_rx = leanchan::channel<Counted>(1);
      auto rx =
          std::make_unique<AsyncReceiver<Counted>>(io.get_executor(), std::move(tx_rx.second));
      rx->async_recv(
          [&, signal = handler_gone_signal(gone)](error_code ec, std::optional<Counted> value) {
            calls.fetch_add(1);
            if (!ec && value.has_value()) ok.fetch_add(1);
            EXPECT_EQ(ec == asio::error::operation_aborted, !value.has_value());
          });
      if (by_cancel) {
        rx->cancel();
      } else {
        EXPECT_TRUE(tx_rx.first.try_send(Counted(&live)).ok());
      }
      jitter(round / 4);
      rx.reset();
      wait_for(gone, round + 1);
      // A cancelled receive takes nothing; a kicked one takes the message at
      // most once (otherwise it stayed in the channel, gone with it).
      EXPECT_EQ(ok.load(), by_cancel ? 0 : calls.load()) << "round " << round;
    } else {
      auto tx_rx = leanchan::channel<Counted>(1);
      auto& raw_tx = tx_rx.first;
      auto& raw_rx = tx_rx.second;
      EXPECT_TRUE(raw_tx.try_send(Counted(&live)).ok());  // full
      auto tx = std::make_unique<AsyncSender<Counted>>(io.get_executor(), raw_tx);
      tx->async_send(Counted(&live), [&, signal = handler_gone_signal(gone)](error_code ec) {
        calls.fetch_add(1);
        if (!ec) ok.fetch_add(1);
      });
      if (by_cancel) {
        tx->cancel();
      } else {
        EXPECT_TRUE(raw_rx.try_recv().ok());  // hands the freed slot over: a kick
      }
      jitter(round / 4);
      tx.reset();
      wait_for(gone, round + 1);
      int in_channel = 0;
      while (raw_rx.try_recv().ok()) ++in_channel;
      // A cancelled send sends nothing; one handed a slot was sent by the
      // receive that freed it, whether its handler ran or was destroyed;
      // every slot is back.
      EXPECT_EQ(ok.load(), by_cancel ? 0 : calls.load()) << "round " << round;
      EXPECT_EQ(in_channel, 1) << "round " << round;
      EXPECT_EQ(raw_tx.capacity(), raw_tx.max_capacity()) << "round " << round;
      EXPECT_TRUE(raw_tx.try_send(Counted(&live)).ok()) << "round " << round;
    }
    EXPECT_LE(calls.load(), 1) << "round " << round;
    completed_first += calls.load();
  }
  work.reset();
  for (auto& t : pool) t.join();
  EXPECT_EQ(gone.load(), kRounds);  // every handler destroyed exactly once
  EXPECT_EQ(live.load(), 0);        // every message destroyed exactly once
  RecordProperty("rounds_completed_before_destruction", completed_first);
}

}  // namespace

namespace {

// A sender stalled between its claim and its publish (its message's move
// into the slot waits for the test) with a later message queued behind
// it: async_recv must not hold the io thread (poll_recv's kBusy); the
// stalled publish kicks the resumption. Before, the receive waited inside
// io.poll() for a sender that only this thread could release: a hang.
using leanchan::testing::StallGate;
using StallingInt = leanchan::testing::Stalling;

TEST(AsioReceiver, AStalledSenderDoesNotHoldTheIoThread) {
  asio::io_context io;
  auto tx_rx = leanchan::channel<StallingInt>(8);
  auto& tx = tx_rx.first;
  AsyncReceiver<StallingInt> rx(io.get_executor(), std::move(tx_rx.second));
  StallGate gate;
  std::thread stalled([&] { EXPECT_TRUE(tx.try_send(StallingInt{1, &gate}).ok()); });
  gate.wait_entered();
  auto tx2 = tx;
  ASSERT_TRUE(tx2.try_send(StallingInt{2, nullptr}).ok());
  std::vector<int> got;
  rx.async_recv([&](error_code ec, std::optional<StallingInt> value) {
    EXPECT_FALSE(ec);
    ASSERT_TRUE(value.has_value());
    got.push_back(value->value);
  });
  io.poll();  // runs what is ready; must not wait for the stalled sender
  EXPECT_TRUE(got.empty());
  gate.release();
  stalled.join();  // its publish kicked the receive
  io.restart();
  io.run_one();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], 1);
}

}  // namespace
