// The receiver's wait and the reference counts of a channel (docs/design.md
// steps 6, 11 and "Lifetime"). The block list lives in block_list.cc, the
// bound and its waiter queue in bound.cc, readiness in readiness.cc.
#include "leanchan/internal/channel_state.h"

#include <climits>
#include <thread>

#include "leanchan/internal/atomic.h"

namespace leanchan::internal {
namespace {

constexpr int kWatchLooks = spin_budget(16);   // receiver: looks with doubling pauses, then
constexpr int kWatchYields = spin_budget(16);  // yields, then it sleeps
constexpr int kWatchMaxPauses = 64;

}  // namespace

void ChannelState::notify_receiver() noexcept {
  // seq_cst: the sender's publishing RMW (ready bit, sender count or permit
  // word) precedes this load in the single total order, and the receiver's
  // announcement (or arming) precedes its re-check: one of the two sees the
  // other.
  std::uint32_t event = rx_event_.load(std::memory_order_seq_cst);
  while (event == kRxSleeping || event == kRxArmed || event == kRxFiringRearm) {
    std::uint32_t next = kRxIdle;
    if (event == kRxArmed) next = kRxFiring;
    if (event == kRxFiringRearm) next = kRxFiringRearmEvent;  // the firer fires again
    if (rx_event_.compare_exchange_weak(event, next, std::memory_order_seq_cst)) {
      if (event == kRxSleeping) {
        futex_wake(rx_event_, 1);
      } else if (event == kRxArmed) {
        fire_receive_node();
      }
      return;
    }
  }
}

bool ChannelState::watch_briefly(bool (*ready)(const void* context),
                                 const void* context) const noexcept {
  // The pauses between looks double (1, 2, 4, ... 64), then the thread
  // yields: watching shared lines in a tight loop would slow the very
  // sender being waited for.
  int pauses = 1;
  for (int look = 0; look < kWatchLooks + kWatchYields; ++look) {
    if (ready(context)) return true;
    if (look < kWatchLooks) {
      for (int i = 0; i < pauses; ++i) cpu_relax();
      pauses = pauses < kWatchMaxPauses ? pauses * 2 : kWatchMaxPauses;
    } else {
      yield_thread();
    }
  }
  return false;
}

void ChannelState::announce_receiver_wait() noexcept {
  disarm_receive();
  rx_event_.store(kRxSleeping, std::memory_order_seq_cst);  // seq_cst: see notify_receiver
}

bool ChannelState::receiver_sleep(const Deadline* deadline) noexcept {
  const bool woken = futex_wait(rx_event_, 1, deadline);
  // relaxed: only the receiver stores 1; a racing sender's exchange also
  // leaves 0, and the next wait announces afresh.
  rx_event_.store(0, std::memory_order_relaxed);
  return woken;
}

void ChannelState::add_sender() noexcept {
  // relaxed: the caller already holds a sender, so the count cannot reach 0
  // meanwhile (the same argument as std::shared_ptr's copy).
  senders_.fetch_add(1, std::memory_order_relaxed);
}

bool ChannelState::try_add_sender() noexcept {
  std::uint32_t count = senders_.load(std::memory_order_relaxed);
  while (count != 0) {
    // relaxed: success only proves a sender existed; nothing is read through it.
    if (senders_.compare_exchange_weak(count, count + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

void ChannelState::remove_sender() noexcept {
  // seq_cst: releases this sender's sends to the receiver's is_finished()
  // and orders before notify_receiver's load (step 11).
  if (senders_.fetch_sub(1, std::memory_order_seq_cst) == 1) notify_receiver();
}

void ChannelState::add_handle() noexcept {
  handles_.fetch_add(1, std::memory_order_relaxed);  // relaxed: as add_sender
}

bool ChannelState::remove_handle() noexcept {
  // acq_rel: every handle's last use happens-before the destruction done by
  // whoever drops the count to zero.
  return handles_.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

}  // namespace leanchan::internal
