// The receive notifier (docs/design.md, "Readiness"): armed through
// rx_event_, kept first in the waiter queue. Send notifiers are waiters of
// the bound (bound.cc).
#include <climits>

#include "leanchan/internal/atomic.h"
#include "leanchan/internal/channel_state.h"

namespace leanchan::internal {
namespace {

constexpr int kCallbackSpins = spin_budget(256);  // a callback is short: watch before sleeping

// Waits until a firing node's callback has returned: briefly by watching the
// word (callbacks are short, and the firer runs on another core), then by
// sleeping on it.
void await_callback(Atomic<std::uint32_t>& state, std::uint32_t firing,
                    std::uint32_t awaited) noexcept {
  std::uint32_t value = state.load(std::memory_order_acquire);
  for (int spin = 0; spin < kCallbackSpins && (value == firing || value == awaited); ++spin) {
    cpu_relax();
    value = state.load(std::memory_order_acquire);
  }
  while (value == firing || value == awaited) {
    if (value == firing &&
        !state.compare_exchange_weak(value, awaited, std::memory_order_acquire)) {
      continue;
    }
    futex_wait(state, awaited, nullptr);
    value = state.load(std::memory_order_acquire);
  }
}

}  // namespace

void ChannelState::attach_receive_node(WaitNode* node) noexcept {
  detach_receive_node();
  node->kind = WaitNode::Kind::kReceive;
  lock_list();
  waiters_.attach_receive(node);
  unlock_list();
}

void ChannelState::detach_receive_node() noexcept {
  disarm_receive();
  lock_list();
  waiters_.detach_receive();
  unlock_list();
}

void ChannelState::arm_receive() noexcept {
  // Arm (idle -> armed), or, while a firing from the previous arming is
  // still running, ask it to re-arm when it ends (firing -> re-arm) instead
  // of waiting for it: the firer then arms (or fires again if a sender came
  // meanwhile; see notify_receiver and fire_receive_node).
  // seq_cst: the arming RMW and the caller's re-check loads pair with a
  // sender's publishing RMW and its load in notify_receiver (Dekker).
  std::uint32_t event = rx_event_.load(std::memory_order_acquire);
  for (;;) {
    std::uint32_t next = kRxArmed;
    if (event == kRxFiring) {
      next = kRxFiringRearm;
    } else if (event != kRxIdle && event != kRxSleeping) {
      break;  // already armed or re-arming
    }
    if (rx_event_.compare_exchange_weak(event, next, std::memory_order_seq_cst)) return;
  }
}

void ChannelState::cancel_arming() noexcept {
  // The receiver will look again by itself: drop a pending arming. A firing
  // in progress (or one that already ran) may still call the callback once:
  // a spurious call, which the contract allows.
  std::uint32_t event = rx_event_.load(std::memory_order_acquire);
  for (;;) {
    std::uint32_t next;
    if (event == kRxArmed) {
      next = kRxIdle;
    } else if (event == kRxFiringRearm || event == kRxFiringRearmEvent) {
      next = kRxFiring;
    } else {
      return;
    }
    if (rx_event_.compare_exchange_weak(event, next, std::memory_order_acq_rel)) return;
  }
}

bool ChannelState::disarm_receive() noexcept {
  std::uint32_t event = rx_event_.load(std::memory_order_acquire);
  for (;;) {
    if (event == kRxArmed) {
      if (rx_event_.compare_exchange_weak(event, kRxIdle, std::memory_order_acq_rel)) return true;
      continue;
    }
    if (event == kRxFiringRearm || event == kRxFiringRearmEvent) {
      // Cancel the re-arm, then wait for the firing like below.
      if (!rx_event_.compare_exchange_weak(event, kRxFiring, std::memory_order_acq_rel)) continue;
      event = kRxFiring;
    }
    if (event == kRxFiring || event == kRxFiringAwaited) {
      // acquire: the callback's effects happen before the return below.
      await_callback(rx_event_, kRxFiring, kRxFiringAwaited);
      return false;
    }
    return false;  // idle (or sleeping: the receiver's own state)
  }
}

void ChannelState::fire_receive_node() noexcept {
  // rx_event_ is firing (or a firing variant): the receiver's disarm waits
  // for this call to end, so the node stays alive and attached; it is first
  // in the waiter queue (nothing is ever linked before it), so it is read
  // without the lock. The node was attached before the receiver armed, and
  // this thread's CAS on rx_event_ read that arming.
  WaitNode* node = waiters_.first();
  for (;;) {
    if (node != nullptr && node->kind == WaitNode::Kind::kReceive) node->callback(node->context);
    // Leave the firing state. acq_rel: the callback happens-before a disarm
    // that sees the result; the receiver's re-arm request is read here.
    std::uint32_t event = rx_event_.load(std::memory_order_acquire);
    for (;;) {
      std::uint32_t next = kRxIdle;
      if (event == kRxFiringRearm) next = kRxArmed;        // armed again, as asked
      if (event == kRxFiringRearmEvent) next = kRxFiring;  // a sender came meanwhile: fire again
      if (rx_event_.compare_exchange_weak(event, next, std::memory_order_acq_rel)) break;
    }
    if (event == kRxFiringAwaited) futex_wake(rx_event_, INT_MAX);
    if (event != kRxFiringRearmEvent) return;
  }
}

}  // namespace leanchan::internal
