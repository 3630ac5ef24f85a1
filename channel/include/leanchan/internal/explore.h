// SPDX-License-Identifier: MIT
// leanchan/internal/explore.h: the schedule explorer's hooks, compiled only
// into the explorer's test library (LEANCHAN_EXPLORE; see
// leanchan/internal/atomic.h and docs/explorer.md).
//
// The explorer runs the channel's real code with its threads taking turns:
// exactly one runs at a time, and before every atomic operation, pause,
// yield and futex call it asks the scheduler who runs next. Repeating a
// small scenario under every schedule (up to a preemption bound) checks it
// under sequential consistency, as loom does for Tokio and CHESS did for
// Windows.
#ifndef LEANCHAN_INTERNAL_EXPLORE_H_
#define LEANCHAN_INTERNAL_EXPLORE_H_

#if !defined(LEANCHAN_EXPLORE)
#error "leanchan/internal/explore.h is for the explorer build only"
#endif

#include <atomic>
#include <cstdint>

namespace leanchan::internal::explore {

// A scheduling point before an operation other threads can see. A no-op on
// threads the explorer does not manage.
void point() noexcept;
// A spin-wait or yield: a point where switching to another thread is free
// (not a preemption), and preferred.
void pause() noexcept;
void yield() noexcept;

// The futex, as the scheduler sees it: wait blocks the thread in the
// scheduler while the word holds `expected` (a timed wait times out only
// when the scheduler lets its deadline pass: when nothing else can run);
// wake makes up to `count` waiters runnable.
bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, bool timed) noexcept;
void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

// The channel found one of its invariants broken where it can carry on
// (the provisioning fallback in block_list.cc): the schedule fails.
void report_violation(const char* what) noexcept;

// std::atomic<T> with every operation a scheduling point. Weak CAS is
// strong here: a spurious failure is a schedule of its own that the
// explorer need not enumerate.
template <class T>
class Atomic {
 public:
  Atomic() noexcept = default;
  constexpr Atomic(T value) noexcept : value_(value) {}  // NOLINT: as std::atomic
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    point();
    return value_.load(order);
  }
  void store(T value, std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    value_.store(value, order);
  }
  T exchange(T value, std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    return value_.exchange(value, order);
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order success,
                             std::memory_order failure) noexcept {
    point();
    return value_.compare_exchange_strong(expected, desired, success, failure);
  }
  bool compare_exchange_weak(T& expected, T desired,
                             std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    return value_.compare_exchange_strong(expected, desired, order);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order success,
                               std::memory_order failure) noexcept {
    point();
    return value_.compare_exchange_strong(expected, desired, success, failure);
  }
  bool compare_exchange_strong(T& expected, T desired,
                               std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    return value_.compare_exchange_strong(expected, desired, order);
  }
  T fetch_add(T delta, std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    return value_.fetch_add(delta, order);
  }
  T fetch_sub(T delta, std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    return value_.fetch_sub(delta, order);
  }
  T fetch_or(T bits, std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    return value_.fetch_or(bits, order);
  }
  T fetch_and(T bits, std::memory_order order = std::memory_order_seq_cst) noexcept {
    point();
    return value_.fetch_and(bits, order);
  }
  operator T() const noexcept { return load(); }  // NOLINT: as std::atomic
  T operator=(T value) noexcept {
    store(value);
    return value;
  }

  // The underlying word, for the futex.
  std::atomic<T>& raw() noexcept { return value_; }

 private:
  std::atomic<T> value_;
};

}  // namespace leanchan::internal::explore

#endif  // LEANCHAN_INTERNAL_EXPLORE_H_
