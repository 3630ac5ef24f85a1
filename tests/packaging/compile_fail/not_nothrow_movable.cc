// SPDX-License-Identifier: MIT
// Must fail: a message whose move constructor may throw.
#include "leanchan/channel.h"

struct Throwing {
  Throwing() = default;
  Throwing(Throwing&&) noexcept(false) {}
};

int main() {
  auto [tx, rx] = leanchan::channel<Throwing, 4>(4);
  return 0;
}
