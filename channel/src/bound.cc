// SPDX-License-Identifier: MIT
// The bound and its waiter queue (docs/design.md "The bound" and "The waiter
// queue"): permits, FIFO hand-off of freed slots to waiting senders (threads,
// notifiers, coroutines alike), cancellation that passes a grant on, close,
// and closed watchers.
#include <algorithm>
#include <climits>
#include <thread>

#include "leanchan/internal/atomic.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/test_point.h"

namespace leanchan::internal {
namespace {

constexpr int kPermitSpins = spin_budget(64);   // bounded: pause-spins, then
constexpr int kPermitYields = spin_budget(16);  // yields, then the sender queues and sleeps
constexpr int kCallbackSpins = spin_budget(256);

ThreadWaitNode* as_thread(WaitNode* node) noexcept {
  // The node is the first member of a standard-layout ThreadWaitNode.
  return reinterpret_cast<ThreadWaitNode*>(node);
}

// Slots a queued sender still needs before it can be woken.
std::uint32_t& needed_of(WaitNode* node, std::uint32_t& one) noexcept {
  return node->kind == WaitNode::Kind::kSendThread ? as_thread(node)->needed : one;
}

// Waits until `node` has left the firing phases (its waker is done with it):
// briefly by watching, then by marking it awaited and sleeping on the word.
// acquire: everything the waker did (the callback) happens before the return.
std::uint32_t await_firing(WaitNode* node) noexcept {
  Atomic<std::uint32_t>& state = node->state;
  std::uint32_t value = state.load(std::memory_order_acquire);
  for (int spin = 0; spin < kCallbackSpins && WaitNode::phase(value) >= WaitNode::kFiring; ++spin) {
    cpu_relax();
    value = state.load(std::memory_order_acquire);
  }
  while (WaitNode::phase(value) >= WaitNode::kFiring) {
    if (WaitNode::phase(value) == WaitNode::kFiring) {
      const std::uint32_t awaited = (value & ~WaitNode::kPhaseMask) | WaitNode::kFiringAwaited;
      if (!state.compare_exchange_weak(value, awaited, std::memory_order_acquire)) continue;
      value = awaited;
    }
    futex_wait(state, value, nullptr);
    value = state.load(std::memory_order_acquire);
  }
  return value;
}

// Under the list lock: takes a queued node for firing, with or without a
// grant. An RMW, because a thread waiter may be setting kSleeping on its own
// word at the same moment (without the lock); that bit is kept.
void mark_firing(WaitNode* node, std::uint32_t grant) noexcept {
  std::uint32_t state = node->state.load(std::memory_order_relaxed);
  // release: the grant bit may be read (and redeemed, take_grant's acquire)
  // before the waker's own release; this publishes the releaser's work
  // before the hand-off (steps 9-10, the block bound).
  while (!node->state.compare_exchange_weak(
      state, (state & WaitNode::kSleeping) | WaitNode::kFiring | grant, std::memory_order_release,
      std::memory_order_relaxed)) {
  }
}

// A thread waiter waits for its outcome: it watches its own word briefly
// (a hand-off to a waiter that is still watching costs no system call on
// either side), then marks itself sleeping and sleeps on the word; woken
// early because it became first in line (settle_locked clears the flag), it
// watches again. Returns the final (idle) state, or kQueued when the
// deadline passed first. acquire: the waker's release exchange publishes the outcome (and
// the releaser's work before the hand-off).
std::uint32_t await_outcome(WaitNode& node, int first_rounds, int nudged_rounds,
                            const Deadline* deadline) noexcept {
  Atomic<std::uint32_t>& word = node.state;
  for (int watch_rounds = first_rounds;; watch_rounds = nudged_rounds) {
    for (int round = 0; round < watch_rounds; ++round) {
      const std::uint32_t state = word.load(std::memory_order_acquire);
      if (WaitNode::phase(state) == WaitNode::kIdle) return state;
      if (round < kPermitSpins) {
        cpu_relax();
      } else {
        yield_thread();
      }
    }
    std::uint32_t state = word.load(std::memory_order_acquire);
    for (;;) {
      if (WaitNode::phase(state) == WaitNode::kIdle) return state;
      if ((state & WaitNode::kSleeping) == 0) {
        // acquire on failure too: a failed CAS may read the outcome.
        if (!word.compare_exchange_weak(state, state | WaitNode::kSleeping,
                                        std::memory_order_acquire)) {
          continue;
        }
        state |= WaitNode::kSleeping;
      }
      if (!futex_wait(word, state, deadline)) return WaitNode::kQueued;  // deadline passed
      state = word.load(std::memory_order_acquire);
      // Nudged (the flag cleared: it is first in line now): watch again.
      if (WaitNode::phase(state) != WaitNode::kIdle && (state & WaitNode::kSleeping) == 0) break;
    }
  }
}

}  // namespace

PermitOutcome Bound::try_acquire(std::uint32_t count, std::uint32_t capacity) noexcept {
  std::uint32_t word = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((word & kClosedBit) != 0) return PermitOutcome::kClosed;
    // A waiting sender owns every slot that frees (FIFO hand-off).
    if ((word & kSendersWaitBit) != 0 || used_of(word) + count > capacity) {
      return PermitOutcome::kFull;
    }
    // acquire half on success: reads the value written by the releasing
    // RMW that freed this slot (or a later RMW of its release sequence), so
    // the receiver's block work before it (steps 9-10: progress published,
    // spare kept or freed) happens before this holder opens a block (step
    // 5), which keeps the ceil(C/b)+1 bound in the C++ model. seq_cst: the
    // first half of the provisioning Dekker pair (permits_in_use).
    if (word_.compare_exchange_weak(word, word + count * kUsedUnit, std::memory_order_seq_cst,
                                    std::memory_order_relaxed)) {
      return PermitOutcome::kAcquired;
    }
  }
}

Bound::Queueing Bound::acquire_or_queue(std::uint32_t count, std::uint32_t capacity) noexcept {
  // One CAS both checks the word and sets the waiting bit: a release either
  // ran before it (and this CAS sees the freed slot) or after it (and sees
  // the bit, so it takes the lock and hands the slot to the queue).
  std::uint32_t word = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((word & kClosedBit) != 0) return {PermitOutcome::kClosed, 0};
    const std::uint32_t used = used_of(word);
    if ((word & kSendersWaitBit) == 0 && used + count <= capacity) {
      // seq_cst: as in try_acquire.
      if (word_.compare_exchange_weak(word, word + count * kUsedUnit, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
        return {PermitOutcome::kAcquired, count};
      }
      continue;
    }
    // First in line takes whatever is free now (the queue was empty, so
    // nobody is owed it) and waits for the rest.
    const std::uint32_t taken =
        (word & kSendersWaitBit) == 0 && used < capacity ? capacity - used : 0;
    // seq_cst: the slots taken now come from releases, as above.
    if (word_.compare_exchange_weak(word, (word + taken * kUsedUnit) | kSendersWaitBit,
                                    std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return {PermitOutcome::kFull, taken};
    }
  }
}

bool Bound::room_or_closed_else_mark_waiting(std::uint32_t capacity) noexcept {
  std::uint32_t word = word_.load(std::memory_order_relaxed);
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

bool Bound::closed_else_mark_watched() noexcept {
  std::uint32_t word = word_.load(std::memory_order_relaxed);
  do {
    if ((word & kClosedBit) != 0) return true;
    // relaxed: under the lock, as room_or_closed_else_mark_waiting.
  } while (!word_.compare_exchange_weak(word, word | kClosedWatchBit, std::memory_order_relaxed));
  return false;
}

#if defined(LEANCHAN_EXPLORE)
bool Bound::mutant_check_then_release(std::uint32_t count) noexcept {
  if ((word_.load(std::memory_order_seq_cst) & kSendersWaitBit) != 0) return false;
  word_.fetch_sub(count * kUsedUnit, std::memory_order_seq_cst);
  return true;
}

void Bound::mutant_mark_waiting_after_unlock() noexcept {
  word_.fetch_or(kSendersWaitBit, std::memory_order_seq_cst);
}
#endif

PermitOutcome ChannelState::try_acquire_permits(std::uint32_t count) noexcept {
  const PermitOutcome outcome = bound_.try_acquire(count, capacity_);
  if (outcome != PermitOutcome::kFull) return outcome;
  // Full as the word says; the receiver may have taken messages whose
  // permits it has not given back yet: collect them, and look again.
  return collect_owed() ? bound_.try_acquire(count, capacity_) : outcome;
}

PermitOutcome ChannelState::acquire_permits(std::uint32_t count, const Deadline* deadline,
                                            void* value,
                                            ThreadWaitNode::PushFunction push) noexcept {
  // Not try_acquire_permits: what the receiver owes is collected once,
  // under the lock, if this sender comes to queue; a full channel usually
  // frees a slot by itself within the watch (the receiver gives a block's
  // permits back at its end), and collecting on every full attempt would
  // take the lock the receiver needs for that.
  PermitOutcome outcome = bound_.try_acquire(count, capacity_);
  const int watch_rounds = deadline != nullptr && *deadline <= std::chrono::steady_clock::now()
                               ? 0
                               : kPermitSpins + kPermitYields;
  // A full channel usually frees a slot within a receive or two: watch the
  // word briefly (pauses only, a few microseconds) before queueing. No
  // yield here: a sender that gave its processor away before taking its
  // place in line could lose slot after slot to try_send callers while it
  // waits to run again; once queued, its place is kept (and the first in
  // line watches longer, yielding, in await_outcome). Nobody is overtaken
  // by this watching: while a sender waits in the queue the word says so
  // and try_acquire_permits fails.
  for (int spin = 0; outcome == PermitOutcome::kFull && watch_rounds != 0 && spin < kPermitSpins;
       ++spin) {
    cpu_relax();
    const std::uint32_t word = bound_.peek();
    if ((word & Bound::kSendersWaitBit) != 0) break;  // others queue already: join them
    if (Bound::used_of(word) + count <= capacity_ || (word & Bound::kClosedBit) != 0) {
      outcome = bound_.try_acquire(count, capacity_);
    }
  }
  if (outcome != PermitOutcome::kFull) return outcome;

  // Queue (step 2). Under the lock, one CAS on the bound both checks for
  // room and announces the waiter (Bound::acquire_or_queue). No second
  // word, no Dekker. Before it, what the receiver owes goes back, and the
  // want bit goes up on its block in the same RMW (collect_owed_locked):
  // a take after that RMW sees the bit and gives its permit back under
  // this lock, so it reaches this waiter; one before it is counted now.
  ThreadWaitNode waiter;
  waiter.node.kind = WaitNode::Kind::kSendThread;
  waiter.wanted = count;
  waiter.value = value;
  waiter.push = push;
  lock_list();
  collect_owed_locked(true);
  const Bound::Queueing queueing = bound_.acquire_or_queue(count, capacity_);
  if (queueing.outcome != PermitOutcome::kFull) {
    unlock_list();
    return queueing.outcome;
  }
  const std::uint32_t taken = queueing.taken;
  waiter.needed = count - taken;
  waiter.node.state.store(WaitNode::kQueued, std::memory_order_relaxed);  // relaxed: under the lock
  waiters_.push_sender(&waiter.node);
  // Only the first in line watches before sleeping: the others would burn
  // the processor the receiver and the first one need; each is woken to
  // watch when it becomes first (settle_locked's nudge).
  const bool first_in_line = waiters_.first_sender() == &waiter.node;
  unlock_list();
  LEANCHAN_TEST_POINT(kSendThreadQueued);

  for (;;) {
    // Watch, then sleep, until the outcome is stored or the deadline passes.
    const std::uint32_t state =
        await_outcome(waiter.node, first_in_line ? watch_rounds : 0, watch_rounds, deadline);
    if (WaitNode::phase(state) == WaitNode::kIdle) {
      if ((state & WaitNode::kGrant) == 0) return PermitOutcome::kClosed;
      // The waker cleared `push` if it could not provide the blocks: the
      // slot is this sender's, the value still its own.
      return waiter.push != nullptr ? PermitOutcome::kSent : PermitOutcome::kAcquired;
    }
    LEANCHAN_TEST_POINT(kThreadWaiterTimedOut);
    // The deadline passed. Under the lock the node is either still queued
    // (leave, and hand what it was granted so far to the next waiter) or
    // already taken off by a waker (then the outcome is on its way: wait
    // for it without a deadline; a grant wins over the deadline).
    lock_list();
    if (WaitNode::phase(waiter.node.state.load(std::memory_order_relaxed)) == WaitNode::kQueued) {
      waiters_.remove(&waiter.node);
      waiter.node.state.store(WaitNode::kIdle, std::memory_order_relaxed);
      WaitNode* woken = nullptr;
      const std::uint32_t partial = waiter.wanted - waiter.needed;
      WaitNode* const next = settle_locked(partial, woken);
      unlock_list();
      wake_all(woken);
      nudge(next);
      if (partial != 0) notify_receiver_if_closed();  // as return_unused
      return PermitOutcome::kTimedOut;
    }
    unlock_list();
    deadline = nullptr;
  }
}

void ChannelState::release_permits(std::uint32_t count) noexcept {
  LEANCHAN_TEST_POINT(kPermitsGivenBack);
#if defined(LEANCHAN_EXPLORE)
  if (explore::mutant() == 2) {
    // The explorer's self-test: check, then subtract, as two steps. A
    // waiter that queues in between is never handed the slot.
    if (bound_.mutant_check_then_release(count)) return;
  }
#endif
  if (bound_.try_release(count)) return;
  // A sender waits: the slots are handed over under the lock, oldest first.
  lock_list();
  WaitNode* woken = nullptr;
  WaitNode* const next = settle_locked(count, woken);
  unlock_list();
  wake_all(woken);
  nudge(next);
}

void ChannelState::give_back_taken() noexcept {
  lock_list();
  WaitNode* woken = nullptr;
  WaitNode* const next = give_back_taken_locked(false, woken);
  // Nobody waits any more: the receiver need not look at the lock again.
  if (!bound_.senders_wait()) blocks_.clear_want_locked();
  unlock_list();
  wake_all(woken);
  nudge(next);
}

bool ChannelState::collect_owed() noexcept {
  // Nothing to collect (no lock then): with one-slot blocks every take ends
  // a block and gives back at once; while a sender waits, the receiver
  // gives back by itself (see collect_owed_locked).
  if (slots() == 1 || bound_.senders_wait()) return false;
  lock_list();
  collect_owed_locked(false);
  unlock_list();
  return true;
}

void ChannelState::collect_owed_locked(bool raise_want) noexcept {
  // While a sender waits, the receiver gives back by itself (each take
  // returns the want bit, which stays on its block while anyone waits), and
  // what it gives goes to the waiters: collecting it here would hand them
  // their slots on this thread, running a notifier's callback or moving a
  // blocked sender's value on a thread that only asked for room. With
  // nobody waiting, what is collected goes to the free count: nothing is
  // woken.
  if (bound_.senders_wait()) return;
  WaitNode* woken = nullptr;
  (void)give_back_taken_locked(raise_want, woken);
}

WaitNode* ChannelState::give_back_taken_locked(bool raise_want, WaitNode*& woken) noexcept {
  std::uint16_t position = 0;
  const std::uint32_t owed =
      blocks_.owed_locked(rx_position_.load(std::memory_order_relaxed), slots(), raise_want,
                          position);  // relaxed: written only under the lock
  if (owed == 0) return nullptr;
  LEANCHAN_TEST_POINT(kPermitsGivenBack);
  // seq_cst: before the permits go back (see last_position_bound): a
  // sender that counts them as free reads this position or a later one.
  rx_position_.store(position, std::memory_order_seq_cst);
  return settle_locked(owed, woken);
}

BlockHeader* ChannelState::finish_block(std::uint64_t block_number,
                                        const BlockLayout& layout) noexcept {
  lock_list();
  BlockHeader* head =
      blocks_.finish_block_locked(block_number, layout, keep(layout), bound_.senders_wait());
  // Every slot of the block was taken: its permits not given back yet
  // (at least the last slot's, which the receiver never counts) are this
  // thread's to give back once the position below says so; nobody else
  // can count them after it. relaxed load: written only under the lock.
  const auto end = static_cast<std::uint16_t>((block_number + 1) * layout.slots);
  const auto owed = static_cast<std::uint16_t>(end - rx_position_.load(std::memory_order_relaxed));
  // Retention::kKeepNone: if that leaves nothing queued and no other
  // permit in use, every block goes first (step 10, here so that these
  // permits go back after it: a holder of one could otherwise keep the
  // block alive).
  if (keeps_none()) {
    std::uint64_t index = (block_number + 1) * layout.slots;
    std::size_t freed = 0;
    if (blocks_.release_if_drained_locked(index, layout, bound_, owed, rx_position_, freed)) {
      head = nullptr;
    }
  }
  // The position and the permits change in one locked step, so provide
  // (which reads both under the lock) never sees the new position with
  // these permits still in use, which would number a block no message
  // uses. release: before the permits go back (settle_locked's seq_cst
  // RMW), so a sender that takes one of them reads this position or a
  // later one (see last_position_bound).
  rx_position_.store(end, std::memory_order_release);
#if defined(LEANCHAN_EXPLORE)
  if (explore::mutant() == 3) {
    // The explorer's self-test: the permits after the unlock, as before
    // (a sender providing in between numbers a block no message uses).
    unlock_list();
    release_permits(owed);
    return head;
  }
#endif
  WaitNode* woken = nullptr;
  WaitNode* const next = settle_locked(owed, woken);  // after the block work: ceil(C/b)+1
  unlock_list();
  LEANCHAN_TEST_POINT(kPermitsGivenBack);
  wake_all(woken);
  nudge(next);
  return head;
}

std::size_t ChannelState::release_unused_numbered(std::uint64_t index,
                                                 const BlockLayout& layout) noexcept {
  lock_list();
  std::uint16_t position = 0;
  // relaxed: rx_position_ is written only under the lock.
  const std::uint32_t taken =
      blocks_.owed_locked(rx_position_.load(std::memory_order_relaxed), slots(), false, position);
  std::size_t freed = 0;
  WaitNode* woken = nullptr;
  WaitNode* next = nullptr;
  // The head stays the receiver's block, so what it owes is given back as
  // give_back_taken does, in this critical section.
  if (blocks_.unnumber_past_head_locked(index, layout, bound_, taken, keep(layout).drained_spares,
                                        freed)) {
    next = give_back_taken_locked(false, woken);
  }
  unlock_list();
  wake_all(woken);
  nudge(next);
  return freed;
}

std::uint64_t ChannelState::release_if_drained(std::uint64_t index, const BlockLayout& layout,
                                               std::size_t& freed) noexcept {
  // A cheap look first: a sender claimed past the receiver.
  if (blocks_.tail_position() != index) return index;
  lock_list();
  std::uint16_t position = 0;
  // relaxed: rx_position_ is written only under the lock.
  const std::uint32_t taken =
      blocks_.owed_locked(rx_position_.load(std::memory_order_relaxed), slots(), false, position);
  WaitNode* woken = nullptr;
  WaitNode* next = nullptr;
  const bool released =
      blocks_.release_if_drained_locked(index, layout, bound_, taken, rx_position_, freed);
  // The permits the receiver owed go back in the step that moved the
  // position (see finish_block).
  if (released && taken != 0) next = settle_locked(taken, woken);
  unlock_list();
  if (released && taken != 0) LEANCHAN_TEST_POINT(kPermitsGivenBack);
  wake_all(woken);
  nudge(next);
  return index;
}

WaitNode* ChannelState::settle_locked(std::uint32_t count, WaitNode*& woken) noexcept {
  // Hand `count` freed slots to the queue, oldest sender first; a sender
  // whose need is met leaves the queue with a grant. Once the channel is
  // closed nothing is handed over (close() wakes everyone without a grant).
  // Precondition: `woken` is empty; the nodes granted here are chained on it.
  WaitNode** tail = &woken;
  WaitNode* first_granted = nullptr;  // the nodes granted by this call
  if (!bound_.is_closed()) {
    while (count > 0) {
      WaitNode* node = waiters_.first_sender();
      if (node == nullptr) break;
      std::uint32_t one = 1;
      std::uint32_t& needed = needed_of(node, one);
      const std::uint32_t given = std::min(count, needed);
      needed -= given;
      count -= given;
      if (needed != 0) break;  // count is 0: the head keeps its partial grant
      waiters_.remove(node);
      mark_firing(node, WaitNode::kGrant);
      if (first_granted == nullptr) first_granted = node;
      *tail = node;
      tail = &node->next;
      *tail = nullptr;
    }
  }
  // What is left goes back to the free count; the waiting bit follows the
  // queue. seq_cst: as release_permits' CAS. This CAS is where the hand-off
  // takes effect: if close() set the closed bit since the load above, the
  // grants made here are withdrawn (their slots go back to the count, their
  // nodes are woken without a grant), so no send succeeds after close().
  WaitNode* const head = waiters_.first_sender();
  if (first_granted != nullptr) LEANCHAN_TEST_POINT(kHandOffDecided);
  bound_.settle(count, head != nullptr, [&first_granted]() noexcept {
    std::uint32_t withdrawn = 0;
    for (WaitNode* node = first_granted; node != nullptr; node = node->next) {
      withdrawn += node->kind == WaitNode::Kind::kSendThread ? as_thread(node)->wanted : 1;
      mark_firing(node, 0);
    }
    first_granted = nullptr;
    return withdrawn;
  });
  // The sender now first in line gets the next slot. If it is a thread that
  // fell asleep, wake it now (after the lock), so that it is watching when
  // that slot comes instead of paying its wake-up latency then: at small
  // capacities the receiver would otherwise wait for it every message.
  // relaxed: a hint; the RMW only clears the flag the owner set.
  if (first_granted != nullptr && head != nullptr && head->kind == WaitNode::Kind::kSendThread &&
      (head->state.fetch_and(~WaitNode::kSleeping, std::memory_order_relaxed) &
       WaitNode::kSleeping) != 0) {
    return head;
  }
  return nullptr;
}

void ChannelState::nudge(WaitNode* node) noexcept {
  // The node may have left the queue (timed out) since the lock was
  // released: a stale futex wake is harmless (see wait_node.h).
  if (node != nullptr) futex_wake(node->state, 1);
}

void ChannelState::finish_firing(WaitNode* node) noexcept {
  // Leave the firing phase, keeping the grant bit as it is now (the owner
  // may have redeemed it meanwhile). release: the callback (and the grant)
  // happen before the owner's acquire load that sees kIdle.
  std::uint32_t state = node->state.load(std::memory_order_relaxed);
  while (!node->state.compare_exchange_weak(state, state & WaitNode::kGrant,
                                            std::memory_order_acq_rel, std::memory_order_relaxed)) {
  }
  if (WaitNode::phase(state) == WaitNode::kFiringAwaited) futex_wake(node->state, INT_MAX);
}

void ChannelState::wake_all(WaitNode* woken) noexcept {
  while (woken != nullptr) {
    WaitNode* const node = woken;
    woken = node->next;  // read before the node may go away
    if (node->callback == nullptr) {
      // A thread (send or closed watch): store its outcome; wake it only if
      // it sleeps (or waits in await_firing). Only this waker changes the
      // grant bit of a thread node, so the outcome read first is final.
      // release: pairs with await_outcome's acquire loads.
      const std::uint32_t outcome = node->state.load(std::memory_order_relaxed) & WaitNode::kGrant;
      if (outcome != 0 && node->kind == WaitNode::Kind::kSendThread) {
        // A blocked send: move its value into the slot it was handed. The
        // sender cannot return (its value lives on its stack) before the
        // outcome below is stored.
        ThreadWaitNode* const waiter = as_thread(node);
        // written before the release exchange below, read by the owner
        // after its acquire load of the outcome.
        if (waiter->push != nullptr && !waiter->push(*this, waiter->value)) waiter->push = nullptr;
      }
      const std::uint32_t before = node->state.exchange(outcome, std::memory_order_release);
      if ((before & WaitNode::kSleeping) != 0 ||
          WaitNode::phase(before) == WaitNode::kFiringAwaited) {
        futex_wake(node->state, 1);
      }
    } else {
      node->callback(node->context);
      finish_firing(node);
    }
  }
}

std::uint32_t ChannelState::free_slots() noexcept {
  (void)collect_owed();
  return bound_.free_slots(capacity_);
}

void ChannelState::close() noexcept {
  // seq_cst: the closed bit pairs with the receiver's end check (step 11).
  // One RMW on the word both closes and reads the waiting bits: a waiter
  // queues only with a CAS that sees the word open, so either it queued
  // before (and its bit is seen here) or it sees the closed bit.
  const std::uint32_t old = bound_.close();
  if ((old & (Bound::kSendersWaitBit | Bound::kClosedWatchBit)) == 0) return;
  lock_list();
  WaitNode* woken = waiters_.take_all_but_receive();
  std::uint32_t returned = 0;  // partial grants of threads that wanted several
  for (WaitNode* node = woken; node != nullptr; node = node->next) {
    if (node->kind == WaitNode::Kind::kSendThread) {
      returned += as_thread(node)->wanted - as_thread(node)->needed;
    }
    mark_firing(node, 0);
  }
  bound_.finish_close(returned);
  unlock_list();
  wake_all(woken);
}

bool ChannelState::is_finished(std::uint64_t receiver_index) noexcept {
  // Senders first: once it reads 0 no reservation can ever be made again, so
  // a zero use count read afterwards is final. (Read the other way round, a
  // sender could reserve, send and leave between the two loads.)
  // seq_cst: these loads are the receiver's re-check after announcing a wait
  // (step 11) and pair with remove_sender's and release_permits' RMWs.
  // Slots in use may be the receiver's own takes not given back yet: when
  // that decides, they go back first (under the lock, so no giver is half
  // way), and the word is read again. Nothing is owed when the returned
  // position is the receiver's (`receiver_index`): no lock then. (A stale
  // read of it is older, hence smaller: never a false "nothing owed".)
  const bool senderless = lifetime_.senders() == 0;
  std::uint32_t word = bound_.load_for_end_check();
  if (!senderless && (word & Bound::kClosedBit) == 0) return false;
  if (Bound::used_of(word) == 0) return true;
  // relaxed: see above; written under the lock.
  if (rx_position_.load(std::memory_order_relaxed) == static_cast<std::uint16_t>(receiver_index)) {
    return false;
  }
  give_back_taken();
  word = bound_.load_for_end_check();
  return Bound::used_of(word) == 0;
}

RoomStatus ChannelState::arm_send(WaitNode* node) noexcept {
  // A firing of this node's previous arming must end first: its last step
  // resets the phase, which must not erase this arming.
  const std::uint32_t state = await_firing(node);
  if ((state & WaitNode::kGrant) != 0) return RoomStatus::kHoldsSlot;
  if (WaitNode::phase(state) == WaitNode::kQueued) return RoomStatus::kArmed;  // armed already
  node->kind = WaitNode::Kind::kSend;
  lock_list();
#if defined(LEANCHAN_EXPLORE)
  if (explore::mutant() == 1) {
    // The explorer's self-test: link under the lock, announce after it (as
    // the first waiting layer counted armed notifiers outside the lock).
    const std::uint32_t word = bound_.peek();
    if ((word & Bound::kClosedBit) != 0 ||
        ((word & Bound::kSendersWaitBit) == 0 && Bound::used_of(word) < capacity_)) {
      unlock_list();
      return (word & Bound::kClosedBit) != 0 ? RoomStatus::kClosed : RoomStatus::kRoom;
    }
    node->state.store(WaitNode::kQueued, std::memory_order_relaxed);
    waiters_.push_sender(node);
    unlock_list();
    bound_.mutant_mark_waiting_after_unlock();
    return RoomStatus::kArmed;
  }
#endif
  // What the receiver owes goes back first, with the want bit raised on
  // its block in the same RMW (as in acquire_permits). Linking and the
  // waiting bit change in one critical section, so a release never sees
  // one without the other.
  collect_owed_locked(true);
  if (bound_.room_or_closed_else_mark_waiting(capacity_)) {
    // relaxed: a snapshot, as is_closed; a close after it is seen by the send.
    const bool closed = (bound_.peek() & Bound::kClosedBit) != 0;
    unlock_list();
    return closed ? RoomStatus::kClosed : RoomStatus::kRoom;
  }
  node->state.store(WaitNode::kQueued, std::memory_order_relaxed);
  waiters_.push_sender(node);
  unlock_list();
  LEANCHAN_TEST_POINT(kSendNotifierQueued);
  return RoomStatus::kArmed;
}

bool ChannelState::cancel_send(WaitNode* node) noexcept {
  // acquire: an idle node without a grant is not queued and its last
  // firing is over: nothing to do, no lock.
  if (node->state.load(std::memory_order_acquire) == WaitNode::kIdle) return false;
  lock_list();
  if (node->state.load(std::memory_order_relaxed) == WaitNode::kQueued) {
    waiters_.remove(node);
    node->state.store(WaitNode::kIdle, std::memory_order_relaxed);
    WaitNode* woken = nullptr;
    (void)settle_locked(0, woken);  // the waiting bit follows the queue
    unlock_list();
    return true;
  }
  unlock_list();
  await_firing(node);
  // A grant it was woken for and did not use goes to the next waiter.
  if (take_grant(node)) {
#if defined(LEANCHAN_EXPLORE)
    // The explorer's self-test: the grant back without telling the
    // receiver, as before (a closed receiver armed meanwhile never wakes).
    if (explore::mutant() == 4) {
      release_permits(1);
      return false;
    }
#endif
    return_unused(1);
  }
  return false;
}

bool ChannelState::take_grant(WaitNode* node) noexcept {
  std::uint32_t state = node->state.load(std::memory_order_relaxed);
  while ((state & WaitNode::kGrant) != 0) {
    // acquire: the slot's release (and the block work before it) happens
    // before the redeemer's push.
    if (node->state.compare_exchange_weak(state, state & ~WaitNode::kGrant,
                                          std::memory_order_acquire, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

bool ChannelState::watch_closed(ClosedWatchNode* watch) noexcept {
  await_firing(&watch->node);
  watch->node.kind = WaitNode::Kind::kClosedWatch;
  lock_list();
  // As in arm_send: the bit and the link change together, under the lock.
  if (bound_.closed_else_mark_watched()) {
    unlock_list();
    return true;
  }
  watch->node.state.store(WaitNode::kQueued, std::memory_order_relaxed);
  waiters_.add_closed_watch(watch);
  unlock_list();
  return false;
}

bool ChannelState::unwatch_closed(ClosedWatchNode* watch) noexcept {
  if (watch->node.state.load(std::memory_order_acquire) == WaitNode::kIdle) return false;
  lock_list();
  if (WaitNode::phase(watch->node.state.load(std::memory_order_relaxed)) == WaitNode::kQueued) {
    waiters_.remove_closed_watch(watch);
    watch->node.state.store(WaitNode::kIdle, std::memory_order_relaxed);
    if (!waiters_.has_closed_watch()) {
      bound_.clear_watched();
    }
    unlock_list();
    return true;
  }
  unlock_list();
  await_firing(&watch->node);
  return false;
}

bool ChannelState::wait_closed(const Deadline* deadline) noexcept {
  ClosedWatchNode watch;  // callback null: woken through its state word
  if (watch_closed(&watch)) return true;
  for (;;) {
    const std::uint32_t state = await_outcome(watch.node, 0, 0, deadline);
    if (WaitNode::phase(state) == WaitNode::kIdle) return true;
    if (unwatch_closed(&watch)) return false;  // still linked: timed out
    deadline = nullptr;                        // close is waking it: wait
  }
}

}  // namespace leanchan::internal
