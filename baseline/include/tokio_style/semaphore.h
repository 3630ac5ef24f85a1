// SPDX-License-Identifier: MIT
// tokio_style/semaphore.h: the bound of the Tokio-style baseline, a counting
// semaphore with a FIFO wait list behind a mutex (docs/tokio_style.md
// section 5).
//
// Permit word: available permits << 1 | CLOSED. try_acquire is a CAS loop.
// A blocked acquire queues a Waiter node that lives on its own stack (no
// heap), under the wait-list mutex, and sleeps on the node's futex word.
// release() always takes the mutex and hands permits to the oldest waiters
// first, only then to the counter: one lock per message received.
//
// Waiting policy (Waiting, below): with kWatchThenSleep (the default) the
// first waiter in line watches its node's word (64 pause-spins, then 16
// yields) before it sleeps, and a release wakes it with a system call only
// if it sleeps: the policy leanchan's waiting senders follow, so that the
// two designs' ratios compare data structures. kParkAtOnce sleeps at the
// first failed attempt, as a thread blocked on Tokio's channel parks.
//
// Layout (40 bytes, as Tokio's batch semaphore): futex mutex 4, poison 1,
// pad 3, list head/tail 16, closed 1, watch 1 (in Tokio's padding), pad 6,
// permit word 8.
#ifndef TOKIO_STYLE_SEMAPHORE_H_
#define TOKIO_STYLE_SEMAPHORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "leanchan/internal/atomic.h"
#include "leanchan/internal/futex.h"
#include "leanchan/internal/spin_wait.h"

namespace tokio_style {

enum class Acquire { kAcquired, kNoPermits, kClosed, kTimedOut };

// How a blocked sender or receiver waits (see above and channel.h).
enum class Waiting : std::uint8_t { kWatchThenSleep, kParkAtOnce };

// Bounded watching with leanchan's schedule and its primitive
// (leanchan/internal/spin_wait.h): `looks` looks separated by pauses that
// double from 1 up to `max_pauses` (1: a plain spin), then `yields` looks
// separated by yields, and a last look; true as soon as done() is. The
// waiting policy of Waiting::kWatchThenSleep, before a futex sleep.
template <class Done>
bool watch(Done done, int looks, int max_pauses, int yields) noexcept {
  return leanchan::internal::watch(leanchan::internal::SpinBudget{looks, yields, max_pauses},
                                   done) ||
         done();
}

// A small futex mutex (4 bytes), standing in for Rust's std Mutex: like it,
// it spins 100 times on a held lock before it sleeps.
class FutexMutex {
 public:
  void lock() noexcept;
  void unlock() noexcept;

 private:
  std::atomic<std::uint32_t> state_{0};  // 0 free, 1 locked, 2 locked + waiters
};

class Semaphore {
 public:
  explicit Semaphore(std::size_t permits, Waiting waiting = Waiting::kWatchThenSleep) noexcept
      : watch_(waiting == Waiting::kWatchThenSleep), permits_(permits << 1) {}

  Acquire try_acquire() noexcept;
  // Blocks in FIFO order until a permit is assigned, the semaphore closes, or
  // `deadline` (null: none) passes.
  Acquire acquire(const leanchan::internal::Deadline* deadline) noexcept;
  void release(std::size_t permits) noexcept;
  void close() noexcept;
  bool is_closed() const noexcept;
  std::size_t available() const noexcept;
  Waiting waiting() const noexcept {
    return watch_ ? Waiting::kWatchThenSleep : Waiting::kParkAtOnce;
  }

 private:
  struct Waiter;

  FutexMutex mutex_;
  [[maybe_unused]] bool poisoned_ = false;  // layout fidelity; a C++ mutex is never poisoned
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
  bool closed_ = false;
  bool watch_;
  std::atomic<std::size_t> permits_;
};

static_assert(sizeof(Semaphore) == 40, "the baseline mirrors Tokio's 40-byte batch semaphore");

}  // namespace tokio_style

#endif  // TOKIO_STYLE_SEMAPHORE_H_
