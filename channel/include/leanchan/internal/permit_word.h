// SPDX-License-Identifier: MIT
// leanchan/internal/permit_word.h: the permit word, the one 64-bit word that
// bounds a channel and hands out message positions: every send changes it
// (docs/design.md "Sending" and "The waiter queue"). Part of the waiting
// layer (semaphore.h).
//
//   bits [63..29] the claim position: the next position a message gets,
//                 modulo M (position.h)
//        [28..4]  slots in use: queued messages, outstanding permits, and
//                 slots already handed to waiting senders
//        [3]      a permit may wait to claim (below)
//        [2]      closed watchers wait in the queue
//        [1]      senders wait in the queue
//        [0]      closed
//
// Invariants:
// - Bits 1 and 2 change only under the channel's list lock, in the same
//   critical section that links or unlinks the waiters they describe, and
//   only by an RMW of the whole word.
// - Invariant Q: while bit 1 is set no slot is free (used == capacity), so
//   a freed slot can only go to a waiting sender.
// - Bit 0 is never cleared.
// - The claim position moves only forward: by one per claim (claim), or to
//   a later block boundary when the receiver releases the drained list
//   (jump_position). Every other RMW keeps it.
// - Invariant P: while bit 3 is clear, every slot in use belongs to a
//   claimed position (a message queued, or a take the receiver has not
//   given back): no permit is out that will still claim. So the slots in
//   use are the claim position minus the returned position, and the last
//   position a permit in use can be given is the claim position itself.
//   Every RMW that takes a slot without claiming it sets bit 3 in the
//   same RMW (try_acquire, acquire_or_queue, the fast path's kAcquired,
//   a settlement that grants); only a list-lock holder clears it: after
//   the receiver's give-back, knowing the returned position exactly
//   (clear_pending_if_claimed), or in the release of a drained list, where
//   every slot in use is a take of the receiver's, given back in the same
//   critical section (jump_position). Every other RMW keeps it. A clear bit is what
//   lets the one-CAS send check only its own block (ChannelOps::try_push_fast).
//
// This type holds the word and its operations; the protocol that moves
// slots to waiters (hand-off, cancellation, close) is the Semaphore's,
// which owns this word, the capacity and the waiter queue.
#ifndef LEANCHAN_INTERNAL_PERMIT_WORD_H_
#define LEANCHAN_INTERNAL_PERMIT_WORD_H_

#include <cstdint>

#include "leanchan/export.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/position.h"

namespace leanchan::internal {

// kSent: the waiting sender's value was already moved into the channel by
// the thread that handed it the slot (send only; see ThreadWaitNode).
// kNoMemory: the permits were given, but a block they need could not be
// allocated, so they were given back (Provisioning::provide).
enum class PermitOutcome : std::uint8_t { kAcquired, kFull, kClosed, kTimedOut, kSent, kNoMemory };

class PermitWord {
 public:
  using Word = std::uint64_t;
  static constexpr Word kClosedBit = 1;
  static constexpr Word kSendersWaitBit = 2;
  static constexpr Word kClosedWatchBit = 4;
  static constexpr Word kPendingBit = 8;
  static constexpr Word kUsedUnit = 16;
  static constexpr unsigned kPositionShift = 64 - Positions::kPositionBits;
  static constexpr Word kPositionUnit = Word{1} << kPositionShift;
  static constexpr Word kLowMask = kPositionUnit - 1;  // the flags and the slots in use
  static constexpr std::uint32_t used_of(Word word) noexcept {
    return static_cast<std::uint32_t>((word & kLowMask) / kUsedUnit);
  }
  static constexpr std::uint64_t position_of(Word word) noexcept { return word >> kPositionShift; }
  // `word` with its position moved on by one, modulo M (blocks of `slots`
  // slots): with b a power of two the field's carry out of bit 63 is the
  // wrap at 2^35; else the field goes back to 0 at M = b * 2^30.
  static constexpr Word with_next_position(Word word, std::uint64_t slots) noexcept {
    const Word bumped = word + kPositionUnit;
    if (Positions::wraps_with_field(slots)) return bumped;
    return position_of(bumped) == Positions::modulus(slots) ? bumped & kLowMask : bumped;
  }
  // Invariant P: false means no permit in use is still to claim.
  static constexpr bool pending_of(Word word) noexcept { return (word & kPendingBit) != 0; }

  // ---- Lock-free --------------------------------------------------------------
  // Takes `count` slots if they are free and nobody waits.
  PermitOutcome try_acquire(std::uint32_t count, std::uint32_t capacity) noexcept;
  // Gives `count` slots back to the free count if nobody waits; false (and
  // nothing done) if a sender waits: the caller hands them over instead.
  bool try_release(std::uint32_t count) noexcept {
    Word word = word_.load(std::memory_order_relaxed);
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
  Word load_for_end_check() const noexcept { return word_.load(std::memory_order_seq_cst); }
  // Sets the closed bit; returns the word before. seq_cst: pairs with the
  // receiver's end check; one RMW both closes and reads the waiting bits.
  Word close() noexcept { return word_.fetch_or(kClosedBit, std::memory_order_seq_cst); }
  // Slots in use now. seq_cst: the provisioning check (provisioning.h) is a
  // Dekker pair: a permit holder's acquiring RMW, then its load of the
  // published block count; the receiver's publication of a lower count,
  // then this load. One of the two sees the other.
  std::uint32_t permits_in_use() const noexcept {
    return used_of(word_.load(std::memory_order_seq_cst));
  }
  // The whole word, seq_cst: the receiver's check, under the list lock,
  // that nothing is claimed past its index and no permit is out
  // (BlockList::unnumber_past_head_locked: the Dekker pair with a permit
  // holder's check of the list, as jump_position's).
  Word snapshot() const noexcept { return word_.load(std::memory_order_seq_cst); }
  // A relaxed look, for the bounded watching before queueing.
  Word peek() const noexcept { return word_.load(std::memory_order_relaxed); }
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
  // Under the list lock, with no sender queued (so bit 1 is clear and
  // stays so: it changes only under the lock): `count` slots back to the
  // free count, every other bit as it is. What settle computes then, in one
  // RMW that a racing send's CAS cannot make fail. seq_cst: as try_release.
  void release_unqueued(std::uint32_t count) noexcept {
    word_.fetch_sub(count * kUsedUnit, std::memory_order_seq_cst);
  }
  // Records a settlement: `count` slots back to the free count and bit 1 as
  // `senders_wait` says, in one CAS. If that CAS finds the channel closed,
  // `withdraw()` is called once first (it withdraws the grants just made
  // and returns how many slots they held), so no grant outlives a close.
  // Bit 3 (invariant P) is kept, and set if this settlement `granted` any
  // slot to a waiter (a grant is a permit still to claim).
  template <class Withdraw>
  void settle(std::uint32_t count, bool senders_wait, bool granted, Withdraw withdraw) noexcept {
    Word word = word_.load(std::memory_order_relaxed);
    bool withdrawn = false;
    for (;;) {
      if ((word & kClosedBit) != 0 && !withdrawn) {
        count += withdraw();
        withdrawn = true;
      }
      const Word next = ((word - count * kUsedUnit) & ~kSendersWaitBit) |
                        (senders_wait ? kSendersWaitBit : 0) | (granted ? kPendingBit : 0);
      // seq_cst: as try_release.
      if (word_.compare_exchange_weak(word, next, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
        return;
      }
    }
  }
  // Under the list lock, with `returned` the returned position exactly
  // (GiveBack, after the receiver's give-back): clears bit 3 if every
  // slot in use belongs to a claimed position, the claim position minus
  // `returned` (invariant P); nothing otherwise. One CAS, only when the
  // bit is set and can clear: the word it expects is the one it judged.
  // seq_cst: as every RMW of this word that a one-CAS send's check
  // relies on (try_acquire_and_claim).
  void clear_pending_if_claimed(std::uint64_t returned, std::uint64_t slots) noexcept {
    Word word = word_.load(std::memory_order_seq_cst);
    for (;;) {
      if (!pending_of(word)) return;
      const bool claimed_all =
          used_of(word) == Positions::distance(position_of(word), returned, slots);
      if (!claimed_all) return;
      if (word_.compare_exchange_weak(word, word & ~kPendingBit, std::memory_order_seq_cst,
                                      std::memory_order_seq_cst)) {
        return;
      }
    }
  }
  // Under the list lock, once nothing can claim any more (no Sender,
  // Permit or PermitBatch is left), with `returned` the returned position
  // exactly: gives back every slot in use that belongs to no claimed
  // position (invariant P: the claim position minus `returned` are), and
  // clears bit 3. seq_cst: as clear_pending_if_claimed; the receiver's end
  // check then reads the slots gone (its Dekker pair: see try_release).
  void release_unclaimed(std::uint64_t returned, std::uint64_t slots) noexcept {
    Word word = word_.load(std::memory_order_seq_cst);
    while (pending_of(word)) {
      const std::uint64_t claimed = Positions::distance(position_of(word), returned, slots);
      const std::uint32_t used = used_of(word);
      LEANCHAN_EXPLORE_CHECK(used >= claimed, "fewer slots in use than claimed positions");
      const Word unclaimed = used > claimed ? used - claimed : 0;
      if (word_.compare_exchange_weak(word, (word - unclaimed * kUsedUnit) & ~kPendingBit,
                                      std::memory_order_seq_cst, std::memory_order_seq_cst)) {
        return;
      }
    }
  }
  // close() found waiters and woke them all: their partial grants go back
  // and both waiting bits clear.
  void finish_close(std::uint32_t returned) noexcept {
    (void)fetch_update(word_, std::memory_order_seq_cst, std::memory_order_relaxed, [&](Word word) {
      return (word - returned * kUsedUnit) & ~(kSendersWaitBit | kClosedWatchBit);
    });
  }

  // ---- Positions --------------------------------------------------------------
  // Claims the next position for a holder of a permit (blocks of `slots`
  // slots): returns it and moves the field on, modulo M. Each claim is
  // unique, and one sender's claims are in order (per-sender FIFO).
  std::uint64_t claim(std::uint64_t slots) noexcept {
    if (Positions::wraps_with_field(slots)) {
      // The field's top bit carries out of the word: the wrap at M = 2^35.
      // seq_cst: as below.
      return position_of(word_.fetch_add(kPositionUnit, std::memory_order_seq_cst));
    }
    // seq_cst: puts the claim in the single total order before this
    // sender's load of the receiver's signal (ReceiverSignal::notify),
    // so a receiver that announced its wait and then read the claim
    // position either sees this claim or is seen by this sender.
    return position_of(
        fetch_update(word_, std::memory_order_seq_cst, std::memory_order_relaxed,
                     [slots](Word word) { return with_next_position(word, slots); }));
  }
  // An ordinary send in one RMW: takes one slot and claims the next
  // position in the same CAS (kClaimed, `position` set) if the channel is
  // open, nobody waits, a slot is free and `covered(word)` says the
  // numbered blocks already reach the last position a permit in use can be
  // given, this one counted, for the word as it is (ChannelOps::
  // try_push_fast: the claim position plus the slots in use, within the
  // claim's block). If only the blocks do not reach, takes the
  // slot alone, as try_acquire would (kAcquired: the caller provides and
  // claims, as for any permit). kNotTaken (nothing changed) otherwise: the
  // caller takes the slot by the other paths, which handle each case.
  // The check runs before the CAS, so every change to the list that could
  // make it false changes this word too (or cannot matter to this send):
  // docs/design.md, "One CAS for a send".
  // With `take_uncovered` false, a send that would take the slot alone
  // takes nothing when bit 3 is clear (kUncovered): it can number its
  // block first and try again (Provisioning::provide_next).
  enum class Fast : std::uint8_t { kClaimed, kAcquired, kUncovered, kNotTaken };
  template <class Covered>
  Fast try_acquire_and_claim(std::uint32_t capacity, std::uint64_t slots, Covered covered,
                             bool take_uncovered, std::uint64_t& position) noexcept {
    // seq_cst (here and on a failed CAS): the check in covered() must
    // come after every list change whose permit-word access precedes this
    // load. A word the receiver's release wrote (jump_position, under the
    // list lock), or one written after the receiver's seq_cst look at the
    // word under the lock (BlockList::unnumber_past_head_locked, which
    // leaves it as it is), puts that holder's seq_cst RMW of the list
    // word (its fetch_or(0) after taking the lock, whose own CAS is only
    // acquire) before this load in the single total order, so the check
    // sees the lock or what the holder left, never the blocks it freed.
    Word word = word_.load(std::memory_order_seq_cst);
    for (;;) {
      if ((word & (kClosedBit | kSendersWaitBit)) != 0 || used_of(word) >= capacity) {
        return Fast::kNotTaken;
      }
      const bool claims = covered(word);
      if (!claims && !take_uncovered && !pending_of(word)) return Fast::kUncovered;
      // A slot taken alone is a permit still to claim: bit 3 (invariant P).
      // (The slots in use never carry into the position: the check above
      // keeps them at most the capacity, at most kMaxCapacity = 2^24.)
      const Word next =
          claims ? with_next_position(word + kUsedUnit, slots) : (word + kUsedUnit) | kPendingBit;
      // seq_cst: try_acquire's reasons (the acquire half reads the releases
      // that freed the slot; the permit is in the single total order
      // before this sender's later loads) and claim's (the claim before its
      // load of the receiver's signal), in one RMW.
      if (word_.compare_exchange_weak(word, next, std::memory_order_seq_cst,
                                      std::memory_order_seq_cst)) {
        position = position_of(word);
        return claims ? Fast::kClaimed : Fast::kAcquired;
      }
    }
  }
  // The claim position: every position before it (modulo M) is claimed.
  // seq_cst: the receiver's "nothing claimed" check is part of its re-check
  // after announcing a wait (see claim).
  std::uint64_t claimed() const noexcept {
    return position_of(word_.load(std::memory_order_seq_cst));
  }
  // Under the list lock, the receiver releasing a drained list: if the
  // claim position is `index` and at most `taken` slots are in use (the
  // receiver's own takes, not given back yet), moves it to `boundary` in
  // the same CAS, so that no permit can be taken and no position claimed
  // in between; false (nothing changed) otherwise. seq_cst: as claim, and
  // the receiver's half of the Dekker pair with a permit holder's check
  // of the list (BlockList::release_if_drained_locked).
  bool jump_position(std::uint64_t index, std::uint32_t taken, std::uint64_t boundary) noexcept {
    Word word = word_.load(std::memory_order_seq_cst);
    for (;;) {
      if (position_of(word) != index || used_of(word) > taken) return false;
      // Every slot in use is one of the receiver's takes (they go back in
      // the same critical section): none is still to claim, so bit 3
      // clears (invariant P).
      Word next = (word & kLowMask & ~kPendingBit) | boundary << kPositionShift;
      if (word_.compare_exchange_weak(word, next, std::memory_order_seq_cst,
                                      std::memory_order_seq_cst)) {
        return true;
      }
    }
  }

#if defined(LEANCHAN_TEST_POINTS)
  // A new channel's first position (test_start_position), before any
  // other thread can see the word.
  void start_at_for_test(std::uint64_t position) noexcept {
    word_.store(position << kPositionShift, std::memory_order_relaxed);
  }
#endif

 private:
  Atomic<Word> word_{0};
};

static_assert(sizeof(PermitWord) == 8, "leanchan: the permit word is one word");
static_assert(PermitWord::position_of(PermitWord::with_next_position(
                  (Positions::modulus(32) - 1) << PermitWord::kPositionShift | 0x1F0, 32)) == 0 &&
                  PermitWord::with_next_position((Positions::modulus(24) - 1)
                                                         << PermitWord::kPositionShift |
                                                     0x1F0,
                                                 24) == 0x1F0 &&
                  PermitWord::position_of(PermitWord::with_next_position(
                      PermitWord::Word{5} << PermitWord::kPositionShift, 24)) == 6,
              "leanchan: a claim wraps at M, keeping the low bits");
static_assert(PermitWord::used_of(PermitWord::kLowMask) >= (std::uint32_t{1} << 25) - 1 &&
                  PermitWord::used_of(PermitWord::kPendingBit) == 0,
              "leanchan: the slots in use must count to kMaxCapacity and beyond");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_PERMIT_WORD_H_
