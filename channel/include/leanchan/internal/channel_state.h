// leanchan/internal/channel_state.h: the 64-byte control block every handle
// of one channel points to, and the non-templated half of the algorithm.
//
// Everything a channel owns hangs off this object: the permits that bound it,
// the claim counter, the block list, the wait words, the waiter queue and the
// reference counts. It is the only allocation made at creation (at most 64
// bytes: docs/memory.md). The algorithm is written down once, in
// docs/design.md; "step N" below refers to its numbered steps.
//
// Field ownership (who writes / who reads):
//   tail_position_  senders fetch_add (claim, step 3) / receiver, len()
//   tail_block_     list-lock holder / senders' seqlock read (step 4)
//   list_word_      list-lock holder / senders' seqlock read
//                   bits: [31..2] tag of tail_block_ | [1] contended | [0] locked
//   permit_word_    senders (acquire), receiver (release, close), waiters
//                   bits: [31..3] slots in use (queued + reserved + granted
//                   to waiters) | [2] closed watchers wait | [1] senders
//                   wait in the queue | [0] closed. Bits 1 and 2 change only
//                   under the list lock.
//   signal_         the receiver's wait word and notifier state
//                   (receiver_signal.h)
//   rx_block_word_  the receiver, under the lock / list-lock holders
//                   bits: [29..0] tag of the block the receiver reads, as of
//                   its last finished block | [30] it may keep a spare |
//                   [31] the receiver is gone
//   head_           list-lock holders (the receiver retiring blocks; the
//                   sender that opens the very first block) / the receiver,
//                   also without the lock
//   waiters_        list-lock holders: the waiter queue (waiter_queue.h)
//   lifetime_       the sender and handle counts (lifetime.h)
#ifndef LEANCHAN_INTERNAL_CHANNEL_STATE_H_
#define LEANCHAN_INTERNAL_CHANNEL_STATE_H_

#include <cstddef>
#include <cstdint>

#include "leanchan/internal/atomic.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/futex.h"
#include "leanchan/internal/lifetime.h"
#include "leanchan/internal/receiver_signal.h"
#include "leanchan/internal/wait_node.h"
#include "leanchan/internal/waiter_queue.h"

namespace leanchan::internal {

// kSent: the waiting sender's value was already moved into the channel by
// the thread that handed it the slot (send only; see ThreadWaitNode).
enum class PermitOutcome : std::uint8_t { kAcquired, kFull, kClosed, kTimedOut, kSent };

class ChannelState {
 public:
  // permit_word_ bits (see the file comment).
  static constexpr std::uint32_t kClosedBit = 1;
  static constexpr std::uint32_t kSendersWaitBit = 2;
  static constexpr std::uint32_t kClosedWatchBit = 4;
  static constexpr std::uint32_t kUsedUnit = 8;
  static constexpr std::uint32_t used_of(std::uint32_t word) noexcept { return word / kUsedUnit; }

  explicit ChannelState(std::uint32_t capacity) noexcept : capacity_(capacity) {}
  ChannelState(const ChannelState&) = delete;
  ChannelState& operator=(const ChannelState&) = delete;

  std::uint32_t capacity() const noexcept { return capacity_; }

  // ---- The bound and its waiters (docs/design.md "The waiter queue") ------
  // Takes `count` slots (1..capacity) at once without waiting. Fails with
  // kFull whenever a sender waits in the queue: freed slots are theirs.
  PermitOutcome try_acquire_permits(std::uint32_t count) noexcept;
  // Takes `count` slots, waiting in the FIFO queue while they are not
  // there, until `deadline` (null: forever).
  PermitOutcome acquire_permits(std::uint32_t count, const Deadline* deadline) noexcept {
    return acquire_permits(count, deadline, nullptr, nullptr);
  }
  // As acquire_permits(1, deadline), for a send of `*value`: if the sender
  // has to wait, the thread that hands it a slot also moves `*value` into
  // the channel with `push` (then kSent), so the receiver need not wait for
  // the sender to wake up before its message is there.
  PermitOutcome acquire_permit_for(void* value, ThreadWaitNode::PushFunction push,
                                   const Deadline* deadline) noexcept {
    return acquire_permits(1, deadline, value, push);
  }
  // Gives `count` slots back (messages taken, permits dropped unused, a
  // cancelled waiter's grant): to the waiting senders first, oldest first,
  // then to the free count. Takes no lock unless a sender waits.
  void release_permits(std::uint32_t count) noexcept;
  // Free slots right now (a snapshot).
  std::uint32_t free_slots() const noexcept;
  bool is_closed() const noexcept {
    // acquire: pairs with close()'s fetch_or; only a flag, no data rides on it.
    return (permit_word_.load(std::memory_order_acquire) & kClosedBit) != 0;
  }
  // Refuses every later reservation and wakes every waiting sender and
  // closed watcher (their partial grants go back to the free count).
  void close() noexcept;
  // True when nothing is queued and nothing can arrive: closed or senderless,
  // with no queued message and no outstanding permit.
  bool is_finished() const noexcept;

  // Send notifiers (kSend nodes). arm_send: true, without queueing, if the
  // node holds a grant, a slot is free now, or the channel is closed; else
  // queues it (one-shot). cancel_send: true if it was queued and had not
  // fired; a grant it holds goes to the next waiter. take_grant: redeems the
  // slot a fired node holds (the caller then owns one permit).
  bool arm_send(WaitNode* node) noexcept;
  bool cancel_send(WaitNode* node) noexcept;
  bool take_grant(WaitNode* node) noexcept;

  // Closed watchers. watch_closed: true if closed already (not linked);
  // else it is linked and fires on close. unwatch_closed: true if it was
  // still linked (when it returns, a firing in progress has ended).
  // wait_closed: a thread waits for close until `deadline`; false on timeout.
  bool watch_closed(ClosedWatchNode* watch) noexcept;
  bool unwatch_closed(ClosedWatchNode* watch) noexcept;
  bool wait_closed(const Deadline* deadline) noexcept;

  // ---- Claiming and publishing (steps 3-6) --------------------------------
  std::uint64_t claim_position() noexcept {
    // seq_cst: the RMW makes each index unique; seq_cst puts the claim in the
    // single total order before this sender's load of rx_event (step 6), so
    // a receiver that announced its wait (step 11) and then read
    // tail_position either sees this claim or is seen by this sender.
    return tail_position_.fetch_add(1, std::memory_order_seq_cst);
  }
  // Step 4: the tail block if it is numbered `tag`, read without the lock
  // (seqlock); null if the lock is held, the tail differs, or none exists.
  BlockHeader* tail_if_numbered(std::uint32_t tag) const noexcept;
  // Step 5: under the list lock, finds (creating or recycling as needed) the
  // block numbered `block_number`. Terminates the process if allocation fails.
  BlockHeader* open_block(std::uint64_t block_number, const BlockLayout& layout) noexcept;
  // Step 6: after publishing, wakes the receiver if it sleeps (or fires its
  // notifier).
  void notify_receiver() noexcept { signal_.notify(waiters_); }

  // ---- Receiving (steps 7-10); receiver thread only ------------------------
  // For the last handle only (no other thread left).
  BlockHeader* tail_block() const noexcept { return tail_block_.load(std::memory_order_relaxed); }
  BlockHeader* head() const noexcept {
    // acquire: pairs with the release store of the sender that installed the
    // first block, so the receiver sees that block's header initialised.
    return head_.load(std::memory_order_acquire);
  }
  // The receiver's own index lives in the Receiver handle, so that taking a
  // message writes nothing to this shared cache line but the permit word.
  // The channel learns the receiver's progress once per block (step 9).
  std::uint64_t tail_position() const noexcept {
    // seq_cst: the receiver's "nothing claimed" check is part of the
    // re-check after announcing a wait (step 11); see claim_position.
    return tail_position_.load(std::memory_order_seq_cst);
  }
  // Step 8: makes head_ the block numbered `block_number` if it exists,
  // retiring fully consumed blocks before it; null if it is not there yet.
  BlockHeader* advance_head(std::uint64_t block_number, const BlockLayout& layout) noexcept;
  // Step 9: the receiver took the last slot of block `block_number`.
  // Returns the head block afterwards (the receiver caches it).
  BlockHeader* finish_block(std::uint64_t block_number, const BlockLayout& layout) noexcept;
  // Step 10: the channel looked drained; give back the spare block, if kept.
  void release_spare_if_any(const BlockLayout& layout) noexcept;
  bool may_have_spare() const noexcept {
    // relaxed: written only under the lock by this (the receiver's) thread.
    return (rx_block_word_.load(std::memory_order_relaxed) & kMayHaveSpare) != 0;
  }
  // The receiver goes: under the lock, clears the ready bits of the slots it
  // consumed (positions before `index`), so that the last handle destroys
  // exactly the messages still queued: those whose bit is set; and marks
  // the receiver gone.
  void forget_consumed(std::uint64_t index, const BlockLayout& layout) noexcept;

  // Before sleeping (step 11), watches briefly (bounded spins, then yields)
  // until ready(context) says the message may be there. True if so.
  bool watch_briefly(bool (*ready)(const void* context), const void* context) const noexcept;
  // Receiver sleeping (step 11): announce, re-check, then sleep. Announcing
  // disarms a receive notifier first.
  void announce_receiver_wait() noexcept { signal_.announce_wait(); }
  // Sleeps until a sender wakes the receiver or `deadline`; false on timeout.
  bool receiver_sleep(const Deadline* deadline) noexcept { return signal_.sleep(deadline); }
  // True if no receive notifier is armed or firing (so the receiver may
  // announce a sleep without disarming it, and is not running inside its
  // callback). relaxed: only the receiver's own arming leaves idle.
  bool receive_notifier_idle() const noexcept { return signal_.idle(); }

  // ---- Readiness (docs/design.md "Readiness"; receiver_signal.h) ----------
  void attach_receive_node(WaitNode* node) noexcept;
  void detach_receive_node() noexcept;
  // Arms the receive node (step 12). The caller then re-checks that its
  // next position is not published and the channel has not ended, and
  // calls cancel_arming() if it finds something.
  void arm_receive() noexcept { signal_.arm(); }
  // Drops a pending arming (the receiver will look by itself).
  void cancel_arming() noexcept { signal_.cancel_arming(); }
  // True if an armed notifier was cancelled before firing; false if it was
  // not armed or has fired (this waits until its callback has returned).
  bool disarm_receive() noexcept { return signal_.disarm(); }

  // ---- Lifetime -------------------------------------------------------------
  // Snapshots for Sender::strong_count / weak_count.
  std::uint32_t sender_count() const noexcept { return lifetime_.sender_snapshot(); }
  std::uint32_t handle_count() const noexcept { return lifetime_.handle_snapshot(); }
  bool receiver_gone() const noexcept {
    return (rx_block_word_.load(std::memory_order_relaxed) & kReceiverGone) != 0;
  }
  void add_sender() noexcept { lifetime_.add_sender(); }
  bool try_add_sender() noexcept { return lifetime_.try_add_sender(); }
  // The last one tells the receiver.
  void remove_sender() noexcept {
    if (lifetime_.remove_sender()) notify_receiver();
  }
  void add_handle() noexcept { lifetime_.add_handle(); }
  bool remove_handle() noexcept { return lifetime_.remove_handle(); }  // true: destroy
  // Frees every block. Only the last handle calls it, after destroying the
  // messages still queued.
  void free_all_blocks(const BlockLayout& layout) noexcept;

  // Bytes held now: this control block plus every live block (takes the lock).
  std::size_t memory_usage(const BlockLayout& layout) const noexcept;

 private:
  static constexpr std::uint32_t kMayHaveSpare = std::uint32_t{1} << 30;
  static constexpr std::uint32_t kReceiverGone = std::uint32_t{1} << 31;

  void lock_list() const noexcept;
  void unlock_list() const noexcept;
  BlockHeader* new_block(const BlockLayout& layout, std::uint32_t tag) noexcept;
  static void delete_block(BlockHeader* block, const BlockLayout& layout) noexcept;
  void retire_head_locked(const BlockLayout& layout) noexcept;
  void free_spare_locked(const BlockLayout& layout) noexcept;
  PermitOutcome acquire_permits(std::uint32_t count, const Deadline* deadline, void* value,
                                ThreadWaitNode::PushFunction push) noexcept;
  // The bound's slow paths (bound.cc); "woken" lists are chained through
  // WaitNode::next and woken by wake_all after the lock is released.
  // Returns a queued thread waiter to wake early (now first in line), or null.
  WaitNode* settle_locked(std::uint32_t count, WaitNode*& woken) noexcept;
  static void nudge(WaitNode* node) noexcept;
  void wake_all(WaitNode* woken) noexcept;
  static void finish_firing(WaitNode* node) noexcept;
  std::size_t live_blocks_locked() const noexcept;
  std::size_t max_live_blocks(const BlockLayout& layout) const noexcept;

  // Sender-side words.
  Atomic<std::uint64_t> tail_position_{0};
  Atomic<BlockHeader*> tail_block_{nullptr};
  mutable Atomic<std::uint32_t> list_word_{0};
  Atomic<std::uint32_t> permit_word_{0};
  // Receiver-side words.
  ReceiverSignal signal_;
  Atomic<std::uint32_t> rx_block_word_{0};
  Atomic<BlockHeader*> head_{nullptr};
  WaiterQueue waiters_;
  // Lifetime.
  Lifetime lifetime_;
  const std::uint32_t capacity_;
};

static_assert(sizeof(ChannelState) <= 64,
              "leanchan: the control block must fit in 64 bytes (docs/memory.md)");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_CHANNEL_STATE_H_
