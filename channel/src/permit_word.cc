// SPDX-License-Identifier: MIT
// The permit word's operations (leanchan/internal/permit_word.h) that take
// more than a line: the acquiring CAS loops and the marks made under the
// list lock.
#include "leanchan/internal/permit_word.h"

namespace leanchan::internal {

PermitOutcome PermitWord::try_acquire(std::uint32_t count, std::uint32_t capacity) noexcept {
  Word word = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((word & kClosedBit) != 0) return PermitOutcome::kClosed;
    // A waiting sender owns every slot that frees (FIFO hand-off).
    if ((word & kSendersWaitBit) != 0 || used_of(word) + count > capacity) {
      return PermitOutcome::kFull;
    }
    // acquire half on success: reads the value written by the releasing
    // RMW that freed this slot (or a later RMW of its release sequence), so
    // the receiver's block work before it (the receiver finishing a block:
    // progress published, spare kept or freed) happens before this holder
    // opens a block, which keeps the ceil(C/b)+1 bound in the C++ model. seq_cst: the
    // first half of the provisioning Dekker pair (permits_in_use).
    // The slots are permits still to claim: bit 3 (invariant P).
    Word pending = kPendingBit;
    if (word_.compare_exchange_weak(word, (word + count * kUsedUnit) | pending,
                                    std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return PermitOutcome::kAcquired;
    }
  }
}

PermitWord::Queueing PermitWord::acquire_or_queue(std::uint32_t count,
                                                  std::uint32_t capacity) noexcept {
  Word pending_bit = kPendingBit;
  // One CAS both checks the word and sets the waiting bit: a release either
  // ran before it (and this CAS sees the freed slot) or after it (and sees
  // the bit, so it takes the lock and hands the slot to the queue).
  Word word = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((word & kClosedBit) != 0) return {PermitOutcome::kClosed, 0};
    const std::uint32_t used = used_of(word);
    if ((word & kSendersWaitBit) == 0 && used + count <= capacity) {
      // seq_cst: as in try_acquire; bit 3 as there.
      if (word_.compare_exchange_weak(word, (word + count * kUsedUnit) | pending_bit,
                                      std::memory_order_seq_cst, std::memory_order_relaxed)) {
        return {PermitOutcome::kAcquired, count};
      }
      continue;
    }
    // First in line takes whatever is free now (the queue was empty, so
    // nobody is owed it) and waits for the rest.
    const std::uint32_t taken =
        (word & kSendersWaitBit) == 0 && used < capacity ? capacity - used : 0;
    // seq_cst: the slots taken now come from releases, as above. Slots
    // taken now are permits still to claim (bit 3); so is what a waiter is
    // granted later (settle sets the bit then).
    const Word pending = taken != 0 ? pending_bit : 0;
    if (word_.compare_exchange_weak(word, (word + taken * kUsedUnit) | kSendersWaitBit | pending,
                                    std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return {PermitOutcome::kFull, taken};
    }
  }
}

bool PermitWord::room_or_closed_else_mark_waiting(std::uint32_t capacity) noexcept {
  Word word = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((word & kClosedBit) != 0 || ((word & kSendersWaitBit) == 0 && used_of(word) < capacity)) {
      return true;  // closed, or room now: look again
    }
    // relaxed: under the lock, which orders it with the linking.
    if (word_.compare_exchange_weak(word, word | kSendersWaitBit, std::memory_order_relaxed)) {
      return false;
    }
  }
}

bool PermitWord::closed_else_mark_watched() noexcept {
  Word word = word_.load(std::memory_order_relaxed);
  do {
    if ((word & kClosedBit) != 0) return true;
    // relaxed: under the lock, as room_or_closed_else_mark_waiting.
  } while (!word_.compare_exchange_weak(word, word | kClosedWatchBit, std::memory_order_relaxed));
  return false;
}

}  // namespace leanchan::internal
