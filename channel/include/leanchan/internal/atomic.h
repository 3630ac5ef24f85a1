// SPDX-License-Identifier: MIT
// leanchan/internal/atomic.h: the atomic type and the pauses the channel's
// code uses, so that one build can run the real code under a deterministic
// scheduler (the schedule explorer, tests/explore/).
//
// In every ordinary build, Atomic<T> is std::atomic<T> and the pauses are
// what they say: the production library has no extra field, call or
// indirection. Built with LEANCHAN_EXPLORE (only the explorer's test
// library is), every operation on an Atomic and every pause or yield is a
// scheduling point of the explorer (leanchan/internal/explore.h).
#ifndef LEANCHAN_INTERNAL_ATOMIC_H_
#define LEANCHAN_INTERNAL_ATOMIC_H_

#include <atomic>
#include <thread>

#if defined(LEANCHAN_EXPLORE)
#include "leanchan/internal/explore.h"
#endif

namespace leanchan::internal {

#if defined(LEANCHAN_EXPLORE)
template <class T>
using Atomic = explore::Atomic<T>;
#else
template <class T>
using Atomic = std::atomic<T>;
#endif

// How many rounds a bounded watching loop makes: `rounds` in ordinary
// builds; at most 2 under the explorer, where every round is a scheduling
// point and more rounds add nothing but schedules.
constexpr int spin_budget(int rounds) noexcept {
#if defined(LEANCHAN_EXPLORE)
  return rounds < 2 ? rounds : 2;
#else
  return rounds;
#endif
}

// Replaces the value of `atomic` with `next(value)` in one compare-and-swap
// loop (Rust's fetch_update, with a function that never declines) and
// returns the value it replaced. `next` may run more than once, so it must
// compute, not act. The first load and every failed CAS use `failure`,
// the CAS that succeeds `success`: each caller says why those suffice.
template <class T, class Next>
T fetch_update(Atomic<T>& atomic, std::memory_order success, std::memory_order failure,
               Next next) noexcept {
  T value = atomic.load(failure);
  while (!atomic.compare_exchange_weak(value, next(value), success, failure)) {
  }
  return value;
}

// An invariant the explorer checks (tests/explore/): there a false
// `condition` is reported as a violation naming `what`, which fails the
// schedule; in every other build the condition is not evaluated.
#if defined(LEANCHAN_EXPLORE)
#define LEANCHAN_EXPLORE_CHECK(condition, what) \
  ((condition) ? static_cast<void>(0) : ::leanchan::internal::explore::report_violation(what))
#else
#define LEANCHAN_EXPLORE_CHECK(condition, what) static_cast<void>(0)
#endif

// Tells the processor this is a spin-wait (x86 PAUSE); a no-op elsewhere.
// Every loop that calls it is bounded and ends in a futex sleep.
inline void cpu_relax() noexcept {
#if defined(LEANCHAN_EXPLORE)
  explore::pause();
#elif defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Gives the processor away (std::this_thread::yield).
inline void yield_thread() noexcept {
#if defined(LEANCHAN_EXPLORE)
  explore::yield();
#else
  std::this_thread::yield();
#endif
}

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_ATOMIC_H_
