// SPDX-License-Identifier: MIT
// leanchan/internal/receiver_signal.h: how senders tell the receiver that
// something happened (a message published, the last sender gone, a permit
// dropped): by waking it if it sleeps, or by firing its notifier if one is
// armed (docs/design.md "Receiving" and "Readiness").
//
// One 32-bit word, `event_` (futex word of the sleeping receiver):
//   0 idle            nobody to tell
//   1 sleeping        the receiver sleeps, or is about to (a sender that
//                     sees 1 swaps in 0 and wakes it)
//   2 armed           the receive notifier is armed
//   3 firing          a sender took the arming and runs the callback
//   4 firing, awaited the receiver waits (disarm) for the callback to end
//   5 firing, re-arm  the receiver asked to be armed again once it ends
//   6 re-arm + event  ... and a sender came meanwhile: fire again
// Writers: the receiver (1, arming, disarming), senders (notify: 1 -> 0,
// 2 -> 3, 5 -> 6), the firer (3/4/5/6 -> 0/2/3).
//
// Invariant: while the word is a firing state the receive notifier is
// attached and first in the waiter queue (detaching disarms first, and
// disarming waits for the firing to end).
#ifndef LEANCHAN_INTERNAL_RECEIVER_SIGNAL_H_
#define LEANCHAN_INTERNAL_RECEIVER_SIGNAL_H_

#include <cstdint>

#include "leanchan/export.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/futex.h"
#include "leanchan/internal/waiter_queue.h"

namespace leanchan::internal {

class ReceiverSignal {
 public:
  // A sender, after its publishing RMW: wakes the sleeping
  // receiver or fires the armed notifier (found first in `waiters`).
  // Inline, since every send calls it and nearly always finds nobody to
  // tell. seq_cst: the sender's publishing RMW (ready bit, sender count or
  // permit word) precedes this load in the single total order, and the
  // receiver's announcement (or arming) precedes its re-check: one of the
  // two sees the other.
  void notify(const WaiterQueue& waiters) noexcept {
    const std::uint32_t event = event_.load(std::memory_order_seq_cst);
    if (event == kSleeping || event == kArmed || event == kFiringRearm) tell(event, waiters);
  }

  // Receiver side.
  // Announce a sleep (disarming the notifier first); the caller then
  // re-checks and sleeps until notified or `deadline` (false: timed out).
  LEANCHAN_API void announce_wait() noexcept;
  LEANCHAN_API bool sleep(const Deadline* deadline) noexcept;
  // Arm; the caller then re-checks and cancels if it finds something.
  // Disarm: true if an arming was cancelled before it fired; when it
  // returns, no callback runs.
  LEANCHAN_API void arm() noexcept;
  LEANCHAN_API void cancel_arming() noexcept;
  LEANCHAN_API bool disarm() noexcept;
  // No notifier armed or firing (relaxed: only the receiver leaves idle).
  bool idle() const noexcept { return event_.load(std::memory_order_relaxed) == kIdle; }

 private:
  static constexpr std::uint32_t kIdle = 0;
  static constexpr std::uint32_t kSleeping = 1;
  static constexpr std::uint32_t kArmed = 2;
  static constexpr std::uint32_t kFiring = 3;
  static constexpr std::uint32_t kFiringAwaited = 4;
  static constexpr std::uint32_t kFiringRearm = 5;
  static constexpr std::uint32_t kFiringRearmEvent = 6;

  // notify's work once its load found someone to tell: `event` is the
  // word as it read it.
  LEANCHAN_API void tell(std::uint32_t event, const WaiterQueue& waiters) noexcept;
  void fire(const WaiterQueue& waiters) noexcept;

  Atomic<std::uint32_t> event_{kIdle};
};

static_assert(sizeof(ReceiverSignal) == 4, "leanchan: the receiver's signal is one word");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_RECEIVER_SIGNAL_H_
