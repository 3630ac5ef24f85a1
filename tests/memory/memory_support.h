// SPDX-License-Identifier: MIT
// Shared by the tests of MemoryBudget and BlockPool: a channel's byte
// figures from docs/memory.md's formula, and a channel's full drain.
#ifndef LEANCHAN_TESTS_MEMORY_MEMORY_SUPPORT_H_
#define LEANCHAN_TESTS_MEMORY_MEMORY_SUPPORT_H_

#include <algorithm>
#include <cstddef>

#include "leanchan/block_pool.h"
#include "leanchan/channel.h"

namespace leanchan::testing {

// docs/memory.md: with a memory resource, the control block is 64 bytes
// plus the resource pointer, and a block of a channel<T, B>(capacity) is
// 16 + b*S bytes, b = min(B, capacity), S = sizeof(T) (alignof(T) <= 16).
inline constexpr std::size_t kControlBytes = 64 + sizeof(void*);
// Listed in a ChannelRegistry: 64 bytes, the resource pointer, and the
// registry's link (its pointer and the channel's index in its list).
inline constexpr std::size_t kRegisteredControlBytes = 64 + 3 * sizeof(void*);
template <class T, std::size_t B>
constexpr std::size_t block_bytes(std::size_t capacity) {
  return 16 + std::min(B, capacity) * sizeof(T);
}
// A pool that gives every emptied page back at once (no page kept for
// reuse, as BlockPoolOptions' default keeps 8): the tests of the give-back.
inline constexpr BlockPoolOptions kGiveBackAtOnce{.keep_empty_pages = 0};

// Blocks a channel holds when `messages` are queued from an empty start:
// ceil(messages / b).
template <std::size_t B>
constexpr std::size_t blocks_for(std::size_t capacity, std::size_t messages) {
  const std::size_t b = std::min(B, capacity);
  return (messages + b - 1) / b;
}

// Takes every queued message, then finds the channel empty (so a
// Retention::kKeepOne channel lets its spare go: leanchan/fwd.h). Returns
// how many it took.
template <class T, std::size_t B>
std::size_t drain(Receiver<T, B>& rx) {
  std::size_t taken = 0;
  while (rx.try_recv().ok()) ++taken;
  return taken;
}

}  // namespace leanchan::testing

#endif  // LEANCHAN_TESTS_MEMORY_MEMORY_SUPPORT_H_
