// SPDX-License-Identifier: MIT
// leanchan/internal/channel_ops.h: the templated half of the algorithm: put a
// value in its slot, take one out, destroy what is left at the end
// (docs/design.md "Sending" and "Receiving", by these functions' names).
#ifndef LEANCHAN_INTERNAL_CHANNEL_OPS_H_
#define LEANCHAN_INTERNAL_CHANNEL_OPS_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "leanchan/internal/block.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/ending.h"
#include "leanchan/internal/give_back.h"
#include "leanchan/internal/position.h"
#include "leanchan/internal/provisioning.h"
#include "leanchan/internal/wait_policy.h"

namespace leanchan::internal {

// Compile-time contract of channel<T, BlockSize>; every handle names it, so a
// bad argument fails with these messages before anything else.
template <class T, std::size_t BlockSize>
struct CheckChannelParameters {
  static_assert(BlockSize >= 1 && BlockSize <= 32,
                "leanchan: BlockSize must be between 1 and 32 slots (a block's ready bits "
                "are one 32-bit word)");
  static_assert(std::is_object_v<T> && !std::is_const_v<T> && !std::is_array_v<T>,
                "leanchan: T must be a non-const, non-array object type");
  static_assert(std::is_nothrow_move_constructible_v<T>,
                "leanchan: T must be nothrow move-constructible (a message is moved into "
                "and out of its slot where no exception can be allowed)");
  static_assert(std::is_nothrow_destructible_v<T>, "leanchan: T must be nothrow destructible");
  static constexpr bool kValid = true;
};

template <class T, std::size_t BlockSize>
struct ChannelOps {
  static_assert(CheckChannelParameters<T, BlockSize>::kValid);
  using Shape = BlockShape<T, BlockSize>;

  // Slots per block for this channel: BlockSize, or the capacity when that
  // is smaller (a block never needs more slots than the channel can hold, so
  // a capacity-1 channel's block holds one message).
  static constexpr std::uint32_t slots_for(std::size_t capacity) noexcept {
    return static_cast<std::uint32_t>(capacity < BlockSize ? capacity : BlockSize);
  }
  // The same, as the control block keeps it.
  static std::uint32_t slots(const ChannelState& state) noexcept { return state.slots(); }
  static BlockLayout layout(const ChannelState& state) noexcept {
    return Shape::layout_for(slots(state), state.memory_resource());
  }
  static BlockLayout layout(const ChannelState& state, std::uint32_t block_slots) noexcept {
    return Shape::layout_for(block_slots, state.memory_resource());
  }
  // What a channel created with `options` tells its registry (used only
  // when options.registry is set).
  static ChannelState::Registration registration(std::uint32_t slots,
                                                 const ChannelOptions& options) noexcept {
    return {options.registry, Shape::layout_for(slots, nullptr).bytes, options.registry_tag};
  }
  struct Place {
    std::uint64_t block_number;
    std::uint32_t slot;
  };
  // Where `position` lives. The full-size case divides by the constant.
  static Place place(std::uint64_t position, std::uint32_t slots) noexcept {
    if (slots == BlockSize) {
      return {position / BlockSize, static_cast<std::uint32_t>(position % BlockSize)};
    }
    return {position / slots, static_cast<std::uint32_t>(position % slots)};
  }

  // Lock-free: true if the numbered blocks reach the one holding the last
  // position a permit in use can be given (provisioning.h), so that a
  // position claimed now has its block.
  static bool provisioned(const ChannelState& state, std::uint32_t block_slots) noexcept {
    const std::uint64_t last = Provisioning::last_position_bound(state);
    return state.blocks().covers(block_tag(place(last, block_slots).block_number));
  }
  // Provisioning for a holder of fresh permits (a send, a reservation; by any
  // path: the lock-free CAS, the queue, a notifier's grant): makes sure the
  // blocks exist for every position they can be given, before any is
  // claimed. False if an
  // allocation failed: the caller gives the permits back and reports
  // kNoMemory. Lock-free unless a block must be numbered (once per block).
  static bool provide(ChannelState& state) noexcept {
    const std::uint32_t block_slots = slots(state);
    return provisioned(state, block_slots) ||
           Provisioning::provide(state, layout(state, block_slots));
  }

  // Claims a position, finds its block, moves the value in and publishes
  // it, then tells the receiver. The caller holds a provided permit (see provide), which this
  // consumes into a queued message; cannot fail. Never blocks on the
  // channel's bound; takes the list lock only when the slot's block is not
  // the tail.
  static void push(ChannelState& state, T&& value) noexcept {
    write(state, state.claim_position(), std::move(value));
  }

  // An ordinary send in one RMW of the control block's line: the permit
  // and the position in one CAS (PermitWord::try_acquire_and_claim), when
  // no sender waits, the channel is open, a slot is free and the numbered
  // blocks already reach the last position a permit in use can be given,
  // this one counted (so nothing is provided: provisioning.h); then writes
  // and publishes as push (kSent). When only the blocks do not reach and
  // no permit is still to claim, the send numbers its block under the
  // lock without a permit (Provisioning::provide_next) and tries once
  // more; when they still do not, the same CAS takes the permit alone
  // (kAcquired, `value` untouched: the caller provides and pushes, as for
  // any permit). kNoMemory, nothing taken, if that numbering could not
  // allocate. kNotTaken, nothing changed, otherwise: the caller takes a
  // permit by the other paths, which handle each case.
  enum class FastSend : std::uint8_t { kSent, kAcquired, kNoMemory, kNotTaken };
  static FastSend try_push_fast(ChannelState& state, T& value) noexcept {
    const std::uint32_t block_slots = slots(state);
    const auto covered = [&state, block_slots](PermitWord::Word word) noexcept {
      // With no permit still to claim (the word's bit 3 clear: PermitWord
      // invariant P), the last position a permit in use can be given, this
      // one counted, is the claim position itself: its block must be
      // numbered, nothing more. The word then says all the check needs, so
      // a word that comes back to the same value means the same bound.
      // Otherwise the bound is loose: the claim position plus the slots in
      // use (at least the true bound at the CAS, whatever happened before
      // it: the returned position is at most the claim position), which must
      // lie in the block of the claim position itself, and that block be
      // numbered: the
      // claim's slot plus the slots in use stays below b (M is a multiple
      // of b, so no wrap splits a block). A later block would not do: the list past
      // the receiver's block can be un-numbered without the word changing
      // (BlockList::unnumber_past_head_locked), and the word can then come
      // back to the value read here (the receiver gives back what it owed,
      // a reservation takes a slot), so a permit this claim pushes on
      // would land in a block no longer there. The claim's own block is
      // the receiver's block at any un-numbering (nothing is claimed past
      // the receiver's index then), which stays; a release moves the
      // claim position, which fails the CAS. (The explorer's scenarios
      // FastSendPushesAReservationPastAnUnnumbering and
      // FastSendPushesAReservationWhileOneIsHeld hold these windows open; a
      // bound from the returned position read beside the word would not do:
      // the word can come back to the same value while that position moves
      // on.)
      const auto [number, slot] = place(PermitWord::position_of(word), block_slots);
      return (!PermitWord::pending_of(word) || slot + PermitWord::used_of(word) < block_slots) &&
             state.blocks().covers(block_tag(number));
    };
    std::uint64_t position = 0;
    PermitWord::Fast fast = state.try_acquire_and_claim(covered, false, position);
    if (fast == PermitWord::Fast::kUncovered) {
      if (!Provisioning::provide_next(state, layout(state, block_slots))) {
        return FastSend::kNoMemory;
      }
      fast = state.try_acquire_and_claim(covered, true, position);
    }
    switch (fast) {
      case PermitWord::Fast::kClaimed:
        write(state, position, std::move(value));
        return FastSend::kSent;
      case PermitWord::Fast::kAcquired: return FastSend::kAcquired;
      case PermitWord::Fast::kUncovered:
      case PermitWord::Fast::kNotTaken: break;
    }
    return FastSend::kNotTaken;
  }

  // Finds the block of the claimed `position`, moves the value in and
  // publishes it, then tells the receiver.
  static void write(ChannelState& state, std::uint64_t position, T&& value) noexcept {
    const std::uint32_t block_slots = slots(state);
    BlockList& blocks = state.blocks();
    const auto [number, slot] = place(position, block_slots);
    BlockHeader* block = blocks.tail_if_numbered(block_tag(number));  // lock-free
    if (block == nullptr) block = blocks.open_block(number, layout(state, block_slots));
    ::new (static_cast<void*>(Shape::slot(block, slot))) T(std::move(value));
    // seq_cst: its release half publishes the value to the receiver's load
    // in try_take; seq_cst orders it before ReceiverSignal::notify's load.
    block->ready.fetch_or(std::uint32_t{1} << slot, std::memory_order_seq_cst);
    state.notify_receiver();
  }

  // The receiver's own view, kept in its handle so that taking a message
  // reads nothing from the shared control line but what it must: the next
  // position (modulo M, position.h), the head block it reads (refreshed whenever the receiver
  // itself changes it, or finds it missing), the slots per block, and the
  // two facts release_when_empty asks: whether the channel keeps no block (a
  // constant, asked after nearly every message when the receiver keeps up)
  // and whether there is a spare to free (BlockList::spare_to_free, asked
  // when the receiver finds the channel empty). Only the receiver sets or
  // clears that flag (under the list lock, in its own calls), so a copy
  // refreshed after each of those calls is always exact. release_when_empty
  // thus reads the shared line only when it may free something (why:
  // docs/design.md, "Found empty").
  // `modulus`: M for the channel's blocks (Positions::modulus, a constant
  // kept here so that a take needs no test of the slots per block);
  // `depth`: how far a sender can run ahead of the receiver (its runway,
  // WaitPolicy::depth_for_runway; a constant, kept here so that the wait
  // reads no shared line for it), which says the longer watch a streaming
  // receiver may use before it sleeps (WaitPolicy::receiver);
  // `run`: the messages its blocking receives (recv, recv_many) took
  // since its last watch_briefly began, the one that watch found included
  // (counted to 2; Receiver::wait_take; the rest-of-block watch, which
  // needs a run, does not end one), which says whether it does;
  // `rest_of_block`: whether its channel allows the rest-of-block watch
  // (a constant: WaitPolicy::allows_rest_of_block).
  struct Cursor {
    std::uint64_t index = 0;
    BlockHeader* head = nullptr;
    std::uint64_t modulus = 0;  // before slots: no padding between them
    std::uint16_t slots = 0;    // 1..32
    bool keeps_none = false;
    bool spare_to_free = false;
    WatchDepth depth = WatchDepth::kShort;
    std::uint8_t run = 0;
    bool rest_of_block = false;
  };
  static_assert(sizeof(Cursor) <= 32, "leanchan: the receiver's cursor fits in half a cache line");
  static Cursor cursor_for(const ChannelState& state,
                           const WaitPolicy& policy = kWaitPolicy) noexcept {
    const std::uint32_t block_slots = slots(state);
    // The runway (WaitPolicy): C - b + 1 slots.
    const WatchDepth depth = policy.depth_for_runway(state.capacity() - block_slots + 1);
    // The claim position of a new channel (0, or where a test started it).
    return {state.claimed_position(),
            nullptr,
            Positions::modulus(block_slots),
            static_cast<std::uint16_t>(block_slots),
            state.keeps_none(),
            false,
            depth,
            0,
            policy.allows_rest_of_block(depth, block_slots, state.capacity(), sizeof(T))};
  }
  // The watch a blocking receive that found nothing uses: the channel's
  // depth (kDeep or kLong, WaitPolicy::receiver) when its last watch was
  // followed by a run of two messages or more (a sender is streaming ahead
  // of the receiver: looking again at once would only slow it); else the
  // doubling one, kShort (a message that comes alone, as a reply does, is
  // seen at once). Starts a new run.
  static WatchDepth watch_depth(Cursor& cursor) noexcept {
    const WatchDepth depth = cursor.run >= 2 ? cursor.depth : WatchDepth::kShort;
    cursor.run = 0;
    return depth;
  }
  // A blocking receive took a message.
  static void count_run(Cursor& cursor) noexcept {
    if (cursor.run < 2) ++cursor.run;
  }
  // Whether a blocking receive that found nothing first watches for the
  // rest of its block (watch_rest_of_block): it streams (a run of two
  // messages or more since its last watch), two slots or more of its
  // block are left, and its channel allows it (Cursor::rest_of_block, set
  // once by cursor_for from WaitPolicy::allows_rest_of_block; docs/design.md,
  // "The rest-of-block watch"). Reads only the cursor.
  static bool watches_rest_of_block(const Cursor& cursor) noexcept {
    return cursor.run >= 2 && cursor.rest_of_block &&
           place(cursor.index, cursor.slots).slot + 1 < cursor.slots;
  }
  // The rest-of-block watch (Ending::watch_rest_of_block) at the
  // receiver's next position, in its cached head block. Out of line: the
  // blocking receive around it stays small enough to inline.
  static void watch_rest_of_block(const Cursor& cursor) noexcept {
    const auto [number, slot] = place(cursor.index, cursor.slots);
    (void)Ending::watch_rest_of_block(cursor.head, block_tag(number), slot, cursor.slots);
  }
  // After a call of the receiver's that may have changed the flag
  // (advance_head, finish_block, release_spares, release_if_drained). The
  // flag's line was just written by this thread under the lock.
  static void refresh_spare(const ChannelState& state, Cursor& cursor) noexcept {
    cursor.spare_to_free = state.blocks().spare_to_free();
  }

  // Receiver thread only. The block holding the receiver's next
  // position, advancing the head to it if needed; null if that block is not
  // there yet (nothing claimed, or its sender has not opened it).
  static BlockHeader* locate(ChannelState& state, Cursor& cursor) noexcept {
    const auto [number, slot] = place(cursor.index, cursor.slots);
    BlockHeader* block = cursor.head;
    // acquire: pairs with the release renumbering of a block reused in place
    // (BlockList::extend_locked), so the zeroed ready bits are seen before
    // the new ones.
    if (block != nullptr && block->tag(std::memory_order_acquire) == block_tag(number)) {
      return block;
    }
    // Nothing claimed past the index: nothing to take, and no lock needed.
    // (A claim that races this load is seen by the re-check after the
    // receiver announces a wait.)
    BlockList& blocks = state.blocks();
    if (cursor.index == state.claimed_position()) return nullptr;
    const BlockLayout block_layout = layout(state, cursor.slots);
    block = blocks.advance_head(number, block_layout, state.keep(block_layout),
                                state.semaphore().word());
    cursor.head = block != nullptr ? block : blocks.head();
    refresh_spare(state, cursor);
    return block;
  }

  // True if the receiver's next message is published (not merely claimed).
  // Receiver thread only; the re-check after arming its notifier.
  static bool is_published(ChannelState& state, Cursor& cursor) noexcept {
    BlockHeader* block = locate(state, cursor);
    if (block == nullptr) return false;
    const std::uint32_t slot = place(cursor.index, cursor.slots).slot;
    // seq_cst: the re-check after arming (Dekker with push's fetch_or and
    // its load of the receiver's signal word).
    return (block->ready.load(std::memory_order_seq_cst) & (std::uint32_t{1} << slot)) != 0;
  }

  // Receiver thread only. Moves the next message into `out` (which
  // must be empty; T need not be assignable) if it is published.
  static bool try_take(ChannelState& state, Cursor& cursor, std::optional<T>& out) noexcept {
    const std::uint64_t index = cursor.index;
    const std::uint32_t block_slots = cursor.slots;
    const auto [number, slot] = place(index, block_slots);
    BlockHeader* block = locate(state, cursor);
    if (block == nullptr) return false;
    // seq_cst: acquire pairs with push's fetch_or (the value is visible);
    // seq_cst makes this the re-check after announcing a wait.
    const std::uint32_t bits = block->ready.load(std::memory_order_seq_cst);
    if ((bits & (std::uint32_t{1} << slot)) == 0) return false;
    T* stored = std::launder(Shape::slot(block, slot));
    out.emplace(std::move(*stored));
    stored->~T();
    cursor.index = Positions::next_modulo(index, cursor.modulus);
    const bool last_slot = slot == block_slots - 1;
    bool wanted = false;
    if (last_slot) {
      // Which also gives back the block's permits.
      cursor.head = GiveBack::finish_block(state, number, layout(state, block_slots), cursor.index);
      refresh_spare(state, cursor);
    } else {
      // The slot's permit is not given back now: it is counted in the
      // block's header, a line this thread already reads and senders write
      // only while the receiver shares their block (give_back.h). release:
      // a list-lock holder that reads the count (acquire) and publishes the
      // positions as given back also publishes their claims
      // (Provisioning::last_position_bound). The RMW returns the want bit:
      // a sender that raised it before this add waits for this permit.
      wanted =
          BlockNumber::wanted(block->number.fetch_add(kConsumedUnit, std::memory_order_release));
    }
    // Under Retention::kKeepNone the take that drains the channel
    // frees its blocks. The next slot's bit (already read, from this block's
    // line) is checked first, so a deep queue never reads the shared words.
    // (After a block's last slot, finish_block did it.) The spares of the
    // other policies go when the receiver finds the channel empty
    // (release_when_empty), not at every momentary drain.
    if (cursor.keeps_none && !last_slot && (bits & (std::uint32_t{2} << slot)) == 0 &&
        cursor.index == state.claimed_position()) {
      (void)release_if_drained(state, cursor);
    }
    // A sender waits: the permits go back now (after the block work, as
    // finish_block's: keeps the ceil(C/b)+1 bound).
    if (wanted) GiveBack::give_back_taken(state);
    return true;
  }

  // Receiver thread only, when it found nothing to take and is
  // about to say so or to wait (try_recv's kEmpty or kDisconnected,
  // arm_notifier's false, a blocking receive that stops watching): if
  // nothing is claimed past its index, frees the spare blocks beyond what a
  // drained channel keeps (Retention::kKeepOne, keep(n)), or, under
  // kKeepNone, tries again to free every block (the take that drained it
  // frees nothing while a permit is out; a block is there only then, or
  // after a reservation dropped unused). The spares do not go at the take
  // that empties the queue (docs/design.md, "Found empty"). The cursor's
  // copy of the flag
  // is checked first, so with nothing to free this reads one shared word,
  // the last numbered block's tag, to see whether blocks are numbered past
  // the receiver's; then the claim counter and the permit word, and the lock
  // only when no permit is out (kKeepNone: two shared loads, and the lock
  // only when a block is there).
  static void release_when_empty(ChannelState& state, Cursor& cursor) noexcept {
    BlockList& blocks = state.blocks();
    if (cursor.keeps_none) {
      if (cursor.index == state.claimed_position() && blocks.head() != nullptr) {
        (void)release_if_drained(state, cursor);
      }
      return;
    }
    const bool numbered_past = blocks.numbered_past(cursor.head);
    if (!cursor.spare_to_free && !numbered_past) return;
    if (cursor.index != state.claimed_position()) return;
    const BlockLayout block_layout = layout(state, cursor.slots);
    if (numbered_past) {
      // Blocks are numbered past the receiver's with nothing claimed in
      // them: provided for permits that were dropped unused (a large
      // reservation), or that are still held. With none held (looked at
      // first without the lock), they become spares and what a drain does
      // not keep is freed, so a drain keeps what its policy says.
      if (!GiveBack::permits_out_beyond_owed(state, cursor.index)) {
        (void)GiveBack::release_unused_numbered(state, cursor.index, block_layout);
      }
      cursor.head = blocks.head();
      refresh_spare(state, cursor);
    }
    if (!cursor.spare_to_free) return;
    (void)blocks.release_spares(block_layout, state.keep(block_layout).drained_spares);
    refresh_spare(state, cursor);
  }

  // Receiver thread only. If nothing is claimed past the receiver's index
  // and no sender holds a permit (the receiver's own takes not given back
  // aside: they go back), frees every block (the next message starts a
  // fresh one) and moves the index to the block boundary the claim counter
  // moved to. Returns the blocks freed.
  static std::size_t release_if_drained(ChannelState& state, Cursor& cursor) noexcept {
    std::size_t freed = 0;
    cursor.index =
        GiveBack::release_if_drained(state, cursor.index, layout(state, cursor.slots), freed);
    cursor.head = state.blocks().head();  // the block it cached may be gone
    refresh_spare(state, cursor);
    return freed;
  }

  // Last handle only: no other thread can touch the channel, and every
  // claimed slot has been written (senders and permits are all gone). The
  // receiver cleared the ready bits of what it consumed (forget_consumed),
  // so every set bit is a message still queued.
  static void destroy(ChannelState* state) noexcept {
    state->leave_registry();  // before anything is freed: a registry walk reads the blocks
    const std::uint32_t last = state->blocks().last_tag();
    for (BlockHeader* block = state->blocks().head(); block != nullptr;
         block = block->tag(std::memory_order_relaxed) == last ? nullptr : block->next) {
      std::uint32_t bits = block->ready.load(std::memory_order_relaxed);
      while (bits != 0) {
        const int slot = __builtin_ctz(bits);
        bits &= bits - 1;
        std::launder(Shape::slot(block, static_cast<std::size_t>(slot)))->~T();
      }
    }
    state->free_all_blocks(layout(*state));
    ChannelState::destroy(state);
  }

  // A cheap look (relaxed loads, no lock) at whether the next message may be
  // there: its block is the cached head and its bit is set, or a position
  // past it is claimed while its block is not the head yet. For watching
  // before a sleep; try_take decides.
  static bool may_be_ready(const ChannelState& state, const Cursor& cursor) noexcept {
    const BlockHeader* block = cursor.head;
    const auto [number, slot] = place(cursor.index, cursor.slots);
    if (block != nullptr && block->tag(std::memory_order_relaxed) == block_tag(number)) {
      return (block->ready.load(std::memory_order_relaxed) & (std::uint32_t{1} << slot)) != 0;
    }
    return state.claimed_position() != cursor.index;
  }

  static void release_handle(ChannelState* state) noexcept {
    if (state->lifetime().remove_handle()) destroy(state);
  }
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_CHANNEL_OPS_H_
