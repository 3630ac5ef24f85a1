// SPDX-License-Identifier: MIT
#include "tokio_style/semaphore.h"

#include <climits>

namespace tokio_style {

using leanchan::internal::futex_wait;
using leanchan::internal::futex_wake;

void FutexMutex::lock() noexcept {
  std::uint32_t expected = 0;
  if (state_.compare_exchange_strong(expected, 1, std::memory_order_acquire)) return;
  // Rust's std futex mutex: spin (100 times) while the lock is held without
  // waiters, then try once more before sleeping.
  (void)watch(
      [&] {
        expected = state_.load(std::memory_order_relaxed);
        return expected != 1;
      },
      100, 1, 0);
  if (expected == 0 && state_.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
    return;
  }
  if (expected != 2) expected = state_.exchange(2, std::memory_order_acquire);
  while (expected != 0) {
    futex_wait(state_, 2, nullptr);
    expected = state_.exchange(2, std::memory_order_acquire);
  }
}

void FutexMutex::unlock() noexcept {
  if (state_.exchange(0, std::memory_order_release) == 2) futex_wake(state_, 1);
}

struct Semaphore::Waiter {
  Waiter* next = nullptr;
  Waiter* prev = nullptr;
  // 0 waiting, 1 assigned, 2 closed; kSleeping: the owner sleeps (or is
  // about to) on this word, so the one who stores the outcome must wake it.
  std::atomic<std::uint32_t> state{0};
};

namespace {
constexpr std::size_t kClosed = 1;
constexpr std::uint32_t kSleeping = 4;
constexpr std::uint32_t kOutcomeMask = 3;
constexpr int kWatchSpins = 64;   // leanchan's waiting sender: 64 pause-spins,
constexpr int kWatchYields = 16;  // then 16 yields, then it sleeps

// Stores a waiter's outcome; wakes it only if it sleeps. release: the
// permit (or the close) happens before the waiter's acquire load. The owner
// may return (and its stack node die) as soon as it sees the store; a wake
// on that former address is at worst spurious for whoever sleeps there
// later, and every wait re-checks its word.
void deliver(std::atomic<std::uint32_t>& state, std::uint32_t outcome) noexcept {
  if ((state.exchange(outcome, std::memory_order_acq_rel) & kSleeping) != 0) {
    futex_wake(state, 1);
  }
}
}  // namespace

Acquire Semaphore::try_acquire() noexcept {
  std::size_t word = permits_.load(std::memory_order_acquire);
  for (;;) {
    if ((word & kClosed) != 0) return Acquire::kClosed;
    if ((word >> 1) == 0) return Acquire::kNoPermits;
    if (permits_.compare_exchange_weak(word, word - 2, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      return Acquire::kAcquired;
    }
  }
}

Acquire Semaphore::acquire(const leanchan::internal::Deadline* deadline) noexcept {
  Acquire first = try_acquire();
  if (first != Acquire::kNoPermits) return first;
  Waiter node;
  mutex_.lock();
  // Re-try under the lock: a release that ran before we queued left its
  // permit in the counter.
  first = try_acquire();
  if (first != Acquire::kNoPermits) {
    mutex_.unlock();
    return first;
  }
  node.prev = tail_;
  if (tail_ != nullptr)
    tail_->next = &node;
  else
    head_ = &node;
  tail_ = &node;
  const bool first_in_line = head_ == &node;
  mutex_.unlock();
  if (watch_ && first_in_line) {
    (void)watch([&] { return node.state.load(std::memory_order_acquire) != 0; }, kWatchSpins, 1,
                kWatchYields);
  }
  for (;;) {
    std::uint32_t state = node.state.load(std::memory_order_acquire);
    if (state == 0 &&
        !node.state.compare_exchange_strong(state, kSleeping, std::memory_order_acquire)) {
      continue;  // the outcome arrived: read it above
    }
    if ((state & kOutcomeMask) == 1) return Acquire::kAcquired;
    if ((state & kOutcomeMask) == 2) return Acquire::kClosed;
    if (!futex_wait(node.state, kSleeping, deadline)) break;
  }
  // Timed out: leave the queue, unless a permit or the close arrived first.
  mutex_.lock();
  const std::uint32_t state = node.state.load(std::memory_order_acquire) & kOutcomeMask;
  if (state == 0) {
    if (node.prev != nullptr)
      node.prev->next = node.next;
    else
      head_ = node.next;
    if (node.next != nullptr)
      node.next->prev = node.prev;
    else
      tail_ = node.prev;
  }
  mutex_.unlock();
  if (state == 1) return Acquire::kAcquired;
  if (state == 2) return Acquire::kClosed;
  return Acquire::kTimedOut;
}

void Semaphore::release(std::size_t permits) noexcept {
  mutex_.lock();
  while (permits > 0 && head_ != nullptr) {
    Waiter* waiter = head_;
    head_ = waiter->next;
    if (head_ != nullptr)
      head_->prev = nullptr;
    else
      tail_ = nullptr;
    --permits;
    deliver(waiter->state, 1);
  }
  if (permits > 0) permits_.fetch_add(permits << 1, std::memory_order_release);
  mutex_.unlock();
}

void Semaphore::close() noexcept {
  mutex_.lock();
  permits_.fetch_or(kClosed, std::memory_order_release);
  closed_ = true;
  while (head_ != nullptr) {
    Waiter* waiter = head_;
    head_ = waiter->next;
    deliver(waiter->state, 2);
  }
  tail_ = nullptr;
  mutex_.unlock();
}

bool Semaphore::is_closed() const noexcept {
  return (permits_.load(std::memory_order_acquire) & kClosed) != 0;
}

std::size_t Semaphore::available() const noexcept {
  return permits_.load(std::memory_order_acquire) >> 1;
}

}  // namespace tokio_style
