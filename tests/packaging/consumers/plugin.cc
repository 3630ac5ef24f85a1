// SPDX-License-Identifier: MIT
// A shared object (a plugin) that links leanchan: with the static library
// this needs position-independent code in libleanchan.a.
#include "leanchan/channel.h"

extern "C" __attribute__((visibility("default"))) long plugin_sum(int count) {
  auto [tx, rx] = leanchan::channel<int>(static_cast<std::size_t>(count));
  for (int i = 1; i <= count; ++i) (void)tx.try_send(int{i});
  long sum = 0;
  for (auto value = rx.try_recv(); value.ok(); value = rx.try_recv()) sum += value.value();
  return sum;
}
