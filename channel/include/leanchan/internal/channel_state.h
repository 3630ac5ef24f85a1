// SPDX-License-Identifier: MIT
// leanchan/internal/channel_state.h: the 64-byte control block every handle
// of one channel points to, and the non-templated half of the algorithm.
//
// Everything a channel owns hangs off this object: the permits that bound it,
// the claim counter, the block list, the wait words, the waiter queue and the
// reference counts. It is the only allocation made at creation (at most 64
// bytes: docs/memory.md). The algorithm is written down once, in
// docs/design.md; "step N" below refers to its numbered steps.
//
// Its parts (each with its own header, fields and invariants):
//   blocks_      the claim counter, the block list and the list lock
//                (block_list.h)
//   bound_       the permit word every send and receive touches (bound.h);
//                its protocol with the waiter queue is in bound.cc
//   signal_      the receiver's wait word and notifier (receiver_signal.h)
//   waiters_     the waiter queue (waiter_queue.h), under the list lock
//   lifetime_    the sender and handle counts (lifetime.h)
//   capacity_    constant
#ifndef LEANCHAN_INTERNAL_CHANNEL_STATE_H_
#define LEANCHAN_INTERNAL_CHANNEL_STATE_H_

#include "leanchan/export.h"

#include <cstddef>
#include <cstdint>
#include <memory_resource>

#include "leanchan/fwd.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/block_list.h"
#include "leanchan/internal/bound.h"
#include "leanchan/internal/futex.h"
#include "leanchan/internal/lifetime.h"
#include "leanchan/internal/receiver_signal.h"
#include "leanchan/internal/wait_node.h"
#include "leanchan/internal/waiter_queue.h"
#include "leanchan/status.h"

namespace leanchan::internal {

class LEANCHAN_API ChannelState {
 public:
  // Makes a control block: 64 bytes from the global operator new, or, with a
  // memory resource, 64 + 8 bytes from it (the resource pointer follows the
  // state). `slots`: the slots per block (1..32). Throws what the
  // allocation throws (std::bad_alloc).
  static ChannelState* create(std::uint32_t capacity, std::uint32_t slots, Retention retention,
                              std::pmr::memory_resource* resource);
  // As create, but null instead of throwing when the allocation fails.
  static ChannelState* try_create(std::uint32_t capacity, std::uint32_t slots, Retention retention,
                                  std::pmr::memory_resource* resource) noexcept;
  // Frees it where it came from. The last handle only, blocks already freed.
  static void destroy(ChannelState* state) noexcept;
  // Where blocks (and this control block) come from; null: operator new.
  std::pmr::memory_resource* memory_resource() const noexcept;
  // This control block's own bytes: 64, or 72 with a memory resource.
  std::size_t control_bytes() const noexcept;
  ChannelState(const ChannelState&) = delete;
  ChannelState& operator=(const ChannelState&) = delete;

  std::uint32_t capacity() const noexcept { return capacity_; }
  // Slots per block, b = min(BlockSize, capacity) (ChannelOps::slots_for).
  std::uint32_t slots() const noexcept { return shape_ & 0x3F; }
  bool keeps_none() const noexcept { return kept_blocks_ == 0; }

  // ---- The bound and its waiters (docs/design.md "The waiter queue") ------
  // Takes `count` slots (1..capacity) at once without waiting. Fails with
  // kFull whenever a sender waits in the queue: freed slots are theirs.
  // Finding the bound full with nobody waiting, it first collects the
  // permits of messages the receiver took and has not given back yet
  // (collect_owed_locked), so it fails only when `count` slots are really
  // in use. Lock-free unless the bound looks full.
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
  // Gives `count` slots back (permits dropped unused, a cancelled waiter's
  // grant): to the waiting senders first, oldest first, then to the free
  // count. Takes no lock unless a sender waits.
  void release_permits(std::uint32_t count) noexcept;
  // A sender gives back permits it will not use (a dropped Permit or
  // PermitBatch, permits whose block could not be allocated, a send
  // notifier's grant cancelled): release_permits, then, if the channel is
  // closed, the receiver is told, since the last of them may end it
  // (is_finished) while the receiver sleeps or has armed its notifier. (An
  // open channel cannot end while this sender lives.)
  void return_unused(std::uint32_t count) noexcept {
    release_permits(count);
    notify_receiver_if_closed();
  }
  // The receiver does not give a permit back per message: it counts the
  // slots it took in its block's header (ChannelOps::try_take) and gives
  // them back at the block's end (finish_block), when a sender waits (the
  // want bit), and when a sender finds the bound full (collect_owed_locked).
  // This does it now: under the list lock, the permits of every slot the
  // receiver took go back as release_permits would (to the waiting senders
  // first, who are woken on this thread). Receiver thread. O(1) plus the
  // senders woken.
  void give_back_taken() noexcept;
  // Free slots right now (a snapshot; collects what the receiver took,
  // under the list lock, unless a sender waits).
  std::uint32_t free_slots() noexcept;
  bool is_closed() const noexcept {
    // acquire: pairs with close()'s fetch_or; only a flag, no data rides on it.
    return bound_.is_closed();
  }
  // Refuses every later reservation and wakes every waiting sender and
  // closed watcher (their partial grants go back to the free count).
  void close() noexcept;
  // True when nothing is queued and nothing can arrive: closed or senderless,
  // with no queued message and no outstanding permit. Receiver thread, at
  // `receiver_index` (it gives back what it took first, when that decides).
  bool is_finished(std::uint64_t receiver_index) noexcept;

  // Send notifiers (kSend nodes). arm_send: kHoldsSlot, kRoom or kClosed,
  // without queueing, if the node holds a grant, a slot is free now (and
  // nobody waits), or the channel is closed; else queues it (one-shot) and
  // returns kArmed. cancel_send: true if it was queued and had not
  // fired; a grant it holds goes to the next waiter. take_grant: redeems the
  // slot a fired node holds (the caller then owns one permit).
  RoomStatus arm_send(WaitNode* node) noexcept;
  bool cancel_send(WaitNode* node) noexcept;
  bool take_grant(WaitNode* node) noexcept;

  // Closed watchers. watch_closed: true if closed already (not linked);
  // else it is linked and fires on close. unwatch_closed: true if it was
  // still linked (when it returns, a firing in progress has ended).
  // wait_closed: a thread waits for close until `deadline`; false on timeout.
  bool watch_closed(ClosedWatchNode* watch) noexcept;
  bool unwatch_closed(ClosedWatchNode* watch) noexcept;
  bool wait_closed(const Deadline* deadline) noexcept;

  // ---- Claiming and publishing (steps 3-6; block_list.h) -------------------
  std::uint64_t claim_position() noexcept { return blocks_.claim_position(); }
  BlockHeader* tail_if_numbered(std::uint32_t tag) const noexcept {
    return blocks_.tail_if_numbered(tag);
  }
  BlockHeader* open_block(std::uint64_t block_number, const BlockLayout& layout) noexcept {
    return blocks_.open_block(block_number, layout);
  }
  // ---- Provisioning, step 2b (block_list.h "Provisioning") ----------------
  // A bound on the last position a permit in use can be given: the
  // position r up to which permits went back (every position before it was
  // taken and its permit returned) plus the permits in use, minus one.
  // Senders read r's low 16 bits (rx_position_, written under the list
  // lock by whoever gives permits back, before it gives them). The claim
  // counter is never more than `permits` ahead of r, so below 2^16 - 1
  // permits the pair gives r exactly; in a deeper queue r is rebuilt from
  // the receiver's block word instead (returned_position), as provide does
  // under the lock. Precondition: the caller holds a permit.
  std::uint64_t last_position_bound() const noexcept {
    // seq_cst: the permits first (a permit counted here is covered by what
    // the caller numbers); then the published position: its acquire half
    // pairs with the giver's store, which happens after the claims of the
    // positions it covers (the receiver's release add, the giver's acquire
    // read of it: BlockList::owed_locked), so the claim counter read next
    // is at least that position; seq_cst orders it after this holder's
    // permit and against release_if_drained's store (see there).
    const std::uint32_t permits = bound_.permits_in_use();
    const std::uint64_t low = rx_position_.load(std::memory_order_seq_cst);
    const std::uint64_t claimed = blocks_.tail_position();
    const std::uint64_t behind = (claimed - low) & 0xFFFF;
    if (permits < 0xFFFF && behind <= permits) return claimed - behind + permits - 1;
    // The block word is read after the position that the same giver
    // published after it (or before it: release_if_drained, where the
    // boundary lies at the end of the older block), so it names r's block
    // or a later one: a later one only makes the bound larger.
    return returned_position(low, claimed, blocks_.receiver_tag(), slots()) + permits - 1;
  }
  // Lock-free: true if the tail block is numbered `tag` or later.
  bool covers(std::uint32_t tag) const noexcept { return blocks_.covers(tag); }
  // Under the lock: numbers blocks (allocating if need be) until the one
  // holding the last position a permit in use can be given exists. False
  // if an allocation failed: the caller gives its permits back
  // (kNoMemory); nothing was claimed.
  bool provide(const BlockLayout& layout) noexcept;

  // Step 6: after publishing, wakes the receiver if it sleeps (or fires its
  // notifier).
  void notify_receiver() noexcept { signal_.notify(waiters_); }

  // ---- Receiving (steps 7-10); receiver thread only ------------------------
  // The receiver's own index lives in the Receiver handle, and the count of
  // what it took in its block lives in that block's header, so that taking
  // a message writes nothing to this shared cache line. The channel learns
  // the receiver's progress once per block (step 9), or when a sender
  // asks (give_back_taken).
  BlockHeader* tail_block() const noexcept { return blocks_.tail_block(); }
  BlockHeader* head() const noexcept { return blocks_.head(); }
  std::uint64_t tail_position() const noexcept { return blocks_.tail_position(); }
  BlockHeader* advance_head(std::uint64_t block_number, const BlockLayout& layout) noexcept {
    return blocks_.advance_head(block_number, layout, keep(layout), bound_);
  }
  // Step 9: the receiver took the last slot of block `block_number`: under
  // the lock, retires it (or keeps it for reuse) and then gives back the
  // permits of its slots not given back yet (after the block work: keeps
  // the ceil(C/b)+1 bound). Returns the head afterwards.
  BlockHeader* finish_block(std::uint64_t block_number, const BlockLayout& layout) noexcept;
  // What the list may keep (Retention, leanchan/fwd.h): spares while
  // messages flow (1, or n - 1 for keep(n)), spares after a drain (n - 1),
  // within ceil(C/b) + 1 live blocks (docs/design.md invariant 6); nothing
  // under Retention::kKeepNone.
  Keep keep(const BlockLayout& layout) const noexcept {
    if (kept_blocks_ == 0) return {0, 0, 0};
    const std::size_t kept = kept_blocks_;
    return {(capacity_ + layout.slots - 1) / layout.slots + 1, kept > 2 ? kept - 1 : 1, kept - 1};
  }
  // Step 10 (the spares beyond what a drained channel keeps), and
  // shrink_to_fit (all of them: kept = 0). Returns how many were freed.
  std::size_t release_spares(const BlockLayout& layout, std::size_t kept) noexcept {
    return blocks_.release_spares(layout, kept);
  }
  std::size_t drained_spares(const BlockLayout& layout) const noexcept {
    return keep(layout).drained_spares;
  }
  bool spare_to_free() const noexcept { return blocks_.spare_to_free(); }
  // Frees every block not needed for a message, if the channel is drained
  // at `index` (the permits the receiver owes aside, which then go back);
  // returns the receiver's index afterwards (block_list.h).
  // Found empty with blocks numbered past the receiver's: with no permit
  // out, they become spares and the spares beyond what a drain keeps are
  // freed (BlockList::unnumber_past_head_locked); the receiver's owed
  // permits go back in the same locked step. Receiver thread, at `index`.
  // Returns the blocks freed.
  std::size_t release_unused_numbered(std::uint64_t index, const BlockLayout& layout) noexcept;
  // Lock-free: true if some permit is out beyond what the receiver, at
  // `index`, can owe (at most the slots it took in its block). A hint:
  // the lock decides.
  bool permits_out_beyond_owed(std::uint64_t index) const noexcept {
    return bound_.permits_in_use() > index % slots();
  }
  // The permits owed go back in the same locked step as the position
  // moves (as in finish_block). Receiver thread.
  std::uint64_t release_if_drained(std::uint64_t index, const BlockLayout& layout,
                                   std::size_t& freed) noexcept;
  void forget_consumed(std::uint64_t index, const BlockLayout& layout) noexcept {
    blocks_.forget_consumed(index, layout);
  }

  // Before sleeping (step 11), watches briefly (bounded spins, then yields)
  // until ready(context) says the message may be there: true. False when
  // the watch ends without it, or early, once it has lasted a few looks,
  // if the channel has ended (is_finished). The end is not asked at once:
  // it reads the shared line, and a receiver that keeps up watches after
  // nearly every message.
  bool watch_briefly(bool (*ready)(const void* context), const void* context,
                     std::uint64_t receiver_index) noexcept;
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
  bool receiver_gone() const noexcept { return blocks_.receiver_gone(); }
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
  void free_all_blocks(const BlockLayout& layout) noexcept { blocks_.free_all_blocks(layout); }

  // Bytes held now: this control block plus every live block (takes the lock).
  std::size_t memory_usage(const BlockLayout& layout) const noexcept;

 private:
  void lock_list() const noexcept { blocks_.lock_list(); }
  void unlock_list() const noexcept { blocks_.unlock_list(); }
  PermitOutcome acquire_permits(std::uint32_t count, const Deadline* deadline, void* value,
                                ThreadWaitNode::PushFunction push) noexcept;
  // The bound's slow paths (bound.cc); "woken" lists are chained through
  // WaitNode::next and woken by wake_all after the lock is released.
  // Returns a queued thread waiter to wake early (now first in line), or null.
  WaitNode* settle_locked(std::uint32_t count, WaitNode*& woken) noexcept;
  // Under the lock: the permits the receiver owes (BlockList::owed_locked)
  // are published as given back and settled (settle_locked); returns what
  // settle_locked returns. With `raise_want`, the head's want bit is set in
  // the same step (a sender about to queue).
  WaitNode* give_back_taken_locked(bool raise_want, WaitNode*& woken) noexcept;
  // A sender's collection, under the lock (full bound, queueing, capacity):
  // give_back_taken_locked, but only while no sender waits, so that no
  // waiter is woken on the caller's thread.
  void collect_owed_locked(bool raise_want) noexcept;
  // The same, taking the lock, unless nothing can be owed (one-slot
  // blocks) or a sender waits: false then, without the lock.
  bool collect_owed() noexcept;
  // r from its low 16 bits `low`: r lies in [first, first + slots], where
  // `first` is the first position of the block tagged `receiver_tag` (the
  // receiver's, as of its last finished block: finish_block moves both
  // together), and r <= `claimed`. An inconsistent pair (a block word newer
  // than the position) gives a larger value, never a smaller one.
  static std::uint64_t returned_position(std::uint64_t low, std::uint64_t claimed,
                                         std::uint32_t receiver_tag, std::uint64_t slots) noexcept {
    const std::uint64_t block = claimed / slots;
    const std::uint64_t first = (block - tag_distance(block_tag(block), receiver_tag)) * slots;
    const std::uint64_t receiver = first + ((low - first) & 0xFFFF);
    if (receiver > first + slots || receiver > claimed) {
      return first + slots < claimed ? first + slots : claimed;
    }
    return receiver;
  }
  // After slots went back to the permit word: the last of them may end a
  // closed channel. acquire (is_closed): a flag only. A close this load
  // misses comes after that release in the word's modification order, so
  // the receiver's own end check after its close sees the slots back.
  void notify_receiver_if_closed() noexcept {
    if (bound_.is_closed()) notify_receiver();
  }
  static void nudge(WaitNode* node) noexcept;
  void wake_all(WaitNode* woken) noexcept;
  static void finish_firing(WaitNode* node) noexcept;

  // The parts, each with its own header and invariants, laid out so that the
  // words every message touches come first.
  BlockList blocks_;       // positions, blocks, the list lock
  Bound bound_;            // the permit word (bound.h)
  ReceiverSignal signal_;  // the receiver's wait and notifier
  WaiterQueue waiters_;    // waiting senders and watchers
  Lifetime lifetime_;      // sender and handle counts
  ChannelState(std::uint32_t capacity, std::uint32_t slots, Retention retention,
               bool has_resource) noexcept
      : capacity_(capacity),
        kept_blocks_(static_cast<std::uint8_t>(retention.blocks())),
        shape_(static_cast<std::uint8_t>(slots | (has_resource ? kHasResource : 0))) {}

  static constexpr std::uint8_t kHasResource = 0x80;
  bool has_resource() const noexcept { return (shape_ & kHasResource) != 0; }

  const std::uint32_t capacity_;
  const std::uint8_t kept_blocks_;  // Retention: blocks kept after a drain
  // [5..0] slots per block (1..32) | [7] a memory resource pointer follows
  // this object
  const std::uint8_t shape_;
  // The position up to which permits went back, its low 16 bits
  // (provisioning, step 2b): written under the list lock by whoever gives
  // them back, before it does; read by senders without the lock.
  Atomic<std::uint16_t> rx_position_{0};

  friend struct ControlBlockLayout;
};

// The control block's layout: the size the memory figures promise, and the
// offsets the hot paths rely on (the block list's words and the permit word
// share the first cache line's first half).
struct ControlBlockLayout {
  static constexpr std::size_t kBlocks = offsetof(ChannelState, blocks_);
  static constexpr std::size_t kPermitWord = offsetof(ChannelState, bound_);
  static constexpr std::size_t kSignal = offsetof(ChannelState, signal_);
  static constexpr std::size_t kWaiters = offsetof(ChannelState, waiters_);
  static constexpr std::size_t kLifetime = offsetof(ChannelState, lifetime_);
};
static_assert(ControlBlockLayout::kBlocks == 0 && ControlBlockLayout::kPermitWord == 32 &&
                  ControlBlockLayout::kSignal == 36 && ControlBlockLayout::kWaiters == 40 &&
                  ControlBlockLayout::kLifetime == 48,
              "leanchan: the control block's parts moved (docs/design.md, 'Control block')");

// With a memory resource, its pointer follows the state in one allocation.
struct ChannelStateWithResource {
  ChannelState state;
  std::pmr::memory_resource* resource;
};
static_assert(offsetof(ChannelStateWithResource, resource) == 64);

static_assert(sizeof(ChannelState) == 64,
              "leanchan: the control block must fit in 64 bytes (docs/memory.md)");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_CHANNEL_STATE_H_
