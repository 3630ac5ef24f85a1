// SPDX-License-Identifier: MIT
// ThreadPoolExecutor::join() returns only after the run in progress has
// returned. The run is let go from inside join() (the kPoolJoining test
// point, after stop() and before the workers are joined), so a join that
// did not wait for the workers would return while the run is still
// waking up, and see it unfinished. (Letting the run go from the test's
// own thread could not tell: the run might end before join() began.)
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "leanchan/executor.h"
#include "leanchan/internal/test_point.h"
#include "test_point_support.h"

namespace {

using leanchan::internal::TestPoint;
using leanchan::testing::ScopedTestPointHook;

std::atomic<bool> g_running{false};
std::atomic<bool> g_release{false};
std::atomic<bool> g_returned{false};

void wait_for(const std::atomic<bool>& flag) {
  while (!flag.load()) flag.wait(false);
}
void raise(std::atomic<bool>& flag) {
  flag.store(true);
  flag.notify_all();
}

void release_in_join(TestPoint point) {
  if (point == TestPoint::kPoolJoining) raise(g_release);
}

struct BlockingTask : leanchan::ExecutorTask {
  BlockingTask() {
    run = [](leanchan::ExecutorTask*) {
      raise(g_running);
      wait_for(g_release);
      g_returned.store(true);
    };
  }
};

TEST(ThreadPoolJoin, ReturnsOnlyAfterTheRunInProgressHasReturned) {
  leanchan::ThreadPoolExecutor pool(2);
  BlockingTask task;
  ScopedTestPointHook hook(&release_in_join);
  pool.schedule(task);
  wait_for(g_running);
  bool returned_at_join = false;
  std::thread joiner([&] {
    pool.join();  // lets the run go (kPoolJoining), then waits for it
    returned_at_join = g_returned.load();
  });
  joiner.join();
  EXPECT_TRUE(g_release.load());  // the run was let go from inside join()
  EXPECT_TRUE(returned_at_join);
}

}  // namespace
