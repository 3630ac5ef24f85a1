// SPDX-License-Identifier: MIT
// leanchan/internal/provisioning.h: allocation before the claim
// (docs/design.md "Allocation before the claim"), a protocol of the waiting
// layer's permit word, the block list and the returned position.
//
// A sender claims a position only once the numbered blocks reach the block
// of the last position any permit in use can be given, so claiming never
// allocates and an allocation failure fails a send before anything is
// claimed (kNoMemory, the value handed back). The check is lock-free
// (last_position_bound, then BlockList::covers); about once per block it
// fails and the permit holder numbers blocks under the list lock (provide).
#ifndef LEANCHAN_INTERNAL_PROVISIONING_H_
#define LEANCHAN_INTERNAL_PROVISIONING_H_

#include <cstdint>

#include "leanchan/export.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/position.h"

namespace leanchan::internal {

class Provisioning {
 public:
  // A bound on the last position a permit in use can be given: the
  // returned position plus the permits in use, minus one. Senders read the
  // returned position's low 16 bits. The claim counter is never more than
  // `permits` ahead of it, so below 2^16 - 1 permits the pair gives it
  // exactly; in a deeper queue it is rebuilt from the receiver's block word
  // instead (returned_position), as provide does under the lock.
  // Precondition: the caller holds a permit.
  static std::uint64_t last_position_bound(const ChannelState& state) noexcept {
    // seq_cst: the permits first (a permit counted here is covered by what
    // the caller numbers); then the returned position: its acquire half
    // pairs with the giver's store, which happens after the claims of the
    // positions it covers (the receiver's release add, the giver's acquire
    // read of it: BlockList::owed_locked), so the claim position read next
    // is at least that position; seq_cst orders it after this holder's
    // permit and against release_if_drained's store (see there). All
    // positions modulo M (position.h).
    const std::uint32_t permits = state.semaphore_.word().permits_in_use();
    const std::uint64_t low = state.returned_low_.load(std::memory_order_seq_cst);
    return bound(state, permits, low, state.claimed_position());
  }
  // Under the lock: numbers blocks (allocating if need be) until the one
  // holding the last position a permit in use can be given exists. False
  // if an allocation failed: the caller gives its permits back
  // (kNoMemory); nothing was claimed.
  LEANCHAN_API static bool provide(ChannelState& state, const BlockLayout& layout) noexcept;
  // Under the lock, for a send that holds no permit yet and found its
  // claim's block unnumbered with no permit still to claim (PermitWord::
  // Fast::kUncovered; or the list locked: then it first watches the
  // holder leave, and returns at once if the block is there): numbers blocks up to the one of the
  // position the next permit would be given (the returned position plus the slots in use), if a
  // slot is free and the channel open; nothing otherwise. The send then tries its one CAS again.
  // Within the ceil(C/b)+1 bound: that position lies less than C after the returned position. False
  // if an allocation failed: the send fails with kNoMemory, nothing taken.
  LEANCHAN_API static bool provide_next(ChannelState& state, const BlockLayout& layout) noexcept;
  // Under the lock: the returned position, exactly (it and the receiver's
  // block word move only under the lock), for a claim position `claimed`.
  static std::uint64_t returned_locked(const ChannelState& state, const Locked& held,
                                       std::uint64_t claimed) noexcept {
    return returned_position(state.returned_low_.load(std::memory_order_seq_cst), claimed,
                             state.blocks_.receiver_tag_locked(held), state.slots());
  }
  // The last position `permits` permits in use can be given, from the
  // returned position's low 16 bits `low` and the claim position `claimed`.
  static std::uint64_t bound(const ChannelState& state, std::uint32_t permits, std::uint64_t low,
                             std::uint64_t claimed) noexcept {
    const std::uint64_t slots = state.slots();
    const std::uint64_t behind = (claimed - low) & 0xFFFF;
    if (permits < 0xFFFF && behind <= permits) {
      const std::uint64_t returned =
          claimed >= behind ? claimed - behind : claimed + Positions::modulus(slots) - behind;
      return Positions::add(returned, permits - 1, slots);
    }
    // The block word is read after the position that the same giver
    // published after it (or before it: release_if_drained, where the
    // boundary lies at the end of the older block), so it names the
    // returned position's block or a later one: a later one only makes
    // the bound larger.
    return Positions::add(returned_position(low, claimed, state.blocks_.receiver_tag(), slots),
                          permits - 1, slots);
  }
  // The returned position from its low 16 bits `low`: it lies in
  // [first, first + slots], where `first` is the first position of the
  // block tagged `receiver_tag` (the receiver's, as of its last finished
  // block: GiveBack::finish_block moves both together), and it is at most
  // `claimed`. An inconsistent pair (a block word newer than the position)
  // gives a larger value, never a smaller one.
  static std::uint64_t returned_position(std::uint64_t low, std::uint64_t claimed,
                                         std::uint32_t receiver_tag, std::uint64_t slots) noexcept {
    // Block numbers run modulo M / b, a power of two of at least 2^30
    // (position.h); tags are their low bits.
    const std::uint64_t block_mask = Positions::modulus(slots) / slots - 1;
    const std::uint64_t block = claimed / slots;
    const std::uint64_t first =
        ((block - tag_distance(block_tag(block), receiver_tag)) & block_mask) * slots;
    // claimed - first: `first` lies less than 2^26 blocks before `claimed`
    // (its tag is the receiver's), so this is exact.
    const std::uint64_t ahead = Positions::distance(claimed, first, slots);
    std::uint64_t offset = (low - first) & 0xFFFF;  // returned - first
    if (offset > slots || offset > ahead) offset = slots < ahead ? slots : ahead;
    return Positions::add(first, offset, slots);
  }
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_PROVISIONING_H_
