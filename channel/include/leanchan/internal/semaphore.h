// SPDX-License-Identifier: MIT
// leanchan/internal/semaphore.h: the waiting layer. The permit word that
// bounds the channel, its capacity, and the FIFO queue of waiters, with
// every protocol that moves slots between them: acquiring (watch, queue,
// await), handing freed slots to the oldest waiters, cancellation that
// passes a grant on, close, and the closed watchers (docs/design.md "The
// waiter queue"). Part of the 64-byte control block (channel_state.h).
//
// It knows nothing of blocks or of the receiver. The list lock it shares
// with the block list is passed in (`const ListLock&`), and functions that
// need it held take the proof (`const Locked&`). What must happen under
// that lock before a sender queues (collecting the permits the receiver
// owes: give_back.h) is the caller's, passed in as a BeforeQueue.
//
// Invariants: see permit_word.h (the waiting bits change only under the
// list lock, with the links they describe; while a sender waits no slot is
// free) and waiter_queue.h (the ring's order).
#ifndef LEANCHAN_INTERNAL_SEMAPHORE_H_
#define LEANCHAN_INTERNAL_SEMAPHORE_H_

#include <cstdint>

#include "leanchan/export.h"
#include "leanchan/fwd.h"
#include "leanchan/internal/futex.h"
#include "leanchan/internal/list_lock.h"
#include "leanchan/internal/permit_word.h"
#include "leanchan/internal/wait_node.h"
#include "leanchan/internal/waiter_queue.h"
#include "leanchan/status.h"

namespace leanchan::internal {

// What the channel does under the list lock just before a sender queues
// (GiveBack::collect_owed_locked: the permits the receiver owes go back,
// and the want bit goes up on its block in the same step).
struct BeforeQueue {
  void (*run)(void* context, const Locked& held) noexcept;
  void* context;
};

class Semaphore {
 public:
  // `capacity` at most kMaxCapacity (2^24): the word's top two bits hold
  // `watch`.
  Semaphore(std::uint32_t capacity, WaiterWatch watch) noexcept
      : capacity_(capacity | static_cast<std::uint32_t>(watch) << kWatchShift) {}
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  std::uint32_t capacity() const noexcept { return capacity_ & kCapacityMask; }
  WaiterWatch first_waiter_watch() const noexcept {
    return static_cast<WaiterWatch>(capacity_ >> kWatchShift);
  }
  const PermitWord& word() const noexcept { return word_; }
  PermitWord& word() noexcept { return word_; }
  const WaiterQueue& waiters() const noexcept { return waiters_; }
  bool is_closed() const noexcept { return word_.is_closed(); }
  // Bit "senders wait", exact under the list lock, a hint elsewhere.
  bool senders_wait() const noexcept { return word_.senders_wait(); }
  std::uint32_t free_slots() const noexcept { return word_.free_slots(capacity()); }

  // ---- Acquiring --------------------------------------------------------------
  // Takes `count` slots if they are free and nobody waits. Lock-free.
  PermitOutcome try_acquire(std::uint32_t count) noexcept {
    return word_.try_acquire(count, capacity());
  }
  // Takes `waiter.wanted` slots, waiting in the FIFO queue while they are
  // not there, until `deadline` (null: forever): watches the word briefly
  // (kWaitPolicy.full_bound), then, under the lock, runs `before_queue` and queues;
  // the first in line watches its node (kWaitPolicy.first_waiter) before it sleeps.
  // kAcquired, kSent (a sender's waker moved its value in: ThreadWaitNode),
  // kClosed, or kTimedOut (its partial grant, wanted - needed slots, then
  // went to the next waiter).
  PermitOutcome acquire(ThreadWaitNode& waiter, const Deadline* deadline, const ListLock& lock,
                        const BeforeQueue& before_queue) noexcept;

  // ---- Giving slots back ------------------------------------------------------
  // `count` slots back: to the free count if nobody waits (lock-free), else
  // to the waiting senders, oldest first, under the lock.
  LEANCHAN_API void release(std::uint32_t count, const ListLock& lock) noexcept;
  // Under the lock: hands `count` freed slots to the queue, oldest sender
  // first; what is left goes to the free count. The senders granted are
  // chained on `woken` (empty before), to be woken after the unlock (wake).
  // Returns a queued thread waiter to nudge (now first in line), or null.
  WaitNode* settle_locked(const Locked& held, std::uint32_t count, WaitNode*& woken) noexcept;
  // After the unlock: wakes what settle_locked granted, and nudges `next`.
  // Inline, since nearly every give-back has nothing to wake.
  void wake(WaitNode* woken, WaitNode* next) noexcept {
    if (woken != nullptr || next != nullptr) wake_nodes(woken, next);
  }

  // ---- Send notifiers (kSend nodes) --------------------------------------------
  // kHoldsSlot if the node holds a grant, kArmed if it is queued already;
  // else, under the lock, after `before_queue`: kRoom or kClosed without
  // queueing if a slot is free now (and nobody waits) or the channel is
  // closed, or it queues the node (one-shot) and returns kArmed.
  RoomStatus arm_send(WaitNode* node, const ListLock& lock,
                      const BeforeQueue& before_queue) noexcept;
  enum class Cancelled : std::uint8_t {
    kUnqueued,    // it was queued and had not fired: now it is not
    kNotQueued,   // nothing to cancel (idle, or fired without a grant)
    kGrantTaken,  // it had fired with a grant: the caller now owns one permit
  };
  Cancelled cancel_send(WaitNode* node, const ListLock& lock) noexcept;
  // Redeems the slot a fired node holds (the caller then owns one permit).
  // A grant redeemed while its firing is still in progress (the callback
  // told its owner, then returns) waits until the firer is done with the
  // node, so that the owner may destroy it as soon as this returns. Never
  // from inside that node's own callback (notifier.h).
  LEANCHAN_API static bool take_grant(WaitNode* node) noexcept;
  // The owner of a notifier that carries its value (SendValueNode), once
  // per look, after waiting out a firing in progress: kSent, the waker
  // moved the value in; kWaiting, still queued, the value still lent to
  // the channel; kGrant, the grant is the caller's now (the waker could not
  // provide the blocks); kNothing (never armed, or fired by close). Except
  // for kWaiting the node is idle on return.
  enum class Carried : std::uint8_t { kSent, kWaiting, kGrant, kNothing };
  LEANCHAN_API static Carried take_carried(WaitNode* node) noexcept;

  // ---- Close and the closed watchers -------------------------------------------
  // Sets the closed bit and wakes every waiting sender and closed watcher
  // (their partial grants go back to the free count).
  LEANCHAN_API void close(const ListLock& lock) noexcept;
  // True if closed already (not linked); else links it, to fire on close.
  LEANCHAN_API bool watch_closed(ClosedWatchNode* watch, const ListLock& lock) noexcept;
  // True if it was still linked (when it returns, a firing has ended).
  LEANCHAN_API bool unwatch_closed(ClosedWatchNode* watch, const ListLock& lock) noexcept;
  // A thread waits for close until `deadline`; false on timeout.
  LEANCHAN_API bool wait_closed(const Deadline* deadline, const ListLock& lock) noexcept;

  // ---- The receive notifier's place in the ring ---------------------------------
  void attach_receive_locked(const Locked&, WaitNode* node) noexcept {
    waiters_.attach_receive(node);
  }
  void detach_receive_locked(const Locked&) noexcept { waiters_.detach_receive(); }

 private:
  void wake_nodes(WaitNode* woken, WaitNode* next) noexcept;  // wake's work
  // Waits until `node` has left the firing phases (its waker is done).
  static std::uint32_t await_firing(WaitNode* node) noexcept;
  // A queued thread waiter waits for its outcome (await_outcome's loop);
  // on a deadline, it leaves the queue or waits for the outcome on its way.
  // `first_in_line`: it was the first sender queued (it watches for the
  // hand-off); `expired`: the deadline had passed when acquire began (no
  // watching at all, first or not).
  PermitOutcome await(ThreadWaitNode& waiter, bool first_in_line, bool expired,
                      const Deadline* deadline, const ListLock& lock) noexcept;
  static void mark_firing(WaitNode* node, std::uint32_t grant) noexcept;
  static void finish_firing(WaitNode* node) noexcept;

  static constexpr std::uint32_t kWatchShift = 30;
  static constexpr std::uint32_t kCapacityMask = (std::uint32_t{1} << kWatchShift) - 1;
  static_assert(kMaxCapacity <= kCapacityMask, "leanchan: the capacity shares its word");

  PermitWord word_;
  WaiterQueue waiters_;
  // [29..0] the capacity | [31..30] the first waiter's watch (WaiterWatch).
  // Last: the 4 bytes of padding after it hold the next part of the
  // control block (channel_state.h).
  const std::uint32_t capacity_;
};

static_assert(sizeof(Semaphore) == 24,
              "leanchan: the waiting layer is the permit word, the ring and the capacity");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_SEMAPHORE_H_
