// SPDX-License-Identifier: MIT
// A receive that never waits (Receiver::poll_recv), and the library's own
// receives on an event loop's thread (the coroutine awaitable): a producer
// stalled between claiming its position and publishing its value must not
// hold them. try_recv waits there (it is linearizable: a later send may
// have completed); these return kBusy, or suspend, and the stalled
// sender's publish fires the notifier.
//
// The stall: a message whose move into its slot (which happens after the
// claim) waits until the test opens a gate. The test thread is the only
// one that opens it, so a receive that waits on the stalled sender hangs
// the test (and fails it at the ctest timeout) instead of passing.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using leanchan::PollStatus;

using leanchan::testing::StallGate;
using leanchan::testing::Stalling;

std::atomic<int> g_calls{0};
void on_ready(void*) noexcept {
  g_calls.fetch_add(1);
}

// Sender A claims position 0 and stalls in the move; the test thread then
// sends position 1, which is published.
struct StalledProducer {
  leanchan::Sender<Stalling, 8>& tx;
  StallGate gate;
  std::thread thread;
  explicit StalledProducer(leanchan::Sender<Stalling, 8>& sender) : tx(sender) {
    thread = std::thread([this] { EXPECT_TRUE(tx.try_send(Stalling{1, &gate}).ok()); });
    gate.wait_entered();
    EXPECT_TRUE(tx.try_send(Stalling{2, nullptr}).ok());
  }
  void finish() {
    gate.release();
    thread.join();
  }
};

TEST(PollRecv, AStalledProducerDoesNotHoldIt) {
  auto [tx, rx] = leanchan::channel<Stalling, 8>(8);
  leanchan::Notifier notifier{&on_ready, nullptr};
  rx.set_notifier(notifier);
  g_calls = 0;
  StalledProducer stalled(tx);
  EXPECT_EQ(rx.poll_recv().status(), PollStatus::kBusy);
  EXPECT_FALSE(rx.arm_notifier()) << "nothing published at the receiver's position yet";
  stalled.finish();  // the publish fires the armed notifier
  EXPECT_EQ(g_calls.load(), 1);
  auto first = rx.poll_recv();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.value().value, 1);
  auto second = rx.poll_recv();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value().value, 2);
  EXPECT_EQ(rx.poll_recv().status(), PollStatus::kEmpty);
  rx.clear_notifier();
  { auto gone = std::move(tx); }
  EXPECT_EQ(rx.poll_recv().status(), PollStatus::kDisconnected);
  EXPECT_EQ(leanchan::to_string(PollStatus::kBusy), "busy");
}

TEST(PollRecv, AStalledProducerDoesNotHoldTheRecvAwaitable) {
  auto [tx, rx] = leanchan::channel<Stalling, 8>(8);
  leanchan::ManualExecutor executor;
  std::optional<int> got;
  auto consumer = [](leanchan::Receiver<Stalling, 8>& receiver, leanchan::Executor& on,
                     std::optional<int>& out) -> leanchan::testing::Task {
    std::optional<Stalling> message = co_await receiver.async_recv(on);
    if (message) out = message->value;
  };
  StalledProducer stalled(tx);
  leanchan::testing::Task task = consumer(rx, executor, got);
  task.handle.resume();  // runs to the co_await: suspends, does not wait
  EXPECT_FALSE(task.done());
  EXPECT_FALSE(got.has_value());
  stalled.finish();  // the publish schedules the coroutine
  executor.run_pending();
  ASSERT_TRUE(task.done());
  EXPECT_EQ(got, 1);
  EXPECT_EQ(rx.try_recv().value().value, 2);
}

}  // namespace
