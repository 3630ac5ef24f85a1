// SPDX-License-Identifier: MIT
// Coroutine send and receive: backpressure, close while suspended, and
// cancellation by destroying a suspended coroutine.
#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <exception>
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

}  // namespace
