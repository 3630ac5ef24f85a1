// leanchan/internal/futex.h: sleeping on a 32-bit atomic word (Linux futex).
//
// The channel's waits all follow one pattern: announce the wait, re-check the
// condition, then sleep only while the word still holds the value that was
// seen. The kernel compares the word and sleeps atomically, so a wake that
// changes the word between the re-check and the sleep is never lost.
// Nothing here allocates; a word nobody waits on costs nothing but itself.
#ifndef LEANCHAN_INTERNAL_FUTEX_H_
#define LEANCHAN_INTERNAL_FUTEX_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace leanchan::internal {

using Deadline = std::chrono::steady_clock::time_point;

// Sleeps while `word` == `expected`, until woken, or until `deadline` (null:
// no deadline). Returns false only when the deadline has passed. May return
// true spuriously: callers re-check their condition in a loop.
bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                const Deadline* deadline) noexcept;

// Wakes up to `count` threads sleeping on `word`.
void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

// Converts a deadline on any clock to the steady clock the futex sleeps on.
template <class Clock, class Duration>
Deadline to_steady_deadline(const std::chrono::time_point<Clock, Duration>& deadline) noexcept {
  if constexpr (std::is_same_v<Clock, std::chrono::steady_clock>) {
    return std::chrono::time_point_cast<std::chrono::steady_clock::duration>(deadline);
  } else {
    const auto remaining = deadline - Clock::now();
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(remaining);
  }
}

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_FUTEX_H_
