// SPDX-License-Identifier: MIT
// Allocation before the claim (leanchan/internal/provisioning.h).
#include "leanchan/internal/provisioning.h"

namespace leanchan::internal {

bool Provisioning::provide(ChannelState& state, const BlockLayout& layout) noexcept {
  // Under the lock the bound is computed afresh, and exactly: the returned
  // position and the receiver's block word move only under the lock, so
  // returned_position rebuilds it exactly. GiveBack::release_if_drained
  // (the only free of a block at or after the returned position) waits for
  // the lock too.
  BlockList& blocks = state.blocks_;
  const Locked held = blocks.lock();
  const std::uint32_t permits = state.semaphore_.word().permits_in_use();  // seq_cst, as above
  const std::uint64_t claimed = state.claimed_position();
  const std::uint64_t returned = returned_locked(state, held, claimed);
  const std::uint64_t last = Positions::add(returned, permits - 1, layout.slots);
  // The senders' block moves up to the claim position's, not past it: the
  // blocks past it are for the permits held.
  const bool ok =
      blocks.extend_locked(held, block_tag(last / layout.slots), block_tag(claimed / layout.slots),
                           layout, state.semaphore_.senders_wait());
  blocks.unlock(held);
  return ok;
}

bool Provisioning::provide_next(ChannelState& state, const BlockLayout& layout) noexcept {
  BlockList& blocks = state.blocks_;
  // The send's check may have failed only because the list was locked
  // (the receiver finishing a block): watch the holder leave and look
  // again, as open_block does, before taking the lock. relaxed: the
  // caller's second CAS checks again from a seq_cst load.
  if (blocks.watch_while_locked()) {
    const std::uint64_t claim = PermitWord::position_of(state.semaphore_.word().peek());
    if (blocks.covers(block_tag(claim / layout.slots))) return true;
  }
  const Locked held = blocks.lock();
  // seq_cst: as provide's look at the permits in use.
  const PermitWord::Word word = state.semaphore_.word().snapshot();
  const std::uint32_t used = PermitWord::used_of(word);
  bool ok = true;
  if ((word & (PermitWord::kClosedBit | PermitWord::kSendersWaitBit)) == 0 &&
      used < state.capacity()) {
    const std::uint64_t claimed = PermitWord::position_of(word);
    const std::uint64_t returned = returned_locked(state, held, claimed);
    const std::uint64_t next = Positions::add(returned, used, layout.slots);
    ok = blocks.extend_locked(held, block_tag(next / layout.slots),
                              block_tag(claimed / layout.slots), layout, false);
  }
  blocks.unlock(held);
  return ok;
}

}  // namespace leanchan::internal
