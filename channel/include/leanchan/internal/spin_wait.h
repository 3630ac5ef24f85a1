// SPDX-License-Identifier: MIT
// leanchan/internal/spin_wait.h: the one way the channel waits. A waiter
// first watches the word it waits on for a bounded budget (looks separated
// by processor pauses, then by yields), and only then sleeps on it (a futex
// wait, or whatever the caller's sleep step does). Every wait in the channel
// (and the baseline's) is an instance of spin_then_sleep or of its watching
// half, watch, with a budget of the channel's WaitPolicy (wait_policy.h).
#ifndef LEANCHAN_INTERNAL_SPIN_WAIT_H_
#define LEANCHAN_INTERNAL_SPIN_WAIT_H_

#include <cstddef>
#include <cstdint>

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
