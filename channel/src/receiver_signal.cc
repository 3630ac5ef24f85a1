// SPDX-License-Identifier: MIT
// The receiver's signal (leanchan/internal/receiver_signal.h; docs/design.md
// "Receiving" and "Readiness"): waking a sleeping receiver and its
// notifier's state machine.
#include "leanchan/internal/receiver_signal.h"

#include <climits>

#include "leanchan/internal/wait_policy.h"

namespace leanchan::internal {
namespace {

// Waits until a firing node's callback has returned: briefly by watching the
// word (kWaitPolicy.callback: callbacks are short, and the firer runs on another
// core), then by sleeping on it.
void await_callback(Atomic<std::uint32_t>& state, std::uint32_t firing,
                    std::uint32_t awaited) noexcept {
  std::uint32_t value = 0;
  const auto ready = [&] {
    value = state.load(std::memory_order_acquire);
    return value != firing && value != awaited;
  };
  const auto sleep = [&] {
    if (value == firing &&
        !state.compare_exchange_weak(value, awaited, std::memory_order_acquire)) {
      return Slept::kLookAgain;
    }
    futex_wait(state, awaited, nullptr);
    return Slept::kLookAgain;
  };
  (void)spin_then_sleep(kWaitPolicy.callback, ready, sleep);
}

}  // namespace

void ReceiverSignal::tell(std::uint32_t event, const WaiterQueue& waiters) noexcept {
  // seq_cst CAS: as notify's load, for the value it replaces.
  while (event == kSleeping || event == kArmed || event == kFiringRearm) {
    std::uint32_t next = kIdle;
    if (event == kArmed) next = kFiring;
    if (event == kFiringRearm) next = kFiringRearmEvent;  // the firer fires again
    if (event_.compare_exchange_weak(event, next, std::memory_order_seq_cst)) {
      if (event == kSleeping) {
        futex_wake(event_, 1);
      } else if (event == kArmed) {
        fire(waiters);
      }
      return;
    }
  }
}

void ReceiverSignal::announce_wait() noexcept {
  disarm();
  event_.store(kSleeping, std::memory_order_seq_cst);  // seq_cst: see notify
}

bool ReceiverSignal::sleep(const Deadline* deadline) noexcept {
  const bool woken = futex_wait(event_, 1, deadline);
  // relaxed: only the receiver stores 1; a racing sender's exchange also
  // leaves 0, and the next wait announces afresh.
  event_.store(0, std::memory_order_relaxed);
  return woken;
}

void ReceiverSignal::arm() noexcept {
  // Arm (idle -> armed), or, while a firing from the previous arming is
  // still running, ask it to re-arm when it ends (firing -> re-arm) instead
  // of waiting for it: the firer then arms (or fires again if a sender came
  // meanwhile; see notify and fire).
  // seq_cst: the arming RMW and the caller's re-check loads pair with a
  // sender's publishing RMW and its load in notify (Dekker).
  std::uint32_t event = event_.load(std::memory_order_acquire);
  for (;;) {
    std::uint32_t next = kArmed;
    if (event == kFiring) {
      next = kFiringRearm;
    } else if (event != kIdle && event != kSleeping) {
      break;  // already armed or re-arming
    }
    if (event_.compare_exchange_weak(event, next, std::memory_order_seq_cst)) return;
  }
}

void ReceiverSignal::cancel_arming() noexcept {
  // The receiver will look again by itself: drop a pending arming. A firing
  // in progress (or one that already ran) may still call the callback once:
  // a spurious call, which the contract allows.
  std::uint32_t event = event_.load(std::memory_order_acquire);
  for (;;) {
    std::uint32_t next;
    if (event == kArmed) {
      next = kIdle;
    } else if (event == kFiringRearm || event == kFiringRearmEvent) {
      next = kFiring;
    } else {
      return;
    }
    if (event_.compare_exchange_weak(event, next, std::memory_order_acq_rel)) return;
  }
}

bool ReceiverSignal::disarm() noexcept {
  std::uint32_t event = event_.load(std::memory_order_acquire);
  for (;;) {
    if (event == kArmed) {
      if (event_.compare_exchange_weak(event, kIdle, std::memory_order_acq_rel)) return true;
      continue;
    }
    if (event == kFiringRearm || event == kFiringRearmEvent) {
      // Cancel the re-arm, then wait for the firing like below.
      if (!event_.compare_exchange_weak(event, kFiring, std::memory_order_acq_rel)) continue;
      event = kFiring;
    }
    if (event == kFiring || event == kFiringAwaited) {
      // acquire: the callback's effects happen before the return below.
      await_callback(event_, kFiring, kFiringAwaited);
      return false;
    }
    return false;  // idle (or sleeping: the receiver's own state)
  }
}

void ReceiverSignal::fire(const WaiterQueue& waiters) noexcept {
  // event_ is firing (or a firing variant): the receiver's disarm waits
  // for this call to end, so the node stays alive and attached; it is first
  // in the waiter queue (nothing is ever linked before it), so it is read
  // without the lock. The node was attached before the receiver armed, and
  // this thread's CAS on event_ read that arming.
  WaitNode* node = waiters.first();
  for (;;) {
    if (node != nullptr && node->kind == WaitNode::Kind::kReceive) node->callback(node->context);
    // Leave the firing state. acq_rel: the callback happens-before a disarm
    // that sees the result; the receiver's re-arm request is read here.
    std::uint32_t event = event_.load(std::memory_order_acquire);
    for (;;) {
      std::uint32_t next = kIdle;
      if (event == kFiringRearm) next = kArmed;        // armed again, as asked
      if (event == kFiringRearmEvent) next = kFiring;  // a sender came meanwhile: fire again
      if (event_.compare_exchange_weak(event, next, std::memory_order_acq_rel)) break;
    }
    if (event == kFiringAwaited) futex_wake(event_, INT_MAX);
    if (event != kFiringRearmEvent) return;
  }
}

}  // namespace leanchan::internal
