// SPDX-License-Identifier: MIT
// A consumer of leanchan::asio: an Asio coroutine receives what a thread
// sends (co_await with asio::use_awaitable: needs the coroutine support
// that the leanchan::asio target carries on Clang).
#include <asio.hpp>
#include <cstdio>
#include <optional>
#include <thread>

#include "leanchan/asio.h"
#include "leanchan/channel.h"

int main() {
  asio::io_context io;
  auto [tx, raw_rx] = leanchan::channel<int>(8);
  leanchan::asio::AsyncReceiver<int> rx(io.get_executor(), std::move(raw_rx));
  long sum = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        while (std::optional<int> value = co_await rx.async_recv(asio::use_awaitable))
          sum += *value;
      },
      asio::detached);
  std::thread producer([tx = std::move(tx)]() mutable {
    for (int i = 1; i <= 100; ++i) (void)tx.send(i);
  });
  io.run();
  producer.join();
  std::printf("asio consumer received sum=%ld\n", sum);
  return sum == 5050 ? 0 : 1;
}
