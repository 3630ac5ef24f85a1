// The bound, the waits and the reference counts of a channel (docs/design.md
// steps 1, 6, 11 and "Lifetime"). The block list lives in block_list.cc.
#include "leanchan/internal/channel_state.h"

#include <climits>
#include <thread>

namespace leanchan::internal {
namespace {

constexpr int kPermitSpins = 64;   // bounded: pause-spins, then
constexpr int kPermitYields = 16;  // yields, then the sender sleeps
constexpr int kWatchLooks = 16;    // receiver: looks with doubling pauses, then
constexpr int kWatchYields = 16;   // yields, then it sleeps
constexpr int kWatchMaxPauses = 64;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

PermitOutcome ChannelState::try_acquire_permit() noexcept {
  // relaxed: a permit publishes nothing. Whatever the new holder later touches
  // (a block, a slot) it reaches through the list lock or the seqlock, which
  // carry their own happens-before from the receiver (docs/design.md, "Why
  // the orders are enough").
  std::uint32_t word = permit_word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((word & kClosedBit) != 0) return PermitOutcome::kClosed;
    if ((word / kUsedUnit) >= capacity_) return PermitOutcome::kFull;
    if (permit_word_.compare_exchange_weak(word, word + kUsedUnit, std::memory_order_relaxed,
                                           std::memory_order_relaxed)) {
      return PermitOutcome::kAcquired;
    }
  }
}

PermitOutcome ChannelState::acquire_permit(const Deadline* deadline) noexcept {
  for (;;) {
    PermitOutcome outcome = try_acquire_permit();
    // A full channel usually frees a slot within a receive or two: watch the
    // word briefly (bounded) before paying a sleep and a wake. The later
    // rounds yield the processor instead of spinning, so that on a machine
    // with more threads than cores the receiver gets to run.
    for (int spin = 0; outcome == PermitOutcome::kFull && spin < kPermitSpins + kPermitYields;
         ++spin) {
      if (spin < kPermitSpins) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
      if (permit_word_.load(std::memory_order_relaxed) / kUsedUnit < capacity_) {
        outcome = try_acquire_permit();
      }
    }
    if (outcome != PermitOutcome::kFull) return outcome;
    // Step 2. seq_cst on the announcement and the re-read pairs with
    // release_permit's seq_cst decrement and waiter load (Dekker): either the
    // receiver sees this waiter and wakes it, or this re-read sees the slot.
    tx_waiters_.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t word = permit_word_.load(std::memory_order_seq_cst);
    bool timed_out = false;
    if ((word & kClosedBit) == 0 && (word / kUsedUnit) >= capacity_) {
      timed_out = !futex_wait(permit_word_, word, deadline);
    }
    // relaxed: the count only decides whether a wake is worth a syscall.
    tx_waiters_.fetch_sub(1, std::memory_order_relaxed);
    if (timed_out) {
      // One last try, so a slot freed as the deadline passed (and the wake
      // that came with it) is taken rather than lost.
      outcome = try_acquire_permit();
      return outcome == PermitOutcome::kFull ? PermitOutcome::kTimedOut : outcome;
    }
  }
}

void ChannelState::release_permit() noexcept {
  // seq_cst: see acquire_permit and arm_send (Dekker with the waiter count).
  permit_word_.fetch_sub(kUsedUnit, std::memory_order_seq_cst);
  const std::uint32_t waiters = tx_waiters_.load(std::memory_order_seq_cst);
  if ((waiters & kSleepingMask) != 0) futex_wake(permit_word_, 1);
  if (waiters >= kArmedUnit) fire_send_nodes(false);
}

std::uint32_t ChannelState::free_slots() const noexcept {
  const std::uint32_t used = permit_word_.load(std::memory_order_relaxed) / kUsedUnit;
  return used >= capacity_ ? 0 : capacity_ - used;
}

void ChannelState::close() noexcept {
  // seq_cst, with the waiter-count load after it: Dekker with acquire_permit
  // (step 2). A sender that announced itself before this load is woken; one
  // that announces later re-reads the word and sees the closed bit.
  permit_word_.fetch_or(kClosedBit, std::memory_order_seq_cst);
  const std::uint32_t waiters = tx_waiters_.load(std::memory_order_seq_cst);
  if ((waiters & kSleepingMask) != 0) futex_wake(permit_word_, INT_MAX);
  if (waiters >= kArmedUnit) fire_send_nodes(true);
}

bool ChannelState::is_finished() const noexcept {
  // Senders first: once it reads 0 no reservation can ever be made again, so
  // a zero use count read afterwards is final. (Read the other way round, a
  // sender could reserve, send and leave between the two loads.)
  // seq_cst: these loads are the receiver's re-check after announcing a wait
  // (step 11) and pair with remove_sender's and release_permit's RMWs.
  if (senders_.load(std::memory_order_seq_cst) == 0) {
    return permit_word_.load(std::memory_order_seq_cst) / kUsedUnit == 0;
  }
  const std::uint32_t word = permit_word_.load(std::memory_order_seq_cst);
  return (word & kClosedBit) != 0 && word / kUsedUnit == 0;
}

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
      std::this_thread::yield();
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
