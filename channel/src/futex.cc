// SPDX-License-Identifier: MIT
// Linux futex wrappers; see leanchan/internal/futex.h for the contract.
#include "leanchan/internal/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

namespace leanchan::internal {
namespace {

long futex(Atomic<std::uint32_t>& word, int op, std::uint32_t value, const timespec* timeout,
           std::uint32_t mask) noexcept {
  static_assert(sizeof(Atomic<std::uint32_t>) == sizeof(std::uint32_t),
                "leanchan: the futex word must be a plain 32-bit integer");
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr,
                 mask);
}

}  // namespace

bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                const Deadline* deadline) noexcept {
  if (deadline == nullptr || *deadline == Deadline::max()) {
    futex(word, FUTEX_WAIT_PRIVATE, expected, nullptr, 0);
    return true;  // woken, value changed, or interrupted: the caller re-checks
  }
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, which is what
  // std::chrono::steady_clock reads on Linux.
  const auto since_epoch = deadline->time_since_epoch();
  if (since_epoch.count() < 0 || *deadline <= std::chrono::steady_clock::now()) return false;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  timespec at{};
  at.tv_sec = static_cast<time_t>(seconds.count());
  at.tv_nsec = static_cast<long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count());
  const long rc =
      futex(word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected, &at, FUTEX_BITSET_MATCH_ANY);
  if (rc == -1 && errno == ETIMEDOUT) return false;
  return true;
}

void futex_wake(Atomic<std::uint32_t>& word, int count) noexcept {
  futex(word, FUTEX_WAKE_PRIVATE, static_cast<std::uint32_t>(count), nullptr, 0);
}

}  // namespace leanchan::internal
