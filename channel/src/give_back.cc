// SPDX-License-Identifier: MIT
// Giving permits back (leanchan/internal/give_back.h).
#include "leanchan/internal/give_back.h"

#include "leanchan/internal/position.h"
#include "leanchan/internal/provisioning.h"
#include "leanchan/internal/test_point.h"

namespace leanchan::internal {

void GiveBack::clear_pending(ChannelState& state, const Locked& held) noexcept {
  PermitWord& word = state.semaphore_.word();
  // relaxed: a look under the lock, to skip the work when the bit is
  // clear; a bit set after it stays set, which invariant P allows.
  if (!PermitWord::pending_of(word.peek())) return;
  word.clear_pending_if_claimed(
      Provisioning::returned_locked(state, held, state.claimed_position()), state.slots());
}

void GiveBack::give_back_unredeemed(ChannelState& state) noexcept {
  PermitWord& word = state.semaphore_.word();
  // relaxed: a look, to skip the lock when no slot is out unclaimed (bit 3
  // clear). It follows this thread's close, an RMW of the same word, so it
  // reads the word as that RMW left it or later: a grant before the close
  // set the bit by then (the settle's RMW), and one decided after it is
  // withdrawn by the close, which waits for the lock when anyone is queued.
  if (!PermitWord::pending_of(word.peek())) return;
  const Locked held = state.blocks_.lock();
  word.release_unclaimed(Provisioning::returned_locked(state, held, state.claimed_position()),
                         state.slots());
  state.blocks_.unlock(held);
}

void GiveBack::give_back_taken(ChannelState& state) noexcept {
  BlockList& blocks = state.blocks_;
  const Locked held = blocks.lock();
  WaitNode* woken = nullptr;
  WaitNode* const next = give_back_taken_locked(state, held, false, woken);
  // Nobody waits any more: the receiver need not look at the lock again.
  if (!state.semaphore_.senders_wait()) blocks.clear_want_locked(held);
  blocks.unlock(held);
  state.semaphore_.wake(woken, next);
}

bool GiveBack::collect_owed(ChannelState& state) noexcept {
  // Nothing to collect (no lock then): with one-slot blocks every take ends
  // a block and gives back at once; while a sender waits, the receiver
  // gives back by itself (see collect_owed_locked).
  if (state.slots() == 1 || state.semaphore_.senders_wait()) return false;
  const Locked held = state.blocks_.lock();
  collect_owed_locked(state, held, false);
  state.blocks_.unlock(held);
  return true;
}

void GiveBack::collect_owed_locked(ChannelState& state, const Locked& held,
                                   bool raise_want) noexcept {
  // While a sender waits, the receiver gives back by itself (each take
  // returns the want bit, which stays on its block while anyone waits), and
  // what it gives goes to the waiters: collecting it here would hand them
  // their slots on this thread, running a notifier's callback or moving a
  // blocked sender's value on a thread that only asked for room. With
  // nobody waiting, what is collected goes to the free count: nothing is
  // woken.
  if (state.semaphore_.senders_wait()) return;
  WaitNode* woken = nullptr;
  (void)give_back_taken_locked(state, held, raise_want, woken);
}

WaitNode* GiveBack::give_back_taken_locked(ChannelState& state, const Locked& held, bool raise_want,
                                           WaitNode*& woken) noexcept {
  std::uint16_t position = 0;
  const std::uint32_t owed = state.blocks_.owed_locked(
      held, state.returned_low_.load(std::memory_order_relaxed), state.slots(), raise_want,
      position);  // relaxed: written only under the lock
  if (owed == 0) return nullptr;
  LEANCHAN_TEST_POINT(kPermitsGivenBack);
  // seq_cst: before the permits go back (see last_position_bound): a
  // sender that counts them as free reads this position or a later one.
  state.returned_low_.store(position, std::memory_order_seq_cst);
  WaitNode* const next = state.semaphore_.settle_locked(held, owed, woken);
  clear_pending(state, held);
  return next;
}

BlockHeader* GiveBack::finish_block(ChannelState& state, std::uint64_t block_number,
                                    const BlockLayout& layout, std::uint64_t& index) noexcept {
  BlockList& blocks = state.blocks_;
  const Locked held = blocks.lock();
  BlockHeader* head = blocks.finish_block_locked(held, block_number, layout, state.keep(layout),
                                                 state.semaphore_.senders_wait());
  // Every slot of the block was taken: its permits not given back yet
  // (at least the last slot's, which the receiver never counts) are this
  // thread's to give back once the position below says so; nobody else
  // can count them after it. relaxed load: written only under the lock.
  // `index` is the receiver's next position: the block's end.
  auto end = static_cast<std::uint16_t>(index);
  const auto owed =
      static_cast<std::uint16_t>(end - state.returned_low_.load(std::memory_order_relaxed));
  // Retention::kKeepNone: if that leaves nothing queued and no other
  // permit in use, every block goes first (release_if_drained's work, here
  // so that these permits go back after it: a holder of one could
  // otherwise keep the block alive).
  // The release moves the receiver's index (and the returned position) on
  // to the next block boundary.
  if (state.keeps_none()) {
    std::size_t freed = 0;
    if (blocks.release_if_drained_locked(held, index, layout, state.semaphore_.word(), owed,
                                         state.returned_low_, freed)) {
      head = nullptr;
      end = static_cast<std::uint16_t>(index);
    }
  }
  // The position and the permits change in one locked step, so provide
  // (which reads both under the lock) never sees the new position with
  // these permits still in use, which would number a block no message
  // uses. release: before the permits go back (settle_locked's seq_cst
  // RMW), so a sender that takes one of them reads this position or a
  // later one (see last_position_bound).
  state.returned_low_.store(end, std::memory_order_release);
  WaitNode* woken = nullptr;
  // after the block work: ceil(C/b)+1
  WaitNode* const next = state.semaphore_.settle_locked(held, owed, woken);
  // relaxed: as clear_pending's look. The returned position is `index`.
  if (PermitWord::pending_of(state.semaphore_.word().peek())) {
    state.semaphore_.word().clear_pending_if_claimed(index, state.slots());
  }
  blocks.unlock(held);
  LEANCHAN_TEST_POINT(kPermitsGivenBack);
  state.semaphore_.wake(woken, next);
  return head;
}

std::size_t GiveBack::release_unused_numbered(ChannelState& state, std::uint64_t index,
                                              const BlockLayout& layout) noexcept {
  BlockList& blocks = state.blocks_;
  const Locked held = blocks.lock();
  std::uint16_t position = 0;
  // relaxed: returned_low_ is written only under the lock.
  const std::uint32_t taken = blocks.owed_locked(
      held, state.returned_low_.load(std::memory_order_relaxed), state.slots(), false, position);
  std::size_t freed = 0;
  WaitNode* woken = nullptr;
  WaitNode* next = nullptr;
  // The head stays the receiver's block, so what it owes is given back as
  // give_back_taken does, in this critical section.
  if (blocks.unnumber_past_head_locked(held, index, layout, state.semaphore_.word(), taken,
                                       state.keep(layout).drained_spares, freed)) {
    next = give_back_taken_locked(state, held, false, woken);
  }
  blocks.unlock(held);
  state.semaphore_.wake(woken, next);
  return freed;
}

std::uint64_t GiveBack::release_if_drained(ChannelState& state, std::uint64_t index,
                                           const BlockLayout& layout, std::size_t& freed) noexcept {
  BlockList& blocks = state.blocks_;
  // A cheap look first: a sender claimed past the receiver.
  if (state.claimed_position() != index) return index;
  const Locked held = blocks.lock();
  std::uint16_t position = 0;
  // relaxed: returned_low_ is written only under the lock.
  const std::uint32_t taken = blocks.owed_locked(
      held, state.returned_low_.load(std::memory_order_relaxed), state.slots(), false, position);
  WaitNode* woken = nullptr;
  WaitNode* next = nullptr;
  const bool released = blocks.release_if_drained_locked(
      held, index, layout, state.semaphore_.word(), taken, state.returned_low_, freed);
  // The permits the receiver owed go back in the step that moved the
  // position (see finish_block).
  if (released && taken != 0) next = state.semaphore_.settle_locked(held, taken, woken);
  blocks.unlock(held);
  if (released && taken != 0) LEANCHAN_TEST_POINT(kPermitsGivenBack);
  state.semaphore_.wake(woken, next);
  return index;
}

}  // namespace leanchan::internal
