// SPDX-License-Identifier: MIT
// notify_when_room returns a RoomStatus, not a bool: the loop that treats
// "not armed" as "look again with a plain try_send" spins forever while
// the notifier holds the slot, so it must not compile.
#include "leanchan/channel.h"

int main() {
  auto [tx, rx] = leanchan::channel<int>(1);
  leanchan::Notifier notifier{[](void*) noexcept {}, nullptr};
  int value = 1;
#if defined(LEANCHAN_TEST_AS_BOOL)
  while (!tx.try_send(int{value}).ok()) {
    if (!tx.notify_when_room(notifier)) break;  // error: no conversion to bool
  }
#else
  while (!tx.try_send(int{value}, notifier).ok()) {
    if (tx.notify_when_room(notifier) == leanchan::RoomStatus::kArmed) break;
  }
#endif
  (void)tx.cancel_notify(notifier);
  return 0;
}
