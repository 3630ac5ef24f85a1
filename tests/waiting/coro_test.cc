// SPDX-License-Identifier: MIT
// Coroutine send and receive: backpressure, close while suspended,
// cancellation by destroying a suspended coroutine, and the executor calls
// an await makes.
#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using leanchan::testing::Task;

// Starts `task` on `executor` (its first resume runs there).
struct Starter : leanchan::ExecutorTask {
  explicit Starter(std::coroutine_handle<> h) : handle(h) {
    run = [](leanchan::ExecutorTask* self) { static_cast<Starter*>(self)->handle.resume(); };
  }
  std::coroutine_handle<> handle;
};

// Runs `task` on `executor` until it first suspends (or finishes).
void start_and_run(Task& task, leanchan::ManualExecutor& executor) {
  Starter start(task.handle);
  executor.schedule(start);
  EXPECT_EQ(executor.run_pending(), 1u);
}

Task consume(leanchan::Receiver<int, 2>& rx, leanchan::Executor& executor, std::vector<int>& out,
             std::atomic<bool>& finished) {
  while (std::optional<int> value = co_await rx.async_recv(executor)) out.push_back(*value);
  finished = true;
  finished.notify_all();
}

TEST(Coroutines, AsyncRecvTakesEveryMessageThenSeesTheEnd) {
  const int total = std::max(100, static_cast<int>(20000 * leanchan::testing::stress_scale()));
  auto [tx, rx] = leanchan::channel<int, 2>(4);
  leanchan::ManualExecutor executor;
  std::vector<int> out;
  std::atomic<bool> finished{false};
  Task task = consume(rx, executor, out, finished);
  Starter start(task.handle);
  executor.schedule(start);
  std::thread loop([&executor] { executor.run(); });
  std::thread producer([tx = std::move(tx), total]() mutable {
    for (int i = 0; i < total; ++i) ASSERT_TRUE(tx.send(i).ok());
  });
  producer.join();
  finished.wait(false);
  executor.stop();
  loop.join();
  ASSERT_EQ(out.size(), static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], i);
  EXPECT_TRUE(task.done());
}

Task produce(leanchan::Sender<int, 1>& tx, leanchan::Executor& executor, int total,
             std::atomic<int>& sent, std::atomic<bool>& finished) {
  for (int i = 0; i < total; ++i) {
    auto result = co_await tx.async_send(i, executor);
    if (!result.ok()) break;
    sent.fetch_add(1);
  }
  finished = true;
  finished.notify_all();
}

Task send_one(leanchan::Sender<int>& tx, leanchan::Executor& executor, int value,
              std::optional<leanchan::SendStatus>& status) {
  status = (co_await tx.async_send(value, executor)).status();
}

// A waiting async_send's value goes in when the receive frees its slot,
// before the executor runs the coroutine again (the receiver need not wait
// for it); the coroutine then resumes with kOk.
TEST(Coroutines, AWaitingSendIsSentByTheReceiveThatFreesItsSlot) {
  auto [tx, rx] = leanchan::channel<int>(1);
  ASSERT_TRUE(tx.try_send(0).ok());  // full
  leanchan::ManualExecutor executor;
  std::optional<leanchan::SendStatus> status;
  Task task = send_one(tx, executor, 1, status);
  start_and_run(task, executor);  // suspended: the channel is full
  EXPECT_FALSE(status.has_value());
  EXPECT_EQ(rx.try_recv().value(), 0);  // frees the slot
  auto second = rx.try_recv();          // already there: the coroutine has not run
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value(), 1);
  EXPECT_FALSE(status.has_value());
  EXPECT_EQ(executor.run_pending(), 1u);
  EXPECT_EQ(status, leanchan::SendStatus::kOk);
  EXPECT_TRUE(task.done());
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
}

TEST(Coroutines, AsyncSendWaitsForRoomWithoutBlockingItsThread) {
  const int total = std::max(100, static_cast<int>(20000 * leanchan::testing::stress_scale()));
  auto [tx, rx] = leanchan::channel<int, 1>(2);
  leanchan::ManualExecutor executor;
  std::atomic<int> sent{0};
  std::atomic<bool> finished{false};
  Task task = produce(tx, executor, total, sent, finished);
  Starter start(task.handle);
  executor.schedule(start);
  std::thread loop([&executor] { executor.run(); });
  for (int i = 0; i < total; ++i) {
    auto value = rx.recv();
    ASSERT_TRUE(value.has_value());
    ASSERT_EQ(*value, i);
  }
  finished.wait(false);
  executor.stop();
  loop.join();
  EXPECT_EQ(sent.load(), total);
}

Task send_one(leanchan::Sender<int, 1>& tx, leanchan::Executor& executor,
              leanchan::SendStatus& status, int& handed_back) {
  auto result = co_await tx.async_send(42, executor);
  status = result.status();
  if (!result.ok()) handed_back = result.value();
}

TEST(Coroutines, CloseWakesASuspendedSenderWithItsValue) {
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.send(1).ok());  // full
  leanchan::ManualExecutor executor;
  leanchan::SendStatus status = leanchan::SendStatus::kOk;
  int handed_back = 0;
  Task task = send_one(tx, executor, status, handed_back);
  start_and_run(task, executor);
  EXPECT_FALSE(task.done());
  rx.close();
  EXPECT_EQ(executor.run_pending(), 1u);  // resumed by the close
  EXPECT_TRUE(task.done());
  EXPECT_EQ(status, leanchan::SendStatus::kClosed);
  EXPECT_EQ(handed_back, 42);
}

Task recv_one(leanchan::Receiver<int, 2>& rx, leanchan::Executor& executor, std::optional<int>& out,
              bool& resumed) {
  out = co_await rx.async_recv(executor);
  resumed = true;
}

TEST(Coroutines, DestroyingASuspendedReceiverCoroutineCancelsItsWait) {
  auto [tx, rx] = leanchan::channel<int, 2>(4);
  leanchan::ManualExecutor executor;
  std::optional<int> out;
  bool resumed = false;
  {
    Task task = recv_one(rx, executor, out, resumed);
    start_and_run(task, executor);
    EXPECT_FALSE(task.done());
  }                              // destroyed while suspended
  ASSERT_TRUE(tx.send(7).ok());  // no notifier attached any more
  EXPECT_EQ(executor.run_pending(), 0u);
  EXPECT_FALSE(resumed);
  EXPECT_EQ(rx.try_recv().value(), 7);  // the message was not lost
}

TEST(Coroutines, DestroyingACoroutineWhoseWakeIsQueuedWithdrawsIt) {
  auto [tx, rx] = leanchan::channel<int, 2>(4);
  leanchan::ManualExecutor executor;
  std::optional<int> out;
  bool resumed = false;
  {
    Task task = recv_one(rx, executor, out, resumed);
    start_and_run(task, executor);
    ASSERT_TRUE(tx.send(8).ok());  // queues the wake-up task
  }                                // destroyed with its task queued
  EXPECT_EQ(executor.run_pending(), 0u);
  EXPECT_FALSE(resumed);
  EXPECT_EQ(rx.try_recv().value(), 8);
}

TEST(Coroutines, SuspendedReceiverSeesTheEnd) {
  auto [tx, rx] = leanchan::channel<int, 2>(4);
  leanchan::ManualExecutor executor;
  std::optional<int> out = 5;
  bool resumed = false;
  Task task = recv_one(rx, executor, out, resumed);
  start_and_run(task, executor);
  { auto gone = std::move(tx); }
  EXPECT_EQ(executor.run_pending(), 1u);
  EXPECT_TRUE(resumed);
  EXPECT_EQ(out, std::nullopt);
}

// Forwards to a ManualExecutor and counts the calls made on it: the
// executor traffic of the awaitables (a thread pool takes its lock for each).
class CountingExecutor final : public leanchan::Executor {
 public:
  void schedule(leanchan::ExecutorTask& task) noexcept override {
    ++schedules;
    inner.schedule(task);
  }
  void cancel(leanchan::ExecutorTask& task) noexcept override {
    ++cancels;
    inner.cancel(task);
  }
  leanchan::ManualExecutor inner;
  int schedules = 0;
  int cancels = 0;
};

Task send_count(leanchan::Sender<int, 2>& tx, leanchan::Executor& executor, int count, int& sent) {
  for (int i = 0; i < count; ++i) {
    if ((co_await tx.async_send(i, executor)).ok()) ++sent;
  }
}

Task reserve_count(leanchan::Sender<int, 2>& tx, leanchan::Executor& executor, int count,
                   int& sent) {
  for (int i = 0; i < count; ++i) {
    leanchan::Permit<int, 2> permit = co_await tx.async_reserve(executor);
    if (permit.status() == leanchan::SendStatus::kOk) {
      permit.send(i);
      ++sent;
    }
  }
}

Task recv_count(leanchan::Receiver<int, 2>& rx, leanchan::Executor& executor, int count,
                int& received) {
  for (int i = 0; i < count; ++i) {
    if (std::optional<int> value = co_await rx.async_recv(executor); value == i) ++received;
  }
}

// A send, reservation or receive that finds room or a message at once never
// waited: it neither schedules nor cancels anything on its executor.
TEST(Coroutines, AwaitsThatDoNotWaitLeaveTheExecutorAlone) {
  constexpr int kCount = 64;
  auto [tx, rx] = leanchan::channel<int, 2>(2 * kCount);
  CountingExecutor executor;
  int sent = 0;
  int received = 0;
  Task sender = send_count(tx, executor, kCount, sent);
  start_and_run(sender, executor.inner);
  EXPECT_TRUE(sender.done());
  Task reserver = reserve_count(tx, executor, kCount, sent);
  start_and_run(reserver, executor.inner);
  EXPECT_TRUE(reserver.done());
  EXPECT_EQ(sent, 2 * kCount);
  EXPECT_EQ(executor.schedules, 0);
  EXPECT_EQ(executor.cancels, 0);
  Task receiver = recv_count(rx, executor, kCount, received);
  start_and_run(receiver, executor.inner);
  EXPECT_TRUE(receiver.done());
  EXPECT_EQ(received, kCount);
  EXPECT_EQ(executor.schedules, 0);
  EXPECT_EQ(executor.cancels, 0);
}

// A send that waits once costs one schedule (the slot handed to it) and one
// cancel (withdrawing a second request that might have come meanwhile), as
// does a reservation.
TEST(Coroutines, ASendThatWaitsOnceSchedulesOnceAndCancelsOnce) {
  auto [tx, rx] = leanchan::channel<int, 2>(1);
  ASSERT_TRUE(tx.send(-1).ok());  // full
  CountingExecutor executor;
  int sent = 0;
  Task sender = send_count(tx, executor, 1, sent);
  start_and_run(sender, executor.inner);
  EXPECT_FALSE(sender.done());
  EXPECT_EQ(rx.try_recv().value(), -1);  // hands the slot to the waiting send
  EXPECT_EQ(executor.inner.run_pending(), 1u);
  EXPECT_TRUE(sender.done());
  EXPECT_EQ(sent, 1);
  EXPECT_EQ(executor.schedules, 1);
  EXPECT_EQ(executor.cancels, 1);

  Task reserver = reserve_count(tx, executor, 1, sent);  // full again (the 0 sent)
  start_and_run(reserver, executor.inner);
  EXPECT_FALSE(reserver.done());
  EXPECT_EQ(rx.try_recv().value(), 0);  // hands the slot to the waiting reservation
  EXPECT_EQ(executor.inner.run_pending(), 1u);
  EXPECT_TRUE(reserver.done());
  EXPECT_EQ(sent, 2);
  EXPECT_EQ(rx.try_recv().value(), 0);
  EXPECT_EQ(executor.schedules, 2);
  EXPECT_EQ(executor.cancels, 2);
}

}  // namespace
