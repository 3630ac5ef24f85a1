// SPDX-License-Identifier: MIT
// leanchan/internal/spin_wait.h: the one way the channel waits. A waiter
// first watches the word it waits on for a bounded budget (looks separated
// by processor pauses, then by yields), and only then sleeps on it (a futex
// wait, or whatever the caller's sleep step does). Every wait in the channel
// (and the baseline's) is an instance of spin_then_sleep or of its watching
// half, watch, with one of the budgets below.
#ifndef LEANCHAN_INTERNAL_SPIN_WAIT_H_
#define LEANCHAN_INTERNAL_SPIN_WAIT_H_

#include <cstddef>
#include <cstdint>

#include "leanchan/fwd.h"
#include "leanchan/internal/atomic.h"

namespace leanchan::internal {

// How long a waiter watches before it sleeps: `pauses` looks, separated by
// processor pauses that double from `first_pause` up to `max_pause` between
// looks (1 and 1: a plain spin), then `yields` looks separated by a yield of
// the thread. Under the explorer each count is at most 2 (spin_budget):
// every look is a scheduling point there.
struct SpinBudget {
  int pauses = 0;
  int yields = 0;
  int max_pause = 1;
  int first_pause = 1;
  constexpr int looks() const noexcept { return pauses + yields; }
};

constexpr SpinBudget spin_budget_of(int pauses, int yields = 0, int max_pause = 1,
                                    int first_pause = 1) noexcept {
  // The pauses are capped as the counts are: each pause is a scheduling
  // point under the explorer (where no other budget reaches a gap of 2).
  return {spin_budget(pauses), spin_budget(yields), spin_budget(max_pause),
          spin_budget(first_pause)};
}

// The channel's budgets, in one place (docs/design.md, "Waiting").
// The list lock: a holder keeps it for a few hundred nanoseconds.
inline constexpr SpinBudget kListLockWatch = spin_budget_of(64);
// A sender that finds its block's list locked, before it queues on the lock
// (queueing would put every sender of the block to sleep).
inline constexpr SpinBudget kOpenBlockWatch = spin_budget_of(256);
// A sender that finds the bound full, before it takes its place in line:
// pauses only (a yield before queueing could lose slot after slot to
// try_send callers).
inline constexpr SpinBudget kFullBoundWatch = spin_budget_of(64);
// The first sender in line, watching its node for the hand-off before it
// sleeps (and again whenever it is nudged to the front).
inline constexpr SpinBudget kFirstWaiterWatch = spin_budget_of(64, 16);
// The first sender's budget under the channel's WaiterWatch option.
inline const SpinBudget& first_waiter_budget(WaiterWatch watch) noexcept {
  static constexpr SpinBudget kNone{};
  static constexpr SpinBudget kLong =
      spin_budget_of(4 * kFirstWaiterWatch.pauses, 4 * kFirstWaiterWatch.yields);
  switch (watch) {
    case WaiterWatch::kNone: return kNone;
    case WaiterWatch::kLong: return kLong;
    case WaiterWatch::kDefault: break;
  }
  return kFirstWaiterWatch;
}
// The receiver before it sleeps: doubling pauses, 1 + 2 + ... + 64 and then
// 64 each, then yields.
inline constexpr SpinBudget kReceiverWatch = spin_budget_of(16, 16, 64);
// The receiver of a channel whose senders can run kDeepReceiverRunway
// messages or more ahead of it: 64 pauses before the second look and each
// one after, 1,024 pauses of watching before the yields, where
// kReceiverWatch makes 703. A sender there can run
// ahead, and a receiver that looks again at once only pulls the line that
// carries every message's ready bit (the block header) away from the
// sender it waits for; after a longer pause it takes the messages that
// arrived meanwhile in a row.
inline constexpr SpinBudget kDeepReceiverWatch = spin_budget_of(16, 16, 64, 64);
// The runway: the slots a sender can fill before it waits for the
// receiver, counted when the receiver owes the most (it gives a block's
// permits back at the block's end, so up to b - 1 of the C slots may be
// its own takes): C - b + 1. Below 64 a streaming sender fills it within
// one deep pause and then waits, and both sides take turns instead of
// overlapping (docs/design.md, "The deep watch", has the measurements).
inline constexpr std::uint32_t kDeepReceiverRunway = 64;
// The receiver of a channel whose runway is kLongReceiverRunway or more:
// two looks, each followed by 512 pauses, so the same 1,024 pauses of
// watching as kDeepReceiverWatch
// before the yields. In a block of 32 slots a sender sets 32 ready bits on one
// header line; a receiver that waits longer finds the sender in a later
// block and takes a whole block's messages without pulling the line back
// (docs/design.md, "The long watch"). The cost: a message that arrives
// while the receiver pauses waits up to one such pause.
inline constexpr SpinBudget kLongReceiverWatch = spin_budget_of(2, 16, 512, 512);
// The worst case: a sender as fast as one message a pause needs a whole
// long pause to fill 512 slots; with a shorter runway it would wait for the
// receiver instead of running ahead (docs/design.md, "The long watch").
inline constexpr std::uint32_t kLongReceiverRunway = 512;
// A receiver that streams from a shallow channel (one whose watch is
// kReceiverWatch: a runway below kDeepReceiverRunway) and finds its next
// message missing with two slots or more of its block left: before that
// watch, 8 looks each followed by 8 pauses for the rest of its block, ended
// early when its next message is there and nothing arrived between two
// looks (the sender stopped). A receiver that takes each message as it
// comes there pulls the block header's line, which carries every ready
// bit, from the sender at every message, and both sides crawl; one that
// lets the sender finish the block takes it in a row (docs/design.md,
// "The rest-of-block watch").
inline constexpr SpinBudget kRestOfBlockWatch = spin_budget_of(8, 0, 8, 8);
// Where one block holds the whole capacity, the rest-of-block watch only
// for messages of at most this size (ChannelOps::watches_rest_of_block).
inline constexpr std::size_t kRestOfBlockMaxMessageBytes = 64;

// Which watch a receiver that streams may use, by its channel's runway
// (the receiver's own constant: ChannelOps::Cursor).
enum class WatchDepth : std::uint8_t { kShort, kDeep, kLong };

constexpr WatchDepth watch_depth_for_runway(std::uint32_t runway) noexcept {
  if (runway >= kLongReceiverRunway) return WatchDepth::kLong;
  if (runway >= kDeepReceiverRunway) return WatchDepth::kDeep;
  return WatchDepth::kShort;
}

constexpr const SpinBudget& receiver_watch(WatchDepth depth) noexcept {
  switch (depth) {
    case WatchDepth::kLong: return kLongReceiverWatch;
    case WatchDepth::kDeep: return kDeepReceiverWatch;
    case WatchDepth::kShort: break;
  }
  return kReceiverWatch;
}
// The pauses after which the receiver's watch also asks, at each look,
// whether the channel has ended: 15 (1 + 2 + 4 + 8 in kReceiverWatch),
// longer than a sender that keeps up
// takes between two messages. Counted in pauses, not looks, so that every
// receiver watch asks after the same wait (in the deep and long watches,
// from their second look; looks_before_pausing). The rest-of-block watch
// (kRestOfBlockWatch), at most 64 pauses before the doubling watch, does
// not ask: the end is noticed that much later there.
inline constexpr int kReceiverEndCheckAfterPauses = 15;
// Waiting for a notifier's callback (or a waker's last step) to end: they
// are short, and run on another core.
inline constexpr SpinBudget kCallbackWatch = spin_budget_of(256);
// A ThreadPoolExecutor worker that found no task, before it sleeps: as the
// receiver's (a task scheduled meanwhile is taken with no wake-up), then
// yields, which a loaded machine needs to run the thread that schedules.
inline constexpr SpinBudget kPoolWorkerWatch = spin_budget_of(16, 16, 64);

// The pauses between a watch's next two looks, after `pauses` between the
// last two: double, up to budget.max_pause.
constexpr int next_pause(const SpinBudget& budget, int pauses) noexcept {
  return pauses < budget.max_pause ? pauses * 2 : budget.max_pause;
}

// The looks that watch(budget, ...) makes before it has paused `pauses`
// times in all: the index of the first look that comes after them (its
// pause looks, budget.pauses, if they pause fewer times in all).
constexpr int looks_before_pausing(const SpinBudget& budget, int pauses) noexcept {
  int paused = 0;
  int gap = budget.first_pause;
  for (int look = 0; look < budget.pauses; ++look) {
    if (paused >= pauses) return look;
    paused += gap;
    gap = next_pause(budget, gap);
  }
  return budget.pauses;
}

// Looks at ready() within `budget`; true as soon as it returns true, false
// when the budget is spent (zero looks for an empty budget). Between two of
// the first budget.pauses looks it calls pause() as many times as the
// budget says (tests count them; the channel's pause is cpu_relax), and
// between two later ones yields the thread.
template <class Ready, class Pause>
bool watch(const SpinBudget& budget, Ready&& ready, Pause&& pause) noexcept {
  int pauses = budget.first_pause;
  for (int look = 0; look < budget.looks(); ++look) {
    if (ready()) return true;
    if (look < budget.pauses) {
      for (int i = 0; i < pauses; ++i) pause();
      pauses = next_pause(budget, pauses);
    } else {
      yield_thread();
    }
  }
  return false;
}

template <class Ready>
bool watch(const SpinBudget& budget, Ready&& ready) noexcept {
  return watch(budget, ready, [] { cpu_relax(); });
}

// What a sleep step reports: look again (woken, or nothing to sleep on),
// watch again with the second budget (woken to watch: a nudge), or give up
// (a deadline passed).
enum class Slept { kLookAgain, kWatchAgain, kGiveUp };

// The spin-then-sleep loop: watches with `first`; then looks once more and,
// while ready() is false, calls sleep(), which blocks until the word may
// have changed. True once ready() returns true; false if sleep() gives up.
// ready() must be cheap and may be called after a spurious wake-up.
template <class Ready, class Sleep>
bool spin_then_sleep(const SpinBudget& first, const SpinBudget& again, Ready&& ready,
                     Sleep&& sleep) noexcept {
  for (const SpinBudget* budget = &first;; budget = &again) {
    if (watch(*budget, ready)) return true;
    for (;;) {
      if (ready()) return true;
      const Slept slept = sleep();
      if (slept == Slept::kGiveUp) return false;
      if (slept == Slept::kWatchAgain) break;
    }
  }
}

template <class Ready, class Sleep>
bool spin_then_sleep(const SpinBudget& budget, Ready&& ready, Sleep&& sleep) noexcept {
  return spin_then_sleep(budget, budget, ready, sleep);
}

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_SPIN_WAIT_H_
