// SPDX-License-Identifier: MIT
// The waiting layer (leanchan/internal/semaphore.h): acquiring with FIFO
// hand-off of freed slots to waiting senders (threads, notifiers,
// coroutines alike), cancellation that passes a grant on, close, and closed
// watchers. The permit word's own operations are in permit_word.cc.
#include "leanchan/internal/semaphore.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include "budget_refusal.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/test_point.h"
#include "leanchan/internal/wait_policy.h"

namespace leanchan::internal {
namespace {

ThreadWaitNode* as_thread(WaitNode* node) noexcept {
  // The node is the first member of a standard-layout ThreadWaitNode.
  return reinterpret_cast<ThreadWaitNode*>(node);
}

// Slots a queued sender still needs before it can be woken.
std::uint32_t& needed_of(WaitNode* node, std::uint32_t& one) noexcept {
  return node->kind == WaitNode::Kind::kSendThread ? as_thread(node)->needed : one;
}

// A thread waiter waits for its outcome: it watches its own word (a
// hand-off to a waiter that is still watching costs no system call on
// either side), then marks itself sleeping and sleeps on the word; woken
// early because it became first in line (settle_locked clears the flag), it
// watches again. Returns the final (idle) state, or kQueued when the
// deadline passed first. acquire: the waker's release exchange publishes
// the outcome (and the releaser's work before the hand-off).
std::uint32_t await_outcome(WaitNode& node, const SpinBudget& first, const SpinBudget& nudged,
                            const Deadline* deadline) noexcept {
  Atomic<std::uint32_t>& word = node.state;
  std::uint32_t state = 0;
  const auto ready = [&] {
    LEANCHAN_TEST_POINT(kThreadWaiterLooked);
    state = word.load(std::memory_order_acquire);
    return WaitNode::phase(state) == WaitNode::kIdle;
  };
  const auto sleep = [&] {
    if ((state & WaitNode::kSleeping) == 0) {
      // acquire on failure too: a failed CAS may read the outcome.
      if (!word.compare_exchange_weak(state, state | WaitNode::kSleeping,
                                      std::memory_order_acquire)) {
        return Slept::kLookAgain;
      }
      state |= WaitNode::kSleeping;
    }
    LEANCHAN_TEST_POINT(kThreadWaiterSleeps);
    if (!futex_wait(word, state, deadline)) return Slept::kGiveUp;  // the deadline passed
    state = word.load(std::memory_order_acquire);
    // Nudged (the flag cleared: it is first in line now): watch again.
    if (WaitNode::phase(state) != WaitNode::kIdle && (state & WaitNode::kSleeping) == 0) {
      return Slept::kWatchAgain;
    }
    return Slept::kLookAgain;
  };
  return spin_then_sleep(first, nudged, ready, sleep) ? state : WaitNode::kQueued;
}

// A notifier that carries its value, fired with a grant: the waker moves
// the value in, as for a blocked thread, so that the receiver finds the
// message without waiting for the notifier's owner to run. If the blocks
// could not be provided the grant stays, for the owner to redeem.
void push_carried(WaitNode* node) noexcept {
  // relaxed: while the node fires only this waker changes its grant bit
  // (the owner takes a carried grant only once the firing is over).
  if ((node->state.load(std::memory_order_relaxed) & WaitNode::kGrant) == 0) return;
  // The node is the first member of a standard-layout SendValueNode.
  auto* carrier = reinterpret_cast<SendValueNode*>(node);
  ChannelState& channel = *carrier->channel;
  // The push claims a position for the owner, who may have let its last
  // Sender go since it queued (notifier.h allows it): sending is kept open
  // for the push, as a blocked send's own Sender keeps it. Failing that,
  // the end is under way and gives the grant back (ChannelState::
  // end_sending): the node keeps it, good for nothing more.
  if (!channel.lifetime().try_add_sender()) return;
  bool pushed = false;
  {
    const KeepRefusalRecord keep;  // the push allocates for the owner, not for us
    pushed = carrier->push(channel, carrier->value);
  }
  channel.remove_sender();  // the last one going ends sending here (after the push)
  if (!pushed) return;
  // The grant is used: kSent replaces it (an RMW: the owner may be marking
  // the firing awaited). release: the push (the value moved from) happens
  // before the owner's acquire load that sees kSent.
  (void)fetch_update(
      node->state, std::memory_order_release, std::memory_order_relaxed,
      [](std::uint32_t state) { return (state & ~WaitNode::kGrant) | WaitNode::kSent; });
}

}  // namespace

Semaphore::Carried Semaphore::take_carried(WaitNode* node) noexcept {
  // acquire: the waker's push (kSent) or the releaser's work (a grant)
  // happens before the owner's next step.
  std::uint32_t state = node->state.load(std::memory_order_acquire);
  // A firing is waited out (a callback, and a carried push: short): its
  // callback may have told the owner already, who would otherwise wait for
  // a second one; and the owner may free the node as soon as this returns.
  if (WaitNode::phase(state) >= WaitNode::kFiring) state = await_firing(node);
  if ((state & WaitNode::kSent) != 0) {
    // relaxed: idle now, and only the owner writes an idle node.
    node->state.store(state & ~WaitNode::kSent, std::memory_order_relaxed);
    return Carried::kSent;
  }
  if (WaitNode::phase(state) == WaitNode::kQueued) return Carried::kWaiting;
  return take_grant(node) ? Carried::kGrant : Carried::kNothing;
}

std::uint32_t Semaphore::await_firing(WaitNode* node) noexcept {
  // Briefly by watching, then by marking it awaited and sleeping on the
  // word. acquire: everything the waker did (the callback) happens before
  // the return.
  Atomic<std::uint32_t>& state = node->state;
  std::uint32_t value = 0;
  const auto ready = [&] {
    value = state.load(std::memory_order_acquire);
    return WaitNode::phase(value) < WaitNode::kFiring;
  };
  const auto sleep = [&] {
    if (WaitNode::phase(value) == WaitNode::kFiring) {
      const std::uint32_t awaited = (value & ~WaitNode::kPhaseMask) | WaitNode::kFiringAwaited;
      if (!state.compare_exchange_weak(value, awaited, std::memory_order_acquire)) {
        return Slept::kLookAgain;
      }
      value = awaited;
    }
    futex_wait(state, value, nullptr);
    return Slept::kLookAgain;
  };
  (void)spin_then_sleep(kWaitPolicy.callback, ready, sleep);
  return value;
}

void Semaphore::mark_firing(WaitNode* node, std::uint32_t grant) noexcept {
  // Under the list lock: takes a node off the queue for firing, with or
  // without a grant. An RMW, because a thread waiter may be setting
  // kSleeping on its own word at the same moment (without the lock); that
  // bit is kept. release: the releaser's work before a redeemer's push
  // (take_grant's acquire).
  (void)fetch_update(node->state, std::memory_order_release, std::memory_order_relaxed,
                     [grant](std::uint32_t state) {
                       return (state & WaitNode::kSleeping) | WaitNode::kFiring | grant;
                     });
}

void Semaphore::finish_firing(WaitNode* node) noexcept {
  // Leave the firing phase, keeping the grant bit as it is now (the owner
  // may have redeemed it meanwhile) and a carried value's kSent. release:
  // the callback (and the grant) happen before the owner's acquire load
  // that sees kIdle.
  const std::uint32_t state =
      fetch_update(node->state, std::memory_order_acq_rel, std::memory_order_relaxed,
                   [](std::uint32_t now) { return now & (WaitNode::kGrant | WaitNode::kSent); });
  if (WaitNode::phase(state) == WaitNode::kFiringAwaited) futex_wake(node->state, INT_MAX);
}

PermitOutcome Semaphore::acquire(ThreadWaitNode& waiter, const Deadline* deadline,
                                 const ListLock& lock, const BeforeQueue& before_queue) noexcept {
  const std::uint32_t count = waiter.wanted;
  PermitOutcome outcome = word_.try_acquire(count, capacity());
  const bool expired = deadline != nullptr && *deadline <= std::chrono::steady_clock::now();
  // A full channel usually frees a slot within a receive or two: watch the
  // word briefly (pauses only, a few microseconds) before queueing. No
  // yield here: a sender that gave its processor away before taking its
  // place in line could lose slot after slot to try_send callers while it
  // waits to run again; once queued, its place is kept (and the first in
  // line watches longer, yielding, in await). Nobody is overtaken by this
  // watching: while a sender waits in the queue the word says so and
  // try_acquire fails.
  if (outcome == PermitOutcome::kFull && !expired) {
    (void)watch(kWaitPolicy.full_bound, [&] {
      const PermitWord::Word word = word_.peek();
      if ((word & PermitWord::kSendersWaitBit) != 0) return true;  // others queue: join them
      if (PermitWord::used_of(word) + count <= capacity() || (word & PermitWord::kClosedBit) != 0) {
        outcome = word_.try_acquire(count, capacity());
      }
      return outcome != PermitOutcome::kFull;
    });
  }
  if (outcome != PermitOutcome::kFull) return outcome;

  // Queue. Under the lock, one CAS on the word both checks for room and
  // announces the waiter (PermitWord::acquire_or_queue): no second word,
  // no Dekker. Before it, the channel's before_queue runs in the same
  // critical section.
  waiter.node.kind = WaitNode::Kind::kSendThread;
  const Locked held = lock.lock();
  before_queue.run(before_queue.context, held);
  const PermitWord::Queueing queueing = word_.acquire_or_queue(count, capacity());
  if (queueing.outcome != PermitOutcome::kFull) {
    lock.unlock(held);
    return queueing.outcome;
  }
  waiter.needed = count - queueing.taken;
  waiter.node.state.store(WaitNode::kQueued, std::memory_order_relaxed);  // relaxed: under the lock
  waiters_.push_sender(&waiter.node);
  // Only the first in line watches before sleeping: the others would burn
  // the processor the receiver and the first one need; each is woken to
  // watch when it becomes first (settle_locked's nudge).
  const bool first_in_line = waiters_.first_sender() == &waiter.node;
  lock.unlock(held);
  LEANCHAN_TEST_POINT(kSendThreadQueued);
  return await(waiter, first_in_line, expired, deadline, lock);
}

PermitOutcome Semaphore::await(ThreadWaitNode& waiter, bool first_in_line, bool expired,
                               const Deadline* deadline, const ListLock& lock) noexcept {
  const SpinBudget none{};
  const SpinBudget nudged = expired ? none : kWaitPolicy.first_waiter_for(first_waiter_watch());
  for (;;) {
    // Watch, then sleep, until the outcome is stored or the deadline passes.
    const std::uint32_t state =
        await_outcome(waiter.node, first_in_line ? nudged : none, nudged, deadline);
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
    const Locked held = lock.lock();
    if (WaitNode::phase(waiter.node.state.load(std::memory_order_relaxed)) == WaitNode::kQueued) {
      waiters_.remove(&waiter.node);
      waiter.node.state.store(WaitNode::kIdle, std::memory_order_relaxed);
      WaitNode* woken = nullptr;
      WaitNode* const next = settle_locked(held, waiter.wanted - waiter.needed, woken);
      lock.unlock(held);
      wake(woken, next);
      return PermitOutcome::kTimedOut;
    }
    lock.unlock(held);
    deadline = nullptr;
  }
}

void Semaphore::release(std::uint32_t count, const ListLock& lock) noexcept {
  LEANCHAN_TEST_POINT(kPermitsGivenBack);
  if (word_.try_release(count)) return;
  // A sender waits: the slots are handed over under the lock, oldest first.
  const Locked held = lock.lock();
  WaitNode* woken = nullptr;
  WaitNode* const next = settle_locked(held, count, woken);
  lock.unlock(held);
  wake(woken, next);
}

WaitNode* Semaphore::settle_locked(const Locked&, std::uint32_t count, WaitNode*& woken) noexcept {
  // A sender whose need is met leaves the queue with a grant. Once the
  // channel is closed nothing is handed over (close() wakes everyone
  // without a grant).
  // Bit 1 clear (the common case: every block's give-back): no sender is
  // queued, since every critical section that links a sender sets the bit
  // and only a settlement or close that leaves none queued clears it; the
  // slots go back to the free count in one RMW. The queue alone would not
  // do: a cancel or a timed-out wait that removed the last sender leaves
  // it empty with bit 1 still set, and that removal's own settlement, on
  // the general path, clears the bit. A closed watcher is not a sender:
  // it changes neither bit 1 nor the count.
  bool unqueued = !word_.senders_wait();
  LEANCHAN_EXPLORE_CHECK(!unqueued || waiters_.first_sender() == nullptr,
                         "a sender is queued while bit 1 is clear");
  if (unqueued) {
    word_.release_unqueued(count);
    return nullptr;
  }
  WaitNode** tail = &woken;
  WaitNode* first_granted = nullptr;  // the nodes granted by this call
  bool granted = false;               // a slot handed over (PermitWord invariant P)
  if (!word_.is_closed()) {
    while (count > 0) {
      WaitNode* node = waiters_.first_sender();
      if (node == nullptr) break;
      std::uint32_t one = 1;
      std::uint32_t& needed = needed_of(node, one);
      const std::uint32_t given = std::min(count, needed);
      granted = true;
      needed -= given;
      count -= given;
      if (needed != 0) break;  // count is 0: the head keeps its partial grant
      waiters_.remove(node);   // still marked queued: marked once the settle decides, below
      if (first_granted == nullptr) first_granted = node;
      *tail = node;
      tail = &node->next;
      *tail = nullptr;
    }
  }
  // What is left goes back to the free count; the waiting bit follows the
  // queue. seq_cst: as PermitWord::try_release. This CAS is where the
  // hand-off takes effect: if close() set the closed bit since the load
  // above, the grants made here are withdrawn (their slots go back to the
  // count, their nodes are woken without a grant), so no send succeeds
  // after close().
  WaitNode* const head = waiters_.first_sender();
  if (first_granted != nullptr) LEANCHAN_TEST_POINT(kHandOffDecided);
  // Any slot handed over, a partial grant included, is a permit still to
  // claim (PermitWord invariant P).
  WaitNode* const decided = first_granted;
  word_.settle(count, head != nullptr, granted, [&first_granted]() noexcept {
    std::uint32_t withdrawn = 0;
    for (WaitNode* node = first_granted; node != nullptr; node = node->next) {
      withdrawn += node->kind == WaitNode::Kind::kSendThread ? as_thread(node)->wanted : 1;
    }
    first_granted = nullptr;
    return withdrawn;
  });
  // Marked firing only now, with the grant if the settle made it take
  // effect (one RMW each): shown before the CAS, a grant could be redeemed
  // and then withdrawn, counted twice, and an awaiting owner reset to sleep
  // for good. Until now they read "queued" (a redeem reports busy, a re-arm
  // "armed"; unlinking takes the lock). wake_nodes reads each as final.
  if (decided != nullptr) LEANCHAN_TEST_POINT(kHandOffRecorded);
  for (WaitNode* node = decided; node != nullptr; node = node->next) {
    mark_firing(node, first_granted != nullptr ? WaitNode::kGrant : 0);
  }
  // The sender now first in line gets the next slot. If it is a thread that fell asleep,
  // wake it now (after the lock), so that it is watching when that slot comes instead of
  // paying its wake-up latency then (at small capacities, every message).
  // relaxed: a hint; the RMW only clears the flag the owner set.
  if (first_granted != nullptr && head != nullptr && head->kind == WaitNode::Kind::kSendThread &&
      (head->state.fetch_and(~WaitNode::kSleeping, std::memory_order_relaxed) &
       WaitNode::kSleeping) != 0) {
    return head;
  }
  return nullptr;
}

void Semaphore::wake_nodes(WaitNode* woken, WaitNode* next) noexcept {
  while (woken != nullptr) {
    WaitNode* const node = woken;
    woken = node->next;    // read before the node may go away
    node->next = nullptr;  // an idle node is unlinked (set_notifier checks); released below
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
        const KeepRefusalRecord keep;  // the push allocates for the waiter, not for us
        if (waiter->push != nullptr && !waiter->push(*waiter->channel, waiter->value)) {
          waiter->push = nullptr;
        }
      }
      const std::uint32_t before = node->state.exchange(outcome, std::memory_order_release);
      if ((before & WaitNode::kSleeping) != 0 ||
          WaitNode::phase(before) == WaitNode::kFiringAwaited) {
        futex_wake(node->state, 1);
      }
    } else {
      if (node->carries_value) push_carried(node);
      node->callback(node->context);
      finish_firing(node);
    }
  }
  // The nudged node may have left the queue (timed out) since the lock was
  // released: a stale futex wake is harmless (see wait_node.h).
  if (next != nullptr) futex_wake(next->state, 1);
}

void Semaphore::close(const ListLock& lock) noexcept {
  // seq_cst: the closed bit pairs with the receiver's end check
  // (Ending::is_finished). One RMW on the word both closes and reads the
  // waiting bits: a waiter queues only with a CAS that sees the word open,
  // so either it queued before (and its bit is seen here) or it sees the
  // closed bit.
  const PermitWord::Word old = word_.close();
  if ((old & (PermitWord::kSendersWaitBit | PermitWord::kClosedWatchBit)) == 0) return;
  const Locked held = lock.lock();
  WaitNode* woken = waiters_.take_all_but_receive();
  std::uint32_t returned = 0;  // partial grants of threads that wanted several
  for (WaitNode* node = woken; node != nullptr; node = node->next) {
    if (node->kind == WaitNode::Kind::kSendThread) {
      returned += as_thread(node)->wanted - as_thread(node)->needed;
    }
    mark_firing(node, 0);
  }
  word_.finish_close(returned);
  lock.unlock(held);
  wake(woken, nullptr);
}

RoomStatus Semaphore::arm_send(WaitNode* node, const ListLock& lock,
                               const BeforeQueue& before_queue) noexcept {
  // A firing of this node's previous arming must end first: its last step
  // resets the phase, which must not erase this arming.
  const std::uint32_t state = await_firing(node);
  if ((state & WaitNode::kGrant) != 0) return RoomStatus::kHoldsSlot;
  if (WaitNode::phase(state) == WaitNode::kQueued) return RoomStatus::kArmed;  // armed already
  node->kind = WaitNode::Kind::kSend;
  const Locked held = lock.lock();
  before_queue.run(before_queue.context, held);
  // Linking and the waiting bit change in one critical section, so a
  // release never sees one without the other.
  if (word_.room_or_closed_else_mark_waiting(capacity())) {
    // relaxed: a snapshot, as is_closed; a close after it is seen by the send.
    const bool closed = (word_.peek() & PermitWord::kClosedBit) != 0;
    lock.unlock(held);
    return closed ? RoomStatus::kClosed : RoomStatus::kRoom;
  }
  node->state.store(WaitNode::kQueued, std::memory_order_relaxed);
  waiters_.push_sender(node);
  lock.unlock(held);
  LEANCHAN_TEST_POINT(kSendNotifierQueued);
  return RoomStatus::kArmed;
}

Semaphore::Cancelled Semaphore::cancel_send(WaitNode* node, const ListLock& lock) noexcept {
  // acquire: an idle node without a grant is not queued and its last
  // firing is over: nothing to do, no lock.
  if (node->state.load(std::memory_order_acquire) == WaitNode::kIdle) return Cancelled::kNotQueued;
  {
    const Locked held = lock.lock();
    if (node->state.load(std::memory_order_relaxed) == WaitNode::kQueued) {
      waiters_.remove(node);
      node->state.store(WaitNode::kIdle, std::memory_order_relaxed);
      WaitNode* woken = nullptr;
      (void)settle_locked(held, 0, woken);  // the waiting bit follows the queue
      lock.unlock(held);
      return Cancelled::kUnqueued;
    }
    lock.unlock(held);
  }
  await_firing(node);
  return take_grant(node) ? Cancelled::kGrantTaken : Cancelled::kNotQueued;
}

bool Semaphore::take_grant(WaitNode* node) noexcept {
  std::uint32_t state = node->state.load(std::memory_order_relaxed);
  while ((state & WaitNode::kGrant) != 0) {
    // acquire: the slot's release (and the block work before it) happens
    // before the redeemer's push.
    if (node->state.compare_exchange_weak(state, state & ~WaitNode::kGrant,
                                          std::memory_order_acquire, std::memory_order_relaxed)) {
      // Still firing: finish_firing is yet to write the node. Its release
      // pairs with await_firing's acquire, so the firer's last write happens
      // before the owner frees the node.
      bool firing = WaitNode::phase(state) >= WaitNode::kFiring;
      if (firing) (void)await_firing(node);
      return true;
    }
  }
  return false;
}

bool Semaphore::watch_closed(ClosedWatchNode* watch, const ListLock& lock) noexcept {
  await_firing(&watch->node);
  watch->node.kind = WaitNode::Kind::kClosedWatch;
  const Locked held = lock.lock();
  // As in arm_send: the bit and the link change together, under the lock.
  if (word_.closed_else_mark_watched()) {
    lock.unlock(held);
    return true;
  }
  watch->node.state.store(WaitNode::kQueued, std::memory_order_relaxed);
  waiters_.add_closed_watch(watch);
  lock.unlock(held);
  return false;
}

bool Semaphore::unwatch_closed(ClosedWatchNode* watch, const ListLock& lock) noexcept {
  if (watch->node.state.load(std::memory_order_acquire) == WaitNode::kIdle) return false;
  {
    const Locked held = lock.lock();
    if (WaitNode::phase(watch->node.state.load(std::memory_order_relaxed)) == WaitNode::kQueued) {
      waiters_.remove_closed_watch(watch);
      watch->node.state.store(WaitNode::kIdle, std::memory_order_relaxed);
      if (!waiters_.has_closed_watch()) word_.clear_watched();
      lock.unlock(held);
      return true;
    }
    lock.unlock(held);
  }
  await_firing(&watch->node);
  return false;
}

bool Semaphore::wait_closed(const Deadline* deadline, const ListLock& lock) noexcept {
  ClosedWatchNode watch;  // callback null: woken through its state word
  if (watch_closed(&watch, lock)) return true;
  const SpinBudget none{};
  for (;;) {
    const std::uint32_t state = await_outcome(watch.node, none, none, deadline);
    if (WaitNode::phase(state) == WaitNode::kIdle) return true;
    if (unwatch_closed(&watch, lock)) return false;  // still linked: timed out
    deadline = nullptr;                              // close is waking it: wait
  }
}

}  // namespace leanchan::internal
