// SPDX-License-Identifier: MIT
// leanchan/internal/block_list.h: the list of blocks messages live in
// (their positions come from the permit word: permit_word.h; docs/design.md
// "Sending", "Receiving", "Recycling", "Memory reclamation while senders
// walk the list"). Part of the 64-byte control block (channel_state.h).
//
// Fields (who writes / who reads):
//   tail_block_     list-lock holder / senders' seqlock read
//                   (tail_if_numbered): the senders' block, the block the
//                   newest claims write into as far as a lock holder has
//                   seen; null exactly when the list is empty
//   list_word_      list-lock holder / senders' seqlock read
//                   bits: [31..2] tag of tail_block_ (of an empty list: the
//                   receiver's block's tag minus 2, so that no block is
//                   covered) | [1] contended | [0] locked
//   last_tag_       list-lock holder / provisioning check (covers): the tag
//                   of the last numbered block (of an empty list: as the
//                   list word's)
//   rx_block_word_  the receiver, under the lock / list-lock holders
//                   bits: [29..0] tag of the block the receiver reads, as of
//                   its last finished block | [30] a spare to free |
//                   [31] the receiver is gone
//   head_           list-lock holders (the receiver retiring or releasing
//                   blocks; the sender that opens a block into an empty
//                   list: the very first one, or after a release) / the
//                   receiver, also without the lock
//
// Invariants (docs/design.md "Invariants" 2-7): the numbered blocks are
// exactly head .. last (the block tagged last_tag_), consecutive; the
// senders' block lies in head .. last; a chain of spares may follow the
// last; a block holding an unconsumed claimed position is neither freed,
// recycled nor renumbered; live blocks <= ceil(C/b) + 1; one block after a
// drain once the receiver finds the channel empty (Retention::kKeepOne), or
// none (kKeepNone, shrink_to_fit).
// Blocks numbered past the senders' block are those provided for permits
// held (provisioning.h): a send whose claim lies in one of them moves the
// senders' block forward to it under the lock (open_block), walking from
// the senders' block (one step, unless claims skipped blocks), never from
// the head: about once per block, as numbering costs a send that holds
// nothing. Every other send finds its block by the seqlock read alone
// (or, finding the list locked, watches and then takes the lock), but one
// whose block lies before the senders' block (another sender opened a
// later block first), which walks from the head under the lock.
// The price: the last numbered block is found by walking from the
// senders' block (last_block_locked), in the providers' numbering and the
// receiver's retiring, once per block each: O(1) with small reservations,
// O(reserved / b) while a large one is held. A pointer to the last block
// would make it O(1) always; the 64-byte control block has no room left
// for one.
// Provisioning (provisioning.h): a sender claims a position only once the
// numbered blocks reach the block of the last position any permit in use
// can be given (covers, else extend_locked under the lock), so claiming
// never allocates. Numbered blocks at or after the receiver's position are
// freed only by release_if_drained_locked, with no permit in use.
//
// The list lock (list_lock.h) lives in the list word; it also guards the
// waiting layer's waiter queue (semaphore.h).
#ifndef LEANCHAN_INTERNAL_BLOCK_LIST_H_
#define LEANCHAN_INTERNAL_BLOCK_LIST_H_

#include <cstddef>
#include <cstdint>

#include "leanchan/export.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/list_lock.h"
#include "leanchan/internal/permit_word.h"

namespace leanchan::internal {

// What the list may keep (the channel's Retention; channel_state.h).
struct Keep {
  std::size_t block_bound;     // live blocks allowed when a retired block stays as a
                               // spare: ceil(C/b) + 1, or 0 to keep none
  std::size_t spares;          // spares kept while messages flow
  std::size_t drained_spares;  // spares kept after a drain (behind the kept block)
};

class BlockList : public ListLock {
 public:
  // ---- Senders --------------------------------------------------------------
  // (A sender claims its position from the permit word: PermitWord::claim.)
  // The senders' block if it is numbered `tag`, read without the lock
  // (seqlock); null if the lock is held, the senders' block differs, or
  // none exists. Inline: every send's write calls it.
  BlockHeader* tail_if_numbered(std::uint32_t tag) const noexcept {
    // A seqlock read: the word before and after the pointer must agree
    // (unlocked, same tag). While the caller holds an unconsumed claim the
    // senders' block only moves forward (only a release empties the list,
    // and it needs no claim outstanding), and every move changes the tag,
    // so agreement means the pointer is the block numbered `tag`, and the
    // caller's unconsumed slot in it keeps it alive.
    const std::uint32_t before = list_word_.load(std::memory_order_acquire);
    if ((before & ListWord::kLocked) != 0 || ListWord::tag_of(before) != tag) return nullptr;
    // acquire: pairs with the writer's release store of tail_block_. If this
    // reads a pointer stored inside a locked section, that section's locking
    // RMW happens-before the re-read below, which then sees the lock bit or a
    // later word (whose tag differs if the tail moved).
    BlockHeader* tail = tail_block_.load(std::memory_order_acquire);
    const std::uint32_t after = list_word_.load(std::memory_order_relaxed);
    if (((before ^ after) & ~ListWord::kContended) != 0) return nullptr;
    return tail;
  }
  // Finds the block numbered `block_number` (it is numbered already: see
  // provisioning.h), waiting briefly for a lock holder (kWaitPolicy.open_block), then
  // under the lock: a block past the senders' block becomes the senders'
  // block. If it were not numbered, the list would be extended here as a
  // fallback that ends the process when an allocation fails.
  LEANCHAN_API BlockHeader* open_block(std::uint64_t block_number,
                                       const BlockLayout& layout) noexcept;
  // Provisioning, lock-free: true if the list is unlocked and the last
  // numbered block's tag is `tag` or later (for an empty list the tag two
  // before the receiver's block, which covers no block a permit holder
  // can need: ListLock::unlock).
  bool covers(std::uint32_t tag) const noexcept {
    // seq_cst: the permit holder's half of the Dekker pair with
    // release_if_drained_locked and unnumber_past_head_locked (each takes
    // the lock, then reads the permits in use, and only then lowers
    // last_tag_): if this load sees the word unlocked, a lowering this
    // holder's permit did not stop has finished (its unlock's release is
    // what this acquires) or has not read the permits yet (and then sees
    // this permit, and lowers nothing).
    const std::uint32_t word = list_word_.load(std::memory_order_seq_cst);
    if ((word & ListWord::kLocked) != 0) return false;
    // The word's tag, the senders' block's, is at or before the last
    // numbered tag whenever the word is unlocked: a tag it reaches is
    // covered without a second load (a send that holds nothing claims in
    // the senders' block, or the one after it).
    if (!tag_is_after(tag, ListWord::tag_of(word))) return true;
    // acquire: ordered after the load above; a value from a critical
    // section that began since can only be larger (extend_locked), and
    // extend_locked stores it after the blocks it names are numbered.
    return !tag_is_after(tag, last_tag_.load(std::memory_order_acquire));
  }
  // Provisioning under the lock: numbers blocks (reusing the drained head
  // in place, then spares, then allocating) until the last is numbered
  // `tag`, then moves the senders' block forward to `claim_tag` (the block
  // of the next position to be claimed) if that block is numbered and
  // later. A block that becomes the head gets the want bit if
  // `senders_wait`. False if an allocation fails; it allocates every block
  // it needs before numbering any, so the list is then as it was.
  bool extend_locked(const Locked& held, std::uint32_t tag, std::uint32_t claim_tag,
                     const BlockLayout& layout, bool senders_wait) noexcept;
  // A sender whose check failed (covers): if the list is locked, watches
  // it briefly (kWaitPolicy.open_block) until it is not, and returns true if it
  // then is unlocked (the sender looks again without the lock); false at
  // once if it was not locked (the block is really not numbered), or if
  // the holder kept it through the watch.
  bool watch_while_locked() const noexcept;

  // ---- The receiver -----------------------------------------------------------
  BlockHeader* head() const noexcept {
    // acquire: pairs with the release store of the sender that installed the
    // first block, so the receiver sees that block's header initialised.
    return head_.load(std::memory_order_acquire);
  }
  // Makes head_ the block numbered `block_number` if it exists,
  // retiring fully consumed blocks before it; null if it is not there yet.
  // `keep`: what a retired block may become (a spare, or freed). A new
  // head gets the want bit if the permit word says a sender waits.
  LEANCHAN_API BlockHeader* advance_head(std::uint64_t block_number, const BlockLayout& layout,
                                         const Keep& keep, const PermitWord& permits) noexcept;
  // Under the lock: the receiver took the last slot of block
  // `block_number`. Retires it if a block follows; if it is the last
  // numbered and the policy keeps a block, renumbers it in place as the next block, so
  // that the next sender takes no lock. Returns the head block afterwards
  // (the receiver caches it). The caller moves the returned position to
  // the block's end before unlocking and gives the block's permits back
  // after.
  BlockHeader* finish_block_locked(const Locked& held, std::uint64_t block_number,
                                   const BlockLayout& layout, const Keep& keep,
                                   bool senders_wait) noexcept;
  // Under the lock: how many slots the receiver took in its block (the
  // head) whose permits have not gone back yet: its position there minus
  // `returned`, the position (low 16 bits) up to which they went back.
  // Sets `position` to the receiver's position (low 16 bits). With
  // `raise_want`, the same RMW sets the head's want bit, so that a take
  // after it sees the bit and one before it is counted here. 0 if there
  // is no head, or if the head is a finished block (its permits all went
  // back when it was finished). O(1).
  std::uint32_t owed_locked(const Locked& held, std::uint16_t returned, std::uint32_t slots,
                            bool raise_want, std::uint16_t& position) noexcept;
  // Under the lock: clears the head's want bit (no sender waits any more).
  void clear_want_locked(const Locked& held) noexcept;
  // The receiver found the channel empty; give back the spares beyond
  // the first `kept`, at most what a drained channel keeps
  // (Keep::drained_spares; 0 for shrink_to_fit). Returns how many were freed.
  LEANCHAN_API std::size_t release_spares(const BlockLayout& layout, std::size_t kept) noexcept;
  // Under the lock, the receiver found the channel empty at `index` with
  // blocks numbered past its own (for permits since dropped unused): if
  // nothing is claimed at or after `index` and no permit is in use but the
  // `taken` slots the receiver owes, those blocks become spares again (the
  // head is the last numbered and the senders' block; nothing was
  // claimed in them, so their ready bits are
  // zero) and the spares beyond `kept` are freed. True if it did; adds the
  // blocks freed to `freed`. The Dekker pair with a permit holder is
  // release_if_drained_locked's. O(blocks).
  bool unnumber_past_head_locked(const Locked& held, std::uint64_t index, const BlockLayout& layout,
                                 const PermitWord& permits, std::uint32_t taken, std::size_t kept,
                                 std::size_t& freed) noexcept;
  // Retention::kKeepNone and shrink_to_fit (GiveBack::release_if_drained
  // takes the lock and calls this). `index` is the receiver's next
  // position. Under the lock: if nothing is claimed at or after it and no
  // permit is in use but the `taken` slots the receiver took and has not
  // given back (owed_locked), moves the claim position to the start of
  // the block after index's (PermitWord::jump_position: always a move, so
  // that a sender whose view of the list predates the release fails its
  // CAS on the word), tells senders that permits went back up to there
  // (`returned_low`, its low 16 bits; Provisioning::last_position_bound)
  // and frees every block, spares included; the caller then gives the
  // `taken` permits back before it unlocks. True if it released: `index`
  // is then that boundary; adds the blocks freed to `freed`.
  // O(blocks freed).
  bool release_if_drained_locked(const Locked& held, std::uint64_t& index,
                                 const BlockLayout& layout, PermitWord& permits,
                                 std::uint32_t taken, Atomic<std::uint16_t>& returned_low,
                                 std::size_t& freed) noexcept;
  // The same without the lock (Provisioning::last_position_bound). relaxed:
  // read after an acquire load of the position published after it (see
  // there), which orders it.
  std::uint32_t receiver_tag() const noexcept {
    return rx_block_word_.load(std::memory_order_relaxed) & kTagMask;
  }
  // The tag of the block the receiver reads, as of its last finished block
  // (or release_if_drained). Under the lock.
  std::uint32_t receiver_tag_locked(const Locked&) const noexcept {
    return rx_block_word_.load(std::memory_order_relaxed) & kTagMask;  // relaxed: under the lock
  }
  // True if the chain may hold more spares than a drained channel keeps
  // (Keep::drained_spares), so that release_spares would free one. Set when a
  // retired block makes it so, cleared when the extra spares are freed;
  // a sender taking spares leaves it set (release_spares then frees nothing).
  // Never set under Retention::keep(n >= 2): there the chain holds at most
  // what a drain keeps.
  bool spare_to_free() const noexcept {
    // relaxed: written only under the lock by this (the receiver's) thread.
    return (rx_block_word_.load(std::memory_order_relaxed) & kSpareToFree) != 0;
  }
  // The receiver goes: marks the receiver gone and, under the lock, clears
  // the ready bits of the slots it consumed (positions before `index`), so
  // that the last handle destroys exactly the messages still queued: those
  // whose bit is set. Without a block it takes no lock.
  LEANCHAN_API void forget_consumed(std::uint64_t index, const BlockLayout& layout) noexcept;
  bool receiver_gone() const noexcept {
    // relaxed: a snapshot (Sender::weak_count).
    return (rx_block_word_.load(std::memory_order_relaxed) & kReceiverGone) != 0;
  }

#if defined(LEANCHAN_TEST_POINTS)
  // A new channel whose positions start at block `tag` (test_start_position):
  // the receiver's block, and the empty list's tag two before it.
  void start_at_for_test(std::uint32_t tag) noexcept {
    rx_block_word_.store(tag, std::memory_order_relaxed);
    list_word_.store(((tag - 2) & kTagMask) << 2, std::memory_order_relaxed);
    last_tag_.store((tag - 2) & kTagMask, std::memory_order_relaxed);
  }
#endif

  // ---- The last handle, and memory_usage --------------------------------------
  // Whether the list has a block (Receiver's drop: a hint that spares it
  // the lock; it is compared, never dereferenced). relaxed: the lock decides.
  bool has_blocks() const noexcept {
    return tail_block_.load(std::memory_order_relaxed) != nullptr;
  }
  // The receiver's hint that blocks are numbered past `head`, its cached
  // head (ChannelOps::release_when_empty); null `head`: whether any block
  // is there. relaxed: a hint; the lock decides. `head` is the receiver's
  // own, which no other thread frees.
  bool numbered_past(const BlockHeader* head) const noexcept {
    if (head == nullptr) return has_blocks();
    return last_tag_.load(std::memory_order_relaxed) != head->tag(std::memory_order_relaxed);
  }
  // The last numbered block's tag, for the last handle (no other thread
  // left), which walks head .. last. relaxed: no other thread.
  std::uint32_t last_tag() const noexcept {
    return last_tag_.load(std::memory_order_relaxed);
  }
  // Frees every block. Only the last handle calls it, after destroying the
  // messages still queued.
  LEANCHAN_API void free_all_blocks(const BlockLayout& layout) noexcept;
  // Blocks live now, spare included (takes the lock).
  std::size_t live_blocks() const noexcept;

 private:
  friend class ListLock;  // the lock's bits live in list_word_

  static constexpr std::uint32_t kSpareToFree = std::uint32_t{1} << 30;
  static constexpr std::uint32_t kReceiverGone = std::uint32_t{1} << 31;

  // Null if the allocation fails.
  static BlockHeader* try_new_block(const BlockLayout& layout, std::uint32_t tag) noexcept;
  // Under the lock, for extend_locked: allocates the blocks it needs beyond
  // an in-place reuse and the spares, linked by `next` in `fresh`; false
  // (none kept) if an allocation fails.
  bool allocate_for_extension(const BlockHeader* last, std::uint32_t target,
                              const BlockLayout& layout, BlockHeader*& fresh) const noexcept;
  // Under the lock: a fully consumed block, which no sender can hold (none
  // has an unconsumed slot in it), becomes block `tag` (with `want`, the
  // want bit or 0) in place: its ready bits are zeroed, then its number
  // stored with release, which also zeroes its consumed count; the
  // receiver reads `number` (acquire) before `ready`, and senders reach it
  // only through the unlock. extend_locked's reuse (Retention::kKeepNone)
  // and finish_block_locked's (the other policies).
  static void renumber_in_place(BlockHeader* block, std::uint32_t tag,
                                std::uint32_t want) noexcept {
    block->ready.store(0, std::memory_order_relaxed);
    block->number.store(tag | want, std::memory_order_release);
  }
  static void delete_block(BlockHeader* block, const BlockLayout& layout) noexcept;
  // Frees `first` and every block its `next` links reach; returns how many.
  static std::size_t delete_chain(BlockHeader* first, const BlockLayout& layout) noexcept;
  void retire_head_locked(const Locked& held, const BlockLayout& layout, const Keep& keep,
                          bool senders_wait) noexcept;
  std::size_t free_spares_locked(const Locked& held, const BlockLayout& layout,
                                 std::size_t kept) noexcept;
  std::size_t spares_locked(const Locked& held) const noexcept;
  std::size_t live_blocks_locked(const Locked& held) const noexcept;
  std::size_t numbered_blocks_locked(const Locked& held) const noexcept;  // head .. last
  // Under the lock: the last numbered block (null for an empty list),
  // found from the senders' block: O(blocks numbered past it).
  BlockHeader* last_block_locked(const Locked& held) const noexcept;
  // The explorer's check that the senders' block is numbered (it lies in
  // head .. last); if not, reports the violation and puts it on the head
  // so that the schedule can end. Empty and inline in every other build,
  // so that the lock holders that call it pay nothing there.
#if defined(LEANCHAN_EXPLORE)
  void check_senders_block_locked() const noexcept;
#else
  void check_senders_block_locked() const noexcept {}
#endif
  // Under the lock: makes the numbered block tagged `tag` the senders'
  // block if it lies after the current one, walking from it; returns it
  // (the current one if `tag` is not after it).
  BlockHeader* advance_senders_block_locked(const Locked& held, std::uint32_t tag) noexcept;
  // Under the lock: sets the last numbered tag. release: covers() reads it
  // without the lock (acquire), after the blocks it names are numbered.
  void set_last_tag_locked(const Locked&, std::uint32_t tag) noexcept {
    last_tag_.store(tag, std::memory_order_release);
  }
  // An empty list's tag: two before the receiver's block, which covers no
  // block a sender can need (ListLock::unlock writes it into the word).
  std::uint32_t empty_tag_locked(const Locked&) const noexcept {
    return ((rx_block_word_.load(std::memory_order_relaxed) & kTagMask) - 2) & kTagMask;
  }

  Atomic<BlockHeader*> tail_block_{nullptr};
  // An empty list: the tag two before block 0 (see ListLock::unlock).
  mutable Atomic<std::uint32_t> list_word_{(kTagMask - 1) << 2};
  Atomic<std::uint32_t> rx_block_word_{0};
  Atomic<BlockHeader*> head_{nullptr};
  Atomic<std::uint32_t> last_tag_{kTagMask - 1};
};

// 28 bytes of fields: ChannelState places the next part in the 4 bytes of
// padding that follow them ([[no_unique_address]]).
static_assert(sizeof(BlockList) == 32, "leanchan: the block list is two words and three halves");

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_BLOCK_LIST_H_
