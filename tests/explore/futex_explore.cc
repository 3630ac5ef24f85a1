// SPDX-License-Identifier: MIT
// The futex of the explorer build (replaces channel/src/futex.cc there): a
// wait blocks the thread in the scheduler until a matching wake, or, for a
// timed wait, until the scheduler lets the deadline pass.
#include "leanchan/internal/futex.h"

namespace leanchan::internal {

bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                const Deadline* deadline) noexcept {
  const bool timed = deadline != nullptr && *deadline != Deadline::max();
  return explore::futex_wait(word.raw(), expected, timed);
}

void futex_wake(Atomic<std::uint32_t>& word, int count) noexcept {
  explore::futex_wake(word.raw(), count);
}

}  // namespace leanchan::internal
