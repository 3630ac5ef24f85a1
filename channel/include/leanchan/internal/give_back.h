// SPDX-License-Identifier: MIT
// leanchan/internal/give_back.h: giving permits back (docs/design.md
// "Giving permits back"), a protocol of the block list, the waiting layer
// and the returned position.
//
// The receiver does not give a permit back per message: it counts the
// slots it took in its block's header (ChannelOps::try_take; the permits
// are "owed") and gives them back at the block's end (finish_block), when a
// sender waits (the want bit on its block), and when a sender finds the
// bound full (collect_owed). Whoever gives them back first moves the
// returned position (its low 16 bits, ChannelState::returned_low_) and
// then the permit word, in one critical section of the list lock, so that
// Provisioning::provide never sees one without the other.
#ifndef LEANCHAN_INTERNAL_GIVE_BACK_H_
#define LEANCHAN_INTERNAL_GIVE_BACK_H_

#include <cstddef>
#include <cstdint>

#include "leanchan/export.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/channel_state.h"

namespace leanchan::internal {

class GiveBack {
 public:
  // Under the list lock, the permits of every slot the receiver took go
  // back as Semaphore::release would (to the waiting senders first, who
  // are woken on this thread). Receiver thread. O(1) plus the senders woken.
  LEANCHAN_API static void give_back_taken(ChannelState& state) noexcept;
  // A sender's collection when it finds the bound full: under the lock,
  // unless nothing can be owed (one-slot blocks) or a sender waits (false
  // then, without the lock).
  static bool collect_owed(ChannelState& state) noexcept;
  // The same, under the lock (a full bound, a sender about to queue): only
  // while no sender waits, so that no waiter is woken on the caller's
  // thread. With `raise_want`, the head's want bit is set in the same RMW:
  // a take after it sees the bit and gives back under the lock, so its
  // permit reaches the sender that queues in this critical section.
  static void collect_owed_locked(ChannelState& state, const Locked& held,
                                  bool raise_want) noexcept;

  // The receiver took the last slot of block `block_number` and its next
  // position is `index` (the block's end): under the lock, retires the
  // block (or keeps it for reuse) and then gives back the permits of its
  // slots not given back yet (after the block work: keeps the ceil(C/b)+1
  // bound). Returns the head afterwards; under Retention::kKeepNone a
  // release (release_if_drained) may have moved `index` on.
  LEANCHAN_API static BlockHeader* finish_block(ChannelState& state, std::uint64_t block_number,
                                                const BlockLayout& layout,
                                                std::uint64_t& index) noexcept;
  // Frees every block not needed for a message, if the channel is drained
  // at `index` (the permits the receiver owes aside, which go back in the
  // same locked step as the position moves); returns the receiver's index
  // afterwards (BlockList::release_if_drained_locked). Receiver thread.
  LEANCHAN_API static std::uint64_t release_if_drained(ChannelState& state, std::uint64_t index,
                                                       const BlockLayout& layout,
                                                       std::size_t& freed) noexcept;
  // Found empty with blocks numbered past the receiver's: with no permit
  // out, they become spares and the spares beyond what a drain keeps are
  // freed (BlockList::unnumber_past_head_locked); the receiver's owed
  // permits go back in the same locked step. Receiver thread, at `index`.
  // Returns the blocks freed.
  LEANCHAN_API static std::size_t release_unused_numbered(ChannelState& state, std::uint64_t index,
                                                          const BlockLayout& layout) noexcept;
  // Once no Sender, Permit or PermitBatch is left (ChannelState::
  // end_sending): the slots in use that no claimed position accounts for
  // (invariant P) can only be slots handed to send notifiers that nobody
  // can redeem any more; they go back, under the lock
  // (PermitWord::release_unclaimed). Nothing waits for them: the close
  // before it fired every waiter.
  static void give_back_unredeemed(ChannelState& state) noexcept;
  // Lock-free: true if some permit is out beyond what the receiver, at
  // `index`, can owe (at most the slots it took in its block). A hint: the
  // lock decides.
  static bool permits_out_beyond_owed(const ChannelState& state, std::uint64_t index) noexcept {
    return state.semaphore_.word().permits_in_use() > index % state.slots();
  }

 private:
  // Under the lock: the permits the receiver owes (BlockList::owed_locked)
  // are published as given back and settled (Semaphore::settle_locked);
  // returns what settle_locked returns.
  static WaitNode* give_back_taken_locked(ChannelState& state, const Locked& held, bool raise_want,
                                          WaitNode*& woken) noexcept;
  // Under the lock, after a give-back: clears the permit word's bit 3 (a
  // permit may wait to claim) if none does, from the returned position
  // rebuilt exactly (PermitWord::clear_pending_if_claimed); a load when
  // the bit is clear.
  static void clear_pending(ChannelState& state, const Locked& held) noexcept;
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_GIVE_BACK_H_
