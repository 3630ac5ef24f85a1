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

// Mutations for the explorer's self-test (tests/explore/): 0 = none.
// 1: a send notifier's waiting bit is set outside the critical section
//    that links it (as the first waiting layer counted armed notifiers).
// 2: a release checks the waiting bit with a load and then subtracts with
//    a separate RMW, so a waiter that announces itself in between is missed.
// 3: finish_block gives the finished block's permits back after the list
//    lock is released, so a sender providing in between counts them twice.
// 4: cancel_send gives a notifier's unused grant back without telling the
//    receiver, which may have armed its notifier on a closed channel.
// 5: MemoryBudget's charge checks the limit with a load and adds with a
//    separate RMW, so two charges that pass the check together exceed it.
// 6: MemoryBudget's refund is a load and a store, so a charge between them
//    is lost and the bytes held drift from what the channels hold.
// 7: finish_block_locked renumbers a drained block in place without the
//    want bit while senders wait, so the receiver keeps a permit a waiting
//    sender needs.
// 8: take_grant redeems a slot without waiting for the firing to end, so
//    its owner may free the notifier while the firer still writes to it.
// 9: a release of the drained list at a block boundary leaves the permit
//    word as it is, so a one-CAS send that looked before it claims in a
//    freed block.
// 10, 11: the one-CAS send's bound from the returned position read beside
//    the word (10), or checked in the bound's block, not the claim's (11).
// 12: a reservation takes its slot without the permit word's bit 3 (a
//    permit may wait to claim).
// 13: the receiver's give-back clears bit 3 without comparing the slots
//    in use with the positions claimed since the returned position.
// 14: a send that numbered its block without a permit claims in its
//    second CAS without looking at the list again.
// 15: a settlement that hands slots to waiters leaves bit 3 as it is.
// 16: a waiting sender's acquire_or_queue takes its slots without bit 3.
// 17: a settlement under the lock takes the no-waiter path (one subtraction)
//     with a sender queued, so the slots go to the free count, not to it.
// 18: the same path taken whenever the queue is empty, bit 1 unread: a
//     bit left set by a cancelled waiter survives the settlement.
// 19: a settlement shows a grant when it decides the hand-off, before its
//     CAS makes it take effect, and a withdrawal puts the node back to
//     plain firing: a redeem in between counts the slot twice, and an owner
//     awaiting the firing is never woken.
// 20: the last sender's drop leaves a slot already handed to a send
//     notifier in use (GiveBack::give_back_unredeemed does nothing): the
//     channel never ends.
// 21: BlockList::covers reads the last numbered tag before the list word,
//     so a lowering (an un-numbering) between the two reads is missed and a
//     permit holder claims in a block no longer numbered.
// 22: retiring the head leaves the senders' block on it when it was the
//     senders' block: it names a block no longer numbered.
int mutant() noexcept;

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
