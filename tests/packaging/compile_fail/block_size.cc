// SPDX-License-Identifier: MIT
// Compiled with LEANCHAN_TEST_BLOCK_SIZE set to 0, 33 or a valid size: the
// invalid ones must fail with the static_assert's message (see CMakeLists.txt).
#include "leanchan/channel.h"

int main() {
  auto [tx, rx] = leanchan::channel<int, LEANCHAN_TEST_BLOCK_SIZE>(4);
  return tx.try_send(1).ok() && rx.try_recv().ok() ? 0 : 1;
}
