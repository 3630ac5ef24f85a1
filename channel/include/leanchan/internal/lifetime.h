// SPDX-License-Identifier: MIT
// leanchan/internal/lifetime.h: the reference counts of a channel.
//
//   senders  Senders + live Permits and PermitBatches: while it is above 0
//            sends can still come; it never rises again from 0 (a
//            WeakSender's upgrade fails then).
//   handles  every handle holding a pointer to the control block (Senders,
//            Permits, batches, WeakSenders, the Receiver): the one that
//            drops it to 0 destroys what is left and frees the block.
#ifndef LEANCHAN_INTERNAL_LIFETIME_H_
#define LEANCHAN_INTERNAL_LIFETIME_H_

#include <cstdint>

#include "leanchan/internal/atomic.h"

namespace leanchan::internal {

class Lifetime {
 public:
  void add_sender() noexcept {
    // relaxed: the caller already holds a sender, so the count cannot reach
    // 0 meanwhile (the same argument as std::shared_ptr's copy).
    senders_.fetch_add(1, std::memory_order_relaxed);
  }
  // WeakSender::upgrade: fails once the count has reached 0.
  bool try_add_sender() noexcept {
    std::uint32_t count = senders_.load(std::memory_order_relaxed);
    while (count != 0) {
      // relaxed: success only proves a sender existed; nothing is read
      // through it.
      if (senders_.compare_exchange_weak(count, count + 1, std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }
  // True for the last sender (the caller then tells the receiver).
  // seq_cst: releases this sender's sends to the receiver's end check and
  // orders before the caller's load of the receiver's signal
  // (ReceiverSignal::notify).
  bool remove_sender() noexcept { return senders_.fetch_sub(1, std::memory_order_seq_cst) == 1; }
  // seq_cst: part of the receiver's end check (Ending::is_finished).
  std::uint32_t senders() const noexcept { return senders_.load(std::memory_order_seq_cst); }

  void add_handle() noexcept {
    handles_.fetch_add(1, std::memory_order_relaxed);  // relaxed: as add_sender
  }
  // True for the last handle: it must destroy. acq_rel: every handle's last
  // use happens before that destruction.
  bool remove_handle() noexcept { return handles_.fetch_sub(1, std::memory_order_acq_rel) == 1; }

  // Snapshots, for Sender::strong_count / weak_count.
  std::uint32_t sender_snapshot() const noexcept {
    return senders_.load(std::memory_order_relaxed);
  }
  std::uint32_t handle_snapshot() const noexcept {
    return handles_.load(std::memory_order_relaxed);
  }

 private:
  Atomic<std::uint32_t> senders_{1};
  Atomic<std::uint32_t> handles_{2};  // the first sender and the receiver
};

static_assert(sizeof(Lifetime) == 8, "leanchan: the lifetime counts are two words");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_LIFETIME_H_
