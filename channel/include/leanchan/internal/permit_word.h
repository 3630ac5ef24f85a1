// SPDX-License-Identifier: MIT
// leanchan/internal/permit_word.h: the permit word, the one 32-bit word that
// bounds a channel and that every send touches (docs/design.md "Sending" and
// "The waiter queue"). Part of the waiting layer (semaphore.h).
//
//   bits [31..3] slots in use: queued messages, outstanding permits, and
//                slots already handed to waiting senders
//        [2]     closed watchers wait in the queue
//        [1]     senders wait in the queue
//        [0]     closed
//
// Invariants:
// - Bits 1 and 2 change only under the channel's list lock, in the same
//   critical section that links or unlinks the waiters they describe, and
//   only by an RMW of the whole word.
// - Invariant Q: while bit 1 is set no slot is free (used == capacity), so
//   a freed slot can only go to a waiting sender.
// - Bit 0 is never cleared.
//
// This type holds the word and its operations; the protocol that moves
// slots to waiters (hand-off, cancellation, close) is the Semaphore's,
// which owns this word, the capacity and the waiter queue.
#ifndef LEANCHAN_INTERNAL_PERMIT_WORD_H_
#define LEANCHAN_INTERNAL_PERMIT_WORD_H_

#include <cstdint>

#include "leanchan/export.h"
#include "leanchan/internal/atomic.h"

namespace leanchan::internal {

// kSent: the waiting sender's value was already moved into the channel by
// the thread that handed it the slot (send only; see ThreadWaitNode).
// kNoMemory: the permits were given, but a block they need could not be
// allocated, so they were given back (Provisioning::provide).
enum class PermitOutcome : std::uint8_t { kAcquired, kFull, kClosed, kTimedOut, kSent, kNoMemory };

class LEANCHAN_API PermitWord {
 public:
  static constexpr std::uint32_t kClosedBit = 1;
  static constexpr std::uint32_t kSendersWaitBit = 2;
  static constexpr std::uint32_t kClosedWatchBit = 4;
  static constexpr std::uint32_t kUsedUnit = 8;
  static constexpr std::uint32_t used_of(std::uint32_t word) noexcept { return word / kUsedUnit; }

  // ---- Lock-free --------------------------------------------------------------
  // Takes `count` slots if they are free and nobody waits.
  PermitOutcome try_acquire(std::uint32_t count, std::uint32_t capacity) noexcept;
  // Gives `count` slots back to the free count if nobody waits; false (and
  // nothing done) if a sender waits: the caller hands them over instead.
  bool try_release(std::uint32_t count) noexcept {
    std::uint32_t word = word_.load(std::memory_order_relaxed);
    while ((word & kSendersWaitBit) == 0) {
      // seq_cst: release half: the receiver's block work before this release
      // happens before the next holder's block work (see try_acquire).
      // seq_cst: a dropped permit then loads the receiver's signal, and the
      // receiver announces its wait before reading this word in is_finished
      // (Dekker: ReceiverSignal::announce_wait, then Ending::is_finished).
      if (word_.compare_exchange_weak(word, word - count * kUsedUnit, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }
  std::uint32_t free_slots(std::uint32_t capacity) const noexcept {
    const std::uint32_t used = used_of(word_.load(std::memory_order_relaxed));
    return used >= capacity ? 0 : capacity - used;
  }
  bool is_closed() const noexcept {
    // acquire: pairs with close()'s fetch_or; only a flag, no data rides on it.
    return (word_.load(std::memory_order_acquire) & kClosedBit) != 0;
  }
  // The receiver's end check (Ending::is_finished): seq_cst, as its re-check
  // after announcing a wait.
  std::uint32_t load_for_end_check() const noexcept {
    return word_.load(std::memory_order_seq_cst);
  }
  // Sets the closed bit; returns the word before. seq_cst: pairs with the
  // receiver's end check; one RMW both closes and reads the waiting bits.
  std::uint32_t close() noexcept { return word_.fetch_or(kClosedBit, std::memory_order_seq_cst); }
  // Slots in use now. seq_cst: the provisioning check (provisioning.h) is a
  // Dekker pair: a permit holder's acquiring RMW, then its load of the
  // published block count; the receiver's publication of a lower count,
  // then this load. One of the two sees the other.
  std::uint32_t permits_in_use() const noexcept {
    return used_of(word_.load(std::memory_order_seq_cst));
  }
  // A relaxed look, for the bounded watching before queueing.
  std::uint32_t peek() const noexcept { return word_.load(std::memory_order_relaxed); }
  // Bit 1, as a list-lock holder sees it (it changes only under the lock,
  // so the relaxed look is exact there; elsewhere it is a hint).
  bool senders_wait() const noexcept { return (peek() & kSendersWaitBit) != 0; }

  // ---- Under the list lock -------------------------------------------------------
  // A thread that must wait for `count` slots: takes them if it can
  // (kAcquired), fails if closed (kClosed), or sets bit 1 and reports how
  // many it took now as the first in line (kFull: it queues).
  struct Queueing {
    PermitOutcome outcome;
    std::uint32_t taken;
  };
  Queueing acquire_or_queue(std::uint32_t count, std::uint32_t capacity) noexcept;
  // A send notifier: true if it need not queue (closed, or a slot free and
  // nobody waiting); else sets bit 1 (it queues).
  bool room_or_closed_else_mark_waiting(std::uint32_t capacity) noexcept;
  // A closed watcher: true if closed already; else sets bit 2.
  bool closed_else_mark_watched() noexcept;
  void clear_watched() noexcept {
    word_.fetch_and(~kClosedWatchBit, std::memory_order_relaxed);  // relaxed: under the lock
  }
  // Records a settlement: `count` slots back to the free count and bit 1 as
  // `senders_wait` says, in one CAS. If that CAS finds the channel closed,
  // `withdraw()` is called once first (it withdraws the grants just made
  // and returns how many slots they held), so no grant outlives a close.
  template <class Withdraw>
  void settle(std::uint32_t count, bool senders_wait, Withdraw withdraw) noexcept {
    std::uint32_t word = word_.load(std::memory_order_relaxed);
    bool withdrawn = false;
    for (;;) {
      if ((word & kClosedBit) != 0 && !withdrawn) {
        count += withdraw();
        withdrawn = true;
      }
      const std::uint32_t next =
          ((word - count * kUsedUnit) & ~kSendersWaitBit) | (senders_wait ? kSendersWaitBit : 0);
      // seq_cst: as try_release.
      if (word_.compare_exchange_weak(word, next, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
        return;
      }
    }
  }
  // close() found waiters and woke them all: their partial grants go back
  // and both waiting bits clear.
  void finish_close(std::uint32_t returned) noexcept {
    std::uint32_t word = word_.load(std::memory_order_relaxed);
    while (!word_.compare_exchange_weak(
        word, (word - returned * kUsedUnit) & ~(kSendersWaitBit | kClosedWatchBit),
        std::memory_order_seq_cst, std::memory_order_relaxed)) {
    }
  }

#if defined(LEANCHAN_EXPLORE)
  // The explorer's self-test only (internal/explore.h, mutants): the two
  // ways of getting this word wrong that the first waiting layer had.
  bool mutant_check_then_release(std::uint32_t count) noexcept;
  void mutant_mark_waiting_after_unlock() noexcept;
#endif

 private:
  Atomic<std::uint32_t> word_{0};
};

static_assert(sizeof(PermitWord) == 4, "leanchan: the permit word is one word");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_PERMIT_WORD_H_
