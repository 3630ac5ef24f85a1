// SPDX-License-Identifier: MIT
// leanchan/internal/channel_state.h: the 64-byte control block every handle
// of one channel points to: a composition of named parts, each defined in
// its own files with its fields and invariants. It is the only allocation
// made at creation (at most 64 bytes: docs/memory.md). docs/design.md
// describes the algorithm by these parts' function names.
//
//   offset  part         what (header)
//   0       blocks_      the block list and the list lock (block_list.h,
//                        list_lock.h)
//   28      signal_      the receiver's wait word and notifier
//                        (receiver_signal.h)
//   32      semaphore_   the waiting layer: the permit word (which also
//                        hands out positions), the waiter queue and the
//                        capacity (semaphore.h, permit_word.h)
//   52      lifetime_    the sender and handle counts (lifetime.h)
//   60      constants    retention, slots per block, "a resource follows"
//   62      returned_low_  the returned position's low 16 bits (below)
//
// The protocols that need two parts have their own files: provisioning
// before the claim (provisioning.h), giving permits back (give_back.h) and
// ending (ending.h). This class holds the parts, makes and frees the
// control block, and joins the waiting layer to the rest for the handles.
#ifndef LEANCHAN_INTERNAL_CHANNEL_STATE_H_
#define LEANCHAN_INTERNAL_CHANNEL_STATE_H_

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <type_traits>

#include "leanchan/export.h"
#include "leanchan/fwd.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/block_list.h"
#include "leanchan/internal/futex.h"
#include "leanchan/internal/lifetime.h"
#include "leanchan/internal/position.h"
#include "leanchan/internal/receiver_signal.h"
#include "leanchan/internal/semaphore.h"
#include "leanchan/internal/wait_node.h"
#include "leanchan/status.h"
#if defined(LEANCHAN_TEST_POINTS)
#include "leanchan/internal/test_point.h"  // not installed: the test-points build only
#endif

namespace leanchan::internal {

class ChannelState {
 public:
  // A channel created into a ChannelRegistry (leanchan/channel_registry.h):
  // the registry, the bytes of one of its blocks (BlockLayout::bytes, for
  // the registry's memory_usage() of it) and the user's tag.
  struct Registration {
    ChannelRegistry* registry;
    std::size_t block_bytes;
    std::uint64_t tag;
  };
  // Where a registered channel's entry is: written by the registry under
  // its mutex.
  struct RegistryLink {
    ChannelRegistry* registry;
    std::size_t index;
  };
  // The alignment a control block is requested with from a memory
  // resource. Its sizes (72, or 88 registered) are not multiples of it,
  // while a block requested with an alignment above alignof(BlockHeader)
  // always has a size that is one (the header and the slots are multiples
  // of alignof(T)): so a resource tells control blocks from blocks by the
  // request alone (is_control_block_request; MemoryBudget counts channels
  // so).
  static constexpr std::size_t kControlAlignment = 16;
  static bool is_control_block_request(std::size_t bytes, std::size_t alignment) noexcept;

  // Makes a control block: 64 bytes from the global operator new, or, with a
  // memory resource, 64 + 8 bytes from it (the resource pointer follows the
  // state), or, registered, 64 + 24 bytes (the resource pointer, then the
  // RegistryLink) from the resource (the global one, new_delete_resource,
  // if none is given) and an entry in the registry. `slots`: the slots per
  // block (1..32). Throws what the allocation (or the registry's) throws
  // (std::bad_alloc).
  LEANCHAN_API static ChannelState* create(std::uint32_t capacity, std::uint32_t slots,
                                           Retention retention, std::pmr::memory_resource* resource,
                                           WaiterWatch watch = WaiterWatch::kDefault,
                                           const Registration* registration = nullptr);
  // As create, but null instead of throwing when an allocation fails.
  LEANCHAN_API static ChannelState* try_create(std::uint32_t capacity, std::uint32_t slots,
                                               Retention retention,
                                               std::pmr::memory_resource* resource,
                                               WaiterWatch watch = WaiterWatch::kDefault,
                                               const Registration* registration = nullptr) noexcept;
  // Frees it where it came from. The last handle only, blocks already
  // freed, out of its registry (leave_registry) already.
  LEANCHAN_API static void destroy(ChannelState* state) noexcept;
  // Where blocks (and this control block) come from; null: operator new.
  std::pmr::memory_resource* memory_resource() const noexcept;
  // This control block's own bytes: 64, 72 with a memory resource, 88
  // registered.
  std::size_t control_bytes() const noexcept;
  // Bytes held now: this control block plus every live block (takes the lock).
  std::size_t memory_usage(const BlockLayout& layout) const noexcept {
    return memory_usage(layout.bytes);
  }
  // The same, for blocks of `block_bytes` each (a ChannelRegistry's walk).
  LEANCHAN_API std::size_t memory_usage(std::size_t block_bytes) const noexcept;
  // Null unless created with a Registration.
  RegistryLink* registry_link() noexcept;
  // The last handle, before it frees anything: takes the channel out of its
  // registry (which then no longer reads it). No-op if not registered.
  void leave_registry() noexcept {
    if (registered()) leave_registry_slow();
  }
  ChannelState(const ChannelState&) = delete;
  ChannelState& operator=(const ChannelState&) = delete;

  std::uint32_t capacity() const noexcept { return semaphore_.capacity(); }
  // Slots per block, b = min(BlockSize, capacity) (ChannelOps::slots_for).
  std::uint32_t slots() const noexcept { return shape_ & kSlotsMask; }
  bool keeps_none() const noexcept { return kept_blocks_ == 0; }
  // What the list may keep (Retention, leanchan/fwd.h): spares while
  // messages flow (1, or n - 1 for keep(n)), spares after a drain (n - 1),
  // within ceil(C/b) + 1 live blocks (docs/design.md invariant 6); nothing
  // under Retention::kKeepNone.
  Keep keep(const BlockLayout& layout) const noexcept {
    if (kept_blocks_ == 0) return {0, 0, 0};
    const std::size_t kept = kept_blocks_;
    return {(capacity() + layout.slots - 1) / layout.slots + 1, kept > 2 ? kept - 1 : 1, kept - 1};
  }

  // The parts, for the templated half (channel_ops.h) and the protocols.
  BlockList& blocks() noexcept { return blocks_; }
  const BlockList& blocks() const noexcept { return blocks_; }
  ReceiverSignal& signal() noexcept { return signal_; }
  const ReceiverSignal& signal() const noexcept { return signal_; }
  Lifetime& lifetime() noexcept { return lifetime_; }
  const Lifetime& lifetime() const noexcept { return lifetime_; }
  const Semaphore& semaphore() const noexcept { return semaphore_; }

  // ---- Positions (position.h) -------------------------------------------------
  // A permit holder claims the next position (PermitWord::claim).
  std::uint64_t claim_position() noexcept {
#if defined(LEANCHAN_TEST_POINTS)
    LEANCHAN_TEST_POINT(kClaimedWithAPermit);
#endif
    return semaphore_.word().claim(slots());
  }
  // An ordinary send's permit and position in one CAS, when `covered`
  // (PermitWord::try_acquire_and_claim; ChannelOps::try_push_fast).
  template <class Covered>
  PermitWord::Fast try_acquire_and_claim(Covered covered, bool take_uncovered,
                                         std::uint64_t& position) noexcept {
    return semaphore_.word().try_acquire_and_claim(capacity(), slots(), covered, take_uncovered,
                                                   position);
  }
  // The claim position: every position before it is claimed (seq_cst, the
  // receiver's re-check: PermitWord::claimed).
  std::uint64_t claimed_position() const noexcept {
    return semaphore_.word().claimed();
  }

  // ---- Sending: permits (the waiting layer, joined to the give-back) --------
  // Takes `count` slots (1..capacity) at once without waiting. Fails with
  // kFull whenever a sender waits in the queue: freed slots are theirs.
  // Finding the bound full with nobody waiting, it first collects the
  // permits of messages the receiver took and has not given back yet
  // (GiveBack::collect_owed), so it fails only when `count` slots are
  // really in use. Lock-free unless the bound looks full.
  LEANCHAN_API PermitOutcome try_acquire_permits(std::uint32_t count) noexcept;
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
  // Gives `count` slots back (a cancelled waiter's grant, permits handed
  // back): to the waiting senders first, oldest first, then to the free
  // count. Takes no lock unless a sender waits. A sender's give-back goes
  // through Ending::return_unused instead, which also tells the receiver.
  void release_permits(std::uint32_t count) noexcept {
    semaphore_.release(count, blocks_);
  }
  // Free slots right now (a snapshot; collects what the receiver took,
  // under the list lock, unless a sender waits).
  LEANCHAN_API std::uint32_t free_slots() noexcept;
  bool is_closed() const noexcept {
    return semaphore_.is_closed();
  }
  // Refuses every later reservation and wakes every waiting sender and
  // closed watcher (their partial grants go back to the free count).
  void close() noexcept {
    semaphore_.close(blocks_);
  }

  // Send notifiers (kSend nodes). arm_send: kHoldsSlot, kRoom or kClosed,
  // without queueing, if the node holds a grant, a slot is free now (and
  // nobody waits), or the channel is closed; else queues it (one-shot) and
  // returns kArmed. cancel_send: true if it was queued and had not
  // fired; a grant it holds goes to the next waiter.
  LEANCHAN_API RoomStatus arm_send(WaitNode* node) noexcept;
  LEANCHAN_API bool cancel_send(WaitNode* node) noexcept;
  // A redeem (Sender::try_send / try_reserve with a notifier): kTaken, the
  // node's grant; kBusy, no grant yet but the node is queued or firing (a
  // hand-off shows its grant only once the permit word has recorded it,
  // and a close is being delivered): the caller reports kFull, and must
  // not send without the notifier meanwhile, whose grant would be left
  // unredeemed, nor let it go while its callback may run; kNone, idle
  // without a grant (nothing can hand it one: only a queued node gets one).
  enum class Redeem : std::uint8_t { kTaken, kBusy, kNone };
  Redeem redeem(WaitNode* node) noexcept {
    for (;;) {
      if (Semaphore::take_grant(node)) return Redeem::kTaken;
      // acquire: as take_grant's; a grant shown since its look is taken.
      const std::uint32_t state = node->state.load(std::memory_order_acquire);
      if ((state & WaitNode::kGrant) != 0) continue;
      return WaitNode::phase(state) == WaitNode::kIdle ? Redeem::kNone : Redeem::kBusy;
    }
  }

  // Closed watchers (Semaphore::watch_closed, unwatch_closed, wait_closed).
  bool watch_closed(ClosedWatchNode* watch) noexcept {
    return semaphore_.watch_closed(watch, blocks_);
  }
  bool unwatch_closed(ClosedWatchNode* watch) noexcept {
    return semaphore_.unwatch_closed(watch, blocks_);
  }
  bool wait_closed(const Deadline* deadline) noexcept {
    return semaphore_.wait_closed(deadline, blocks_);
  }

  // After publishing, wakes the receiver if it sleeps (or fires its
  // notifier, found first in the waiter queue).
  void notify_receiver() noexcept {
    signal_.notify(semaphore_.waiters());
  }

  // ---- The receiver's notifier (docs/design.md "Readiness") -----------------
  // Attaches `node` in place of the one attached before, if any (disarmed
  // first, so its callback is not running), under one list lock.
  LEANCHAN_API void attach_receive_node(WaitNode* node) noexcept;
  LEANCHAN_API void detach_receive_node() noexcept;

  // ---- Lifetime -------------------------------------------------------------
  // The last Sender, Permit or PermitBatch going ends sending (end_sending).
  void remove_sender() noexcept {
    if (lifetime_.remove_sender()) end_sending();
  }
  // Closes the channel and tells the receiver. No sender can come back
  // (WeakSender::upgrade fails at 0), so the close refuses nothing; it fires
  // the send notifiers still queued without a slot. Slots already handed to
  // send notifiers and not redeemed are given back (GiveBack::
  // give_back_unredeemed): nothing can redeem or cancel them any more (both
  // need a Sender), and they would keep the channel from ending.
  LEANCHAN_API void end_sending() noexcept;
  // Frees every block. Only the last handle calls it, after destroying the
  // messages still queued.
  void free_all_blocks(const BlockLayout& layout) noexcept {
    blocks_.free_all_blocks(layout);
  }

 private:
  friend class Provisioning;
  friend class GiveBack;
  friend class Ending;
  friend struct ControlBlockLayout;

  LEANCHAN_API PermitOutcome acquire_permits(std::uint32_t count, const Deadline* deadline,
                                             void* value,
                                             ThreadWaitNode::PushFunction push) noexcept;

  ChannelState(std::uint32_t capacity, std::uint32_t slots, Retention retention, bool has_resource,
               WaiterWatch watch, bool registered = false) noexcept
      : semaphore_(capacity, watch),
        kept_blocks_(static_cast<std::uint8_t>(retention.blocks())),
        shape_(static_cast<std::uint8_t>(slots | (has_resource ? kHasResource : 0) |
                                         (registered ? kRegistered : 0))) {
#if defined(LEANCHAN_TEST_POINTS)
    const std::uint64_t start = test_start_position.load(std::memory_order_relaxed) %
                                Positions::modulus(slots) / slots * slots;
    semaphore_.word().start_at_for_test(start);
    blocks_.start_at_for_test(block_tag(start / slots));
    returned_low_.store(static_cast<std::uint16_t>(start), std::memory_order_relaxed);
#endif
  }

  static constexpr std::uint8_t kSlotsMask = 0x3F;
  static constexpr std::uint8_t kRegistered = 0x40;
  static constexpr std::uint8_t kHasResource = 0x80;
  bool has_resource() const noexcept {
    return (shape_ & kHasResource) != 0;
  }
  bool registered() const noexcept {
    return (shape_ & kRegistered) != 0;
  }
  LEANCHAN_API void leave_registry_slow() noexcept;

  // The parts, laid out so that the words every message touches come
  // first. [[no_unique_address]]: the block list's 28 bytes of fields and
  // the waiting layer's 20 are each followed by 4 bytes of padding, which
  // the next part fills (the static_asserts below check the offsets).
  [[no_unique_address]] BlockList blocks_;  // blocks, the list lock
  ReceiverSignal signal_;                   // the receiver's wait and notifier
  // the permit word and positions, the waiters, the capacity
  [[no_unique_address]] Semaphore semaphore_;
  Lifetime lifetime_;               // sender and handle counts
  const std::uint8_t kept_blocks_;  // Retention: blocks kept after a drain
  // [5..0] slots per block (1..32) | [6] registered: a RegistryLink follows
  // the resource pointer | [7] a memory resource pointer follows this object
  const std::uint8_t shape_;
  // The returned position: every position before it was taken by the
  // receiver and its permit went back. Its low 16 bits, written under the
  // list lock by whoever gives permits back, before it gives them; read by
  // senders without the lock (Provisioning::last_position_bound).
  Atomic<std::uint16_t> returned_low_{0};
};

// The control block's layout: the size the memory figures promise, and the
// offsets the hot paths rely on (the block list's words and the waiting
// layer share the first cache line's first 48 bytes).
struct ControlBlockLayout {
  static constexpr std::size_t kBlocks = offsetof(ChannelState, blocks_);
  static constexpr std::size_t kSemaphore = offsetof(ChannelState, semaphore_);
  static constexpr std::size_t kSignal = offsetof(ChannelState, signal_);
  static constexpr std::size_t kLifetime = offsetof(ChannelState, lifetime_);
  static constexpr std::size_t kReturnedLow = offsetof(ChannelState, returned_low_);
};
static_assert(ControlBlockLayout::kBlocks == 0 && ControlBlockLayout::kSignal == 28 &&
                  ControlBlockLayout::kSemaphore == 32 && ControlBlockLayout::kLifetime == 52 &&
                  ControlBlockLayout::kReturnedLow == 62,
              "leanchan: the control block's parts moved (docs/design.md, 'Control block')");

// With a memory resource, its pointer follows the state in one allocation.
struct ChannelStateWithResource {
  ChannelState state;
  std::pmr::memory_resource* resource;
};
static_assert(offsetof(ChannelStateWithResource, resource) == 64);

// Inline: a send computes a block's layout, which names the resource, at
// every block it numbers.
inline std::pmr::memory_resource* ChannelState::memory_resource() const noexcept {
  if (!has_resource()) return nullptr;
  return reinterpret_cast<const ChannelStateWithResource*>(this)->resource;
}

// Registered: the registry's link follows the resource pointer.
struct RegisteredChannelState {
  ChannelState state;
  std::pmr::memory_resource* resource;
  ChannelState::RegistryLink link;
};
static_assert(offsetof(RegisteredChannelState, resource) == 64);
static_assert(sizeof(ChannelStateWithResource) == 72 && sizeof(RegisteredChannelState) == 88);
static_assert(std::is_trivially_destructible_v<ChannelState::RegistryLink>,
              "leanchan: ChannelState::destroy destroys only the state");
static_assert(sizeof(ChannelStateWithResource) % ChannelState::kControlAlignment != 0 &&
                  sizeof(RegisteredChannelState) % ChannelState::kControlAlignment != 0 &&
                  ChannelState::kControlAlignment > alignof(BlockHeader),
              "leanchan: a control block's request must differ from every block's");

static_assert(sizeof(ChannelState) == 64,
              "leanchan: the control block must fit in 64 bytes (docs/memory.md)");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_CHANNEL_STATE_H_
