// SPDX-License-Identifier: MIT
// leanchan/internal/futex.h: sleeping on a 32-bit atomic word.
//
// The channel's waits all follow one pattern: announce the wait, re-check the
// condition, then sleep only while the word still holds the value that was
// seen. The backend compares the word and sleeps atomically, so a wake that
// changes the word between the re-check and the sleep is never lost.
// Backends (CMake option LEANCHAN_WAIT_BACKEND): Linux futexes
// (src/futex.cc, the default on Linux) or a portable parking table of
// condition variables (src/wait_portable.cc, any C++20 system).
// Nothing here allocates; a word nobody waits on costs nothing but itself.
#ifndef LEANCHAN_INTERNAL_FUTEX_H_
#define LEANCHAN_INTERNAL_FUTEX_H_

#include <chrono>
#include <cstdint>
#include <type_traits>

#include "leanchan/export.h"
#include "leanchan/internal/atomic.h"

namespace leanchan::internal {

using Deadline = std::chrono::steady_clock::time_point;

// Sleeps while `word` == `expected`, until woken, or until `deadline` (null
// or Deadline::max(): no deadline). Returns false only when the deadline has
// passed. May return true spuriously: callers re-check their condition in a
// loop.
LEANCHAN_API bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                             const Deadline* deadline) noexcept;

// Wakes up to `count` threads sleeping on `word`.
LEANCHAN_API void futex_wake(Atomic<std::uint32_t>& word, int count) noexcept;

// The steady-clock deadline `timeout` from now. Saturates: a timeout that
// reaches past the clock's range (nanoseconds::max(), hours::max(),
// years(1000)) gives Deadline::max(), which waits forever; a zero or
// negative timeout gives now. Compared in long double nanoseconds, so no
// conversion can overflow.
template <class Rep, class Period>
Deadline deadline_after(const std::chrono::duration<Rep, Period>& timeout) noexcept {
  using Nanoseconds = std::chrono::duration<long double, std::nano>;
  const Deadline now = std::chrono::steady_clock::now();
  const Nanoseconds wanted = std::chrono::duration_cast<Nanoseconds>(timeout);
  if (!(wanted > Nanoseconds::zero())) return now;  // also catches NaN
  const Nanoseconds room = std::chrono::duration_cast<Nanoseconds>(Deadline::max() - now);
  if (wanted >= room) return Deadline::max();
  return now + std::chrono::ceil<Deadline::duration>(wanted);
}

// Converts a deadline on any clock to the steady clock the futex sleeps on,
// saturating as deadline_after does (time_point::max() waits forever).
template <class Clock, class Duration>
Deadline to_steady_deadline(const std::chrono::time_point<Clock, Duration>& deadline) noexcept {
  using Nanoseconds = std::chrono::duration<long double, std::nano>;
  if (deadline == std::chrono::time_point<Clock, Duration>::max()) return Deadline::max();
  const Nanoseconds at = std::chrono::duration_cast<Nanoseconds>(deadline.time_since_epoch());
  if constexpr (std::is_same_v<Clock, std::chrono::steady_clock>) {
    const Nanoseconds last =
        std::chrono::duration_cast<Nanoseconds>(Deadline::max().time_since_epoch());
    if (at >= last) return Deadline::max();
    if (!(at > Nanoseconds::zero())) return Deadline{};  // the clock's epoch: passed
    return Deadline(std::chrono::ceil<Deadline::duration>(at));
  } else {
    const Nanoseconds now =
        std::chrono::duration_cast<Nanoseconds>(Clock::now().time_since_epoch());
    return deadline_after(at - now);
  }
}

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_FUTEX_H_
