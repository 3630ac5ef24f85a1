// Readiness notifications (docs/design.md, "Readiness"): a receive notifier
// armed through rx_event_, and send notifiers kept in the waiter list.
#include <climits>

#include "leanchan/internal/channel_state.h"

namespace leanchan::internal {
namespace {

void link_back(std::atomic<WaitNode*>& head, WaitNode* node) noexcept {
  WaitNode* last = head.load(std::memory_order_relaxed);
  if (last == nullptr) {
    node->prev = node->next = nullptr;
    head.store(node, std::memory_order_relaxed);
    return;
  }
  while (last->next != nullptr) last = last->next;
  last->next = node;
  node->prev = last;
  node->next = nullptr;
}

void unlink(std::atomic<WaitNode*>& head, WaitNode* node) noexcept {
  if (node->prev != nullptr) {
    node->prev->next = node->next;
  } else {
    head.store(node->next, std::memory_order_relaxed);
  }
  if (node->next != nullptr) node->next->prev = node->prev;
  node->next = node->prev = nullptr;
}

constexpr int kCallbackSpins = 256;  // a callback is short: watch before sleeping

// Waits until a firing node's callback has returned: briefly by watching the
// word (callbacks are short, and the firer runs on another core), then by
// sleeping on it.
void await_callback(std::atomic<std::uint32_t>& state, std::uint32_t firing,
                    std::uint32_t awaited) noexcept {
  std::uint32_t value = state.load(std::memory_order_acquire);
  for (int spin = 0; spin < kCallbackSpins && (value == firing || value == awaited); ++spin) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
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
  // The receive node stays first, so firing finds it without a search.
  WaitNode* first = waiters_.load(std::memory_order_relaxed);
  node->prev = nullptr;
  node->next = first;
  if (first != nullptr) first->prev = node;
  waiters_.store(node, std::memory_order_relaxed);
  unlock_list();
}

void ChannelState::detach_receive_node() noexcept {
  disarm_receive();
  lock_list();
  WaitNode* first = waiters_.load(std::memory_order_relaxed);
  if (first != nullptr && first->kind == WaitNode::Kind::kReceive) unlink(waiters_, first);
  unlock_list();
}

bool ChannelState::arm_receive(std::uint64_t index) noexcept {
  // Arm (idle -> armed), or, while a firing from the previous arming is
  // still running, ask it to re-arm when it ends (firing -> re-arm) instead
  // of waiting for it: the firer then arms (or fires again if a sender came
  // meanwhile; see notify_receiver and fire_receive_node).
  // seq_cst: the arming RMW and the re-check loads below pair with a
  // sender's publishing RMW and its load in notify_receiver (Dekker).
  std::uint32_t event = rx_event_.load(std::memory_order_acquire);
  for (;;) {
    std::uint32_t next = kRxArmed;
    if (event == kRxFiring) {
      next = kRxFiringRearm;
    } else if (event != kRxIdle && event != kRxSleeping) {
      break;  // already armed or re-arming
    }
    if (rx_event_.compare_exchange_weak(event, next, std::memory_order_seq_cst)) break;
  }
  if (tail_position_.load(std::memory_order_seq_cst) != index || is_finished()) {
    cancel_arming();
    return true;
  }
  return false;
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
  // for this call to end, so the node stays alive and linked; it is first in
  // the list, and send nodes are only ever appended, so the head is read
  // without the lock. acquire is more than enough: the node was linked
  // before the receiver armed, and this thread's CAS on rx_event_ read that
  // arming.
  WaitNode* node = waiters_.load(std::memory_order_acquire);
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

bool ChannelState::arm_send(WaitNode* node) noexcept {
  // As in arm_receive: a firing of this node's previous arming ends by
  // resetting its state, which must not erase this one.
  await_callback(node->state, WaitNode::kFiring, WaitNode::kFiringAwaited);
  node->kind = WaitNode::Kind::kSend;
  lock_list();
  link_back(waiters_, node);
  node->state.store(WaitNode::kLinked, std::memory_order_relaxed);
  unlock_list();
  // seq_cst: Dekker with release_permit's decrement and waiter-count load.
  tx_waiters_.fetch_add(ChannelState::kArmedUnit, std::memory_order_seq_cst);
  const std::uint32_t word = permit_word_.load(std::memory_order_seq_cst);
  if ((word & kClosedBit) != 0 || word / kUsedUnit < capacity_) {
    cancel_send(node);  // if it fired meanwhile, its callback has run: fine
    return true;
  }
  return false;
}

bool ChannelState::cancel_send(WaitNode* node) noexcept {
  lock_list();
  const bool linked = node->state.load(std::memory_order_relaxed) == WaitNode::kLinked;
  if (linked) {
    unlink(waiters_, node);
    node->state.store(WaitNode::kIdle, std::memory_order_relaxed);
    tx_waiters_.fetch_sub(ChannelState::kArmedUnit,
                          std::memory_order_relaxed);  // relaxed: a hint count
  }
  unlock_list();
  if (!linked) await_callback(node->state, WaitNode::kFiring, WaitNode::kFiringAwaited);
  return linked;
}

void ChannelState::fire_send_nodes(bool all) noexcept {
  do {
    lock_list();
    WaitNode* node = waiters_.load(std::memory_order_relaxed);
    while (node != nullptr && node->kind != WaitNode::Kind::kSend) node = node->next;
    if (node != nullptr) {
      unlink(waiters_, node);
      node->state.store(WaitNode::kFiring, std::memory_order_relaxed);
      tx_waiters_.fetch_sub(ChannelState::kArmedUnit,
                            std::memory_order_relaxed);  // relaxed: a hint count
    }
    unlock_list();
    if (node == nullptr) return;
    node->callback(node->context);
    // release: the callback happens-before a cancel that sees idle.
    if (node->state.exchange(WaitNode::kIdle, std::memory_order_acq_rel) ==
        WaitNode::kFiringAwaited) {
      futex_wake(node->state, INT_MAX);
    }
  } while (all);
}

}  // namespace leanchan::internal
