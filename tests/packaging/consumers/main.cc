// SPDX-License-Identifier: MIT
// A consumer program: links leanchan::channel and moves a few messages.
#include <cstdio>
#include <thread>

#include "leanchan/channel.h"
#include "leanchan/version.h"

static_assert(LEANCHAN_VERSION_MAJOR >= 0 && sizeof(LEANCHAN_VERSION_STRING) > 1,
              "leanchan/version.h is installed and names a version");

int main() {
  auto [tx, rx] = leanchan::channel<int>(16);
  std::thread producer([tx = std::move(tx)]() mutable {
    for (int i = 1; i <= 100; ++i) (void)tx.send(i);
  });
  long sum = 0;
  while (auto value = rx.recv()) sum += *value;
  producer.join();
  std::printf("consumer received sum=%ld\n", sum);
  return sum == 5050 ? 0 : 1;
}
