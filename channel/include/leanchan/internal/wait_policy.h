// SPDX-License-Identifier: MIT
// leanchan/internal/wait_policy.h: the channel's waiting policy, one object:
// how long each kind of waiter watches before it sleeps (its SpinBudget,
// spin_wait.h), and the rules that pick a streaming receiver's watch. Every
// wait in the channel takes its budget from a WaitPolicy: the channel's own
// is kWaitPolicy; the receiver's watches (Ending::watch_briefly,
// Ending::watch_rest_of_block, ChannelOps::cursor_for) also take one as an
// argument, so a test can run them under another. Why each figure is what
// it is: docs/design.md, "Waiting".
#ifndef LEANCHAN_INTERNAL_WAIT_POLICY_H_
#define LEANCHAN_INTERNAL_WAIT_POLICY_H_

#include <cstddef>
#include <cstdint>

#include "leanchan/fwd.h"
#include "leanchan/internal/spin_wait.h"

namespace leanchan::internal {

// Which watch a receiver that streams may use, by its channel's runway
// (WaitPolicy::depth_for_runway; kept in the receiver's ChannelOps::Cursor).
enum class WatchDepth : std::uint8_t { kShort, kDeep, kLong };

struct WaitPolicy {
  // ---- Senders ---------------------------------------------------------------
  // The list lock (ListLock::lock): a holder keeps it for a few hundred
  // nanoseconds.
  SpinBudget list_lock;
  // A sender that finds its block's list locked, before it queues on the
  // lock (queueing would put every sender of the block to sleep).
  SpinBudget open_block;
  // A sender that finds the bound full, before it takes its place in line:
  // pauses only (a yield before queueing could lose slot after slot to
  // try_send callers).
  SpinBudget full_bound;
  // The first sender in line, watching its node for the hand-off before it
  // sleeps (and again whenever it is nudged to the front), under
  // WaiterWatch::kDefault; kLong watches 4 times as long, kNone not at all
  // (first_waiter_for).
  SpinBudget first_waiter;

  // ---- The receiver ------------------------------------------------------------
  // Before it sleeps, a receiver that found nothing watches with one of
  // three budgets, by its channel's runway: the slots a sender can fill
  // before it waits for the receiver, counted when the receiver owes the
  // most (it gives a block's permits back at the block's end, so up to
  // b - 1 of the C slots may be its own takes): C - b + 1.
  //
  // The short watch: doubling pauses, 1 + 2 + ... + 64 and then 64 each,
  // then yields. A message that comes alone, as a reply does, is seen at
  // once.
  SpinBudget receiver_short;
  // The deep watch, for a runway of deep_runway or more: 64 pauses before
  // the second look and each one after. A sender there can run ahead, and a
  // receiver that looks again at once only pulls the line that carries
  // every message's ready bit (the block header) away from the sender it
  // waits for; after a longer pause it takes the messages that arrived
  // meanwhile in a row.
  SpinBudget receiver_deep;
  // Below this runway a streaming sender fills it within one deep pause and
  // then waits, and both sides take turns instead of overlapping.
  std::uint32_t deep_runway;
  // The long watch, for a runway of long_runway or more: two looks, each
  // followed by 512 pauses (the same 1,024 pauses of watching as the deep
  // watch before the yields). In a block of 32 slots a sender sets 32 ready
  // bits on one header line; a receiver that waits longer finds the sender
  // in a later block and takes a whole block's messages without pulling the
  // line back. The cost: a message that arrives while the receiver pauses
  // waits up to one such pause.
  SpinBudget receiver_long;
  // A sender as fast as one message a pause needs a whole long pause to
  // fill 512 slots; with a shorter runway it would wait for the receiver
  // instead of running ahead.
  std::uint32_t long_runway;
  // The rest-of-block watch: a receiver that streams from a shallow channel
  // (the short watch) and finds its next message missing with two slots or
  // more of its block left first lets the sender finish the block: 8 looks
  // each followed by 8 pauses, ended early when its next message is there
  // and nothing arrived between two looks (the sender stopped). One that
  // takes each message as it comes pulls the block header's line, which
  // carries every ready bit, from the sender at every message.
  SpinBudget rest_of_block;
  // Where one block holds the whole capacity, the rest-of-block watch only
  // for messages of at most this size (allows_rest_of_block).
  std::size_t rest_of_block_max_message_bytes;
  // The pauses after which the receiver's watch also asks, at each look,
  // whether the channel has ended: longer than a sender that keeps up takes
  // between two messages. Counted in pauses, not looks, so that every
  // receiver watch asks after the same wait (end_check_look). The
  // rest-of-block watch, at most 64 pauses before the receiver's watch,
  // does not ask: the end is noticed that much later there.
  int end_check_after_pauses;

  // ---- Elsewhere -------------------------------------------------------------
  // Waiting for a notifier's callback (or a waker's last step) to end: they
  // are short, and run on another core.
  SpinBudget callback;
  // A ThreadPoolExecutor worker that found no task, before it sleeps: as the
  // receiver's short watch (a task scheduled meanwhile is taken with no
  // wake-up), then yields, which a loaded machine needs to run the thread
  // that schedules.
  SpinBudget pool_worker;

  // The receiver's watch for a channel whose runway is `runway` slots.
  constexpr WatchDepth depth_for_runway(std::uint32_t runway) const noexcept {
    if (runway >= long_runway) return WatchDepth::kLong;
    if (runway >= deep_runway) return WatchDepth::kDeep;
    return WatchDepth::kShort;
  }
  constexpr const SpinBudget& receiver(WatchDepth depth) const noexcept {
    switch (depth) {
      case WatchDepth::kLong: return receiver_long;
      case WatchDepth::kDeep: return receiver_deep;
      case WatchDepth::kShort: break;
    }
    return receiver_short;
  }
  // The index of the first look of the receiver's watch at `depth` that
  // also asks whether the channel has ended (end_check_after_pauses).
  constexpr int end_check_look(WatchDepth depth) const noexcept {
    return looks_before_pausing(receiver(depth), end_check_after_pauses);
  }
  // Whether a channel allows the rest-of-block watch: the short watch (the
  // deep and long watches already let the sender run ahead), and either
  // room for more than one block or messages of at most
  // rest_of_block_max_message_bytes (where one block holds the whole
  // capacity, the sender cannot write while the receiver drains it, and for
  // larger messages that overlap is worth more than the header line).
  constexpr bool allows_rest_of_block(WatchDepth depth, std::uint32_t block_slots,
                                      std::uint32_t capacity,
                                      std::size_t message_bytes) const noexcept {
    return depth == WatchDepth::kShort &&
           (block_slots < capacity || message_bytes <= rest_of_block_max_message_bytes);
  }
  // The first waiter's budget under a channel's WaiterWatch option.
  constexpr SpinBudget first_waiter_for(WaiterWatch watch) const noexcept {
    switch (watch) {
      case WaiterWatch::kNone: return {};
      case WaiterWatch::kLong:
        return spin_budget_of(4 * first_waiter.pauses, 4 * first_waiter.yields);
      case WaiterWatch::kDefault: break;
    }
    return first_waiter;
  }
};

// The channel's policy. Under the explorer every count is at most 2
// (spin_budget_of): every look is a scheduling point there.
inline constexpr WaitPolicy kWaitPolicy{
    .list_lock = spin_budget_of(64),
    .open_block = spin_budget_of(256),
    .full_bound = spin_budget_of(64),
    .first_waiter = spin_budget_of(64, 16),
    .receiver_short = spin_budget_of(16, 16, 64),
    .receiver_deep = spin_budget_of(16, 16, 64, 64),
    .deep_runway = 64,
    .receiver_long = spin_budget_of(2, 16, 512, 512),
    .long_runway = 512,
    .rest_of_block = spin_budget_of(8, 0, 8, 8),
    .rest_of_block_max_message_bytes = 64,
    .end_check_after_pauses = 15,
    .callback = spin_budget_of(256),
    .pool_worker = spin_budget_of(16, 16, 64),
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_WAIT_POLICY_H_
