// SPDX-License-Identifier: MIT
// A consumer program: links leanchan::async and runs a producer and a
// consumer as spawned tasks on a thread pool.
#include <cstdio>
#include <optional>
#include <utility>

#include "leanchan/async/task.h"
#include "leanchan/channel.h"

namespace async = leanchan::async;

async::Task<> produce(leanchan::Sender<int> tx, leanchan::Executor& ex) {
  for (int i = 1; i <= 100; ++i) {
    if (!(co_await tx.async_send(i, ex)).ok()) co_return;
  }
}

async::Task<long> consume(leanchan::Receiver<int> rx, leanchan::Executor& ex) {
  long sum = 0;
  while (std::optional<int> v = co_await rx.async_recv(ex)) sum += *v;
  co_return sum;
}

int main() {
  leanchan::ThreadPoolExecutor pool(2);
  auto [tx, rx] = leanchan::channel<int>(8);
  async::JoinHandle<long> total = async::spawn(pool, consume(std::move(rx), pool));
  async::spawn(pool, produce(std::move(tx), pool));
  const long sum = total.join();
  std::printf("async consumer received sum=%ld\n", sum);
  return sum == 5050 ? 0 : 1;
}
