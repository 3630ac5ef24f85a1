// leanchan/internal/wait_node.h: a readiness registration, owned by the
// caller (leanchan::Notifier wraps one). Linked into the channel's waiter
// list under the list lock; firing calls `callback(context)` outside it.
#ifndef LEANCHAN_INTERNAL_WAIT_NODE_H_
#define LEANCHAN_INTERNAL_WAIT_NODE_H_

#include <atomic>
#include <cstdint>

namespace leanchan::internal {

struct WaitNode {
  enum class Kind : std::uint8_t { kReceive, kSend };
  // Send nodes: kIdle -> kLinked (armed) -> kFiring (popped, callback
  // running) -> kIdle. kFiringAwaited: a canceller waits for the callback to
  // return (futex on this word).
  static constexpr std::uint32_t kIdle = 0;
  static constexpr std::uint32_t kLinked = 1;
  static constexpr std::uint32_t kFiring = 2;
  static constexpr std::uint32_t kFiringAwaited = 3;

  void (*callback)(void*) = nullptr;
  void* context = nullptr;
  WaitNode* next = nullptr;  // list lock
  WaitNode* prev = nullptr;  // list lock
  std::atomic<std::uint32_t> state{kIdle};
  Kind kind = Kind::kReceive;
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_WAIT_NODE_H_
