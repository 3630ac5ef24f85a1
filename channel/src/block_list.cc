// SPDX-License-Identifier: MIT
// The block list (leanchan/internal/block_list.h): the senders' seqlock,
// numbering and opening blocks for senders, retiring and recycling them for
// the receiver (docs/design.md "Sending", "Receiving" and "Recycling").
#include "leanchan/internal/block_list.h"

#include <new>
#include <utility>

#include "leanchan/internal/atomic.h"
#include "leanchan/internal/contract.h"
#include "leanchan/internal/test_point.h"
#include "leanchan/internal/wait_policy.h"

namespace leanchan::internal {

BlockHeader* BlockList::try_new_block(const BlockLayout& layout, std::uint32_t tag) noexcept {
  void* memory = nullptr;
  if (layout.resource != nullptr) {
    try {
      memory = layout.resource->allocate(layout.bytes, layout.alignment);
    } catch (...) {
      memory = nullptr;  // the resource's failure, handled as operator new's
    }
  } else if (layout.alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    memory = ::operator new(layout.bytes, std::align_val_t(layout.alignment), std::nothrow);
  } else {
    memory = ::operator new(layout.bytes, std::nothrow);
  }
  if (memory == nullptr) return nullptr;
  auto* block = ::new (memory) BlockHeader();
  block->number.store(tag, std::memory_order_relaxed);
  return block;
}

void BlockList::delete_block(BlockHeader* block, const BlockLayout& layout) noexcept {
  block->~BlockHeader();
  if (layout.resource != nullptr) {
    layout.resource->deallocate(block, layout.bytes, layout.alignment);
  } else if (layout.alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    ::operator delete(block, layout.bytes, std::align_val_t(layout.alignment));
  } else {
    ::operator delete(block, layout.bytes);
  }
}

std::size_t BlockList::delete_chain(BlockHeader* first, const BlockLayout& layout) noexcept {
  std::size_t freed = 0;
  for (; first != nullptr; ++freed) delete_block(std::exchange(first, first->next), layout);
  return freed;
}

std::size_t BlockList::live_blocks_locked(const Locked& held) const noexcept {
  return numbered_blocks_locked(held) + spares_locked(held);
}

std::size_t BlockList::numbered_blocks_locked(const Locked&) const noexcept {
  const BlockHeader* head = head_.load(std::memory_order_relaxed);
  if (head == nullptr) return 0;
  // relaxed: under the lock
  return std::size_t{tag_distance(last_tag_.load(std::memory_order_relaxed),
                                  head->tag(std::memory_order_relaxed))} +
         1;
}

#if defined(LEANCHAN_EXPLORE)
void BlockList::check_senders_block_locked() const noexcept {
  const BlockHeader* tail = tail_block_.load(std::memory_order_relaxed);
  const BlockHeader* head = head_.load(std::memory_order_relaxed);
  if (tail == nullptr || head == nullptr) return;
  const std::uint32_t tag = tail->tag(std::memory_order_relaxed);
  if (tag_is_after(head->tag(std::memory_order_relaxed), tag) ||
      tag_is_after(tag, last_tag_.load(std::memory_order_relaxed))) {
    explore::report_violation("the senders' block is not a numbered block");
    const_cast<BlockList*>(this)->tail_block_.store(const_cast<BlockHeader*>(head),
                                                    std::memory_order_relaxed);
  }
}
#endif

BlockHeader* BlockList::last_block_locked(const Locked&) const noexcept {
  check_senders_block_locked();
  BlockHeader* block = tail_block_.load(std::memory_order_relaxed);  // relaxed: under the lock
  if (block == nullptr) return nullptr;
  const std::uint32_t last = last_tag_.load(std::memory_order_relaxed);
  for (std::uint32_t steps = tag_distance(last, block->tag(std::memory_order_relaxed)); steps != 0;
       --steps) {
    block = block->next;
  }
  return block;
}

BlockHeader* BlockList::advance_senders_block_locked(const Locked&, std::uint32_t tag) noexcept {
  check_senders_block_locked();
  BlockHeader* block = tail_block_.load(std::memory_order_relaxed);  // relaxed: under the lock
  if (block == nullptr) return nullptr;
  const std::uint32_t from = block->tag(std::memory_order_relaxed);
  if (!tag_is_after(tag, from) || tag_is_after(tag, last_tag_.load(std::memory_order_relaxed))) {
    return block;
  }
  for (std::uint32_t steps = tag_distance(tag, from); steps != 0; --steps) {
    block = block->next;
    LEANCHAN_TEST_POINT(kSendersBlockStepped);
  }
  // release: see tail_if_numbered; the unlock publishes the new tag.
  tail_block_.store(block, std::memory_order_release);
  return block;
}

BlockHeader* BlockList::open_block(std::uint64_t block_number, const BlockLayout& layout) noexcept {
  // While another thread holds the lock (usually a sender numbering
  // blocks, or the receiver finishing one), wait briefly for it and retry
  // the lock-free read: queueing on the lock would put every sender of the
  // block to sleep, one futex round trip each.
  const std::uint32_t target = block_tag(block_number);
  BlockHeader* found = nullptr;
  (void)watch(kWaitPolicy.open_block, [&] {
    found = tail_if_numbered(target);
    return found != nullptr ||
           (list_word_.load(std::memory_order_relaxed) & ListWord::kLocked) == 0;
  });
  if (found != nullptr) return found;
  const Locked held = lock();
  if (tail_block_.load(std::memory_order_relaxed) == nullptr ||
      tag_is_after(target, last_tag_.load(std::memory_order_relaxed))) {
    // Unreachable while provisioning holds: the claimed position's block
    // was numbered before the claim. The position cannot be given back (the
    // receiver would wait for it forever), so number it now, or end.
    LEANCHAN_EXPLORE_CHECK(false, "a sender claimed a position whose block was not numbered");
    if (!extend_locked(held, target, target, layout, false)) {
      contract_violation("internal error: no block for a claimed position");
    }
  }
  // Usually the target is the senders' block or lies past it (provided
  // for permits held: it becomes the senders' block, so that the sends
  // after this one find it by the seqlock read). Before it (another sender
  // opened a later block first) it lies between head and the senders'
  // block, kept there by its unconsumed slot: a walk from the head.
  BlockHeader* block = advance_senders_block_locked(held, target);
  if (block->tag(std::memory_order_relaxed) != target) {
    block = head_.load(std::memory_order_relaxed);
    while (block->tag(std::memory_order_relaxed) != target) {
      block = block->next;
      LEANCHAN_TEST_POINT(kBlockWalked);
    }
  }
  unlock(held);
  return block;
}

bool BlockList::watch_while_locked() const noexcept {
  // relaxed: a hint; the caller's next check (covers) is the seq_cst look.
  const auto unlocked = [this] {
    return (list_word_.load(std::memory_order_relaxed) & ListWord::kLocked) == 0;
  };
  if (unlocked()) return false;
  return watch(kWaitPolicy.open_block, unlocked);
}

bool BlockList::extend_locked(const Locked& held, std::uint32_t target, std::uint32_t claim_tag,
                              const BlockLayout& layout, bool senders_wait) noexcept {
  // A block that becomes the head here (the first block of an empty list,
  // or the drained head reused in place) is the one the receiver reads
  // next: it carries the want bit while a sender waits.
  const std::uint32_t want = senders_wait ? kWantBit : 0;
  BlockHeader* last = last_block_locked(held);
  // What the extension must allocate, first: a refusal then leaves the
  // list as it was, nothing numbered and nothing held (extended part way, a
  // batch's blocks stayed charged until the receiver found it empty).
  BlockHeader* fresh = nullptr;
  if (!allocate_for_extension(last, target, layout, fresh)) return false;
  const auto take_fresh = [&fresh]() noexcept {
    BlockHeader* block = fresh;
    if (block == nullptr) contract_violation("internal error: too few blocks to extend the list");
    fresh = block->next;
    block->next = nullptr;
    return block;
  };
  if (last == nullptr) {
    // The list is empty: at creation, or after release_if_drained freed
    // every block. Every position lies at or after the receiver's block
    // (rx_block_word_'s tag: 0 at creation), so the list restarts there.
    last = take_fresh();
    // relaxed: published with head_
    last->number.store((rx_block_word_.load(std::memory_order_relaxed) & kTagMask) | want,
                       std::memory_order_relaxed);
    // release: see head(); the receiver may read head_ without the lock.
    head_.store(last, std::memory_order_release);
    tail_block_.store(last, std::memory_order_release);  // release: see tail_if_numbered
  }
  // Extend the list one block at a time until the last reaches the target.
  for (;;) {
    const std::uint32_t last_tag = last->tag(std::memory_order_relaxed);
    if (!tag_is_after(target, last_tag)) {
      // allocate_for_extension counted the steps: every fresh block used.
      if (fresh != nullptr) contract_violation("internal error: unused block after extending");
      break;
    }
    const std::uint32_t next_tag = (last_tag + 1) & kTagMask;
    if (last == head_.load(std::memory_order_relaxed) &&
        tag_distance(rx_block_word_.load(std::memory_order_relaxed) & kTagMask, last_tag) == 1) {
      // Reuse in place: the only block is fully consumed and kept its
      // number (Retention::kKeepNone with a permit out, or a send numbering
      // its block without a permit just after that permit went back:
      // Provisioning::provide_next; under the other policies the receiver
      // renumbered it when it finished it). Before any spare, as
      // finish_block_locked's reuse. It is the senders' block too.
      renumber_in_place(last, next_tag, want);
      continue;
    }
    BlockHeader* next = last->next;
    if (next != nullptr) {
      // A spare the receiver recycled (its ready bits already zero).
      next->number.store(next_tag, std::memory_order_release);
    } else {
      next = take_fresh();
      next->number.store(next_tag, std::memory_order_relaxed);  // published by the unlock
      last->next = next;
    }
    last = next;
  }
  set_last_tag_locked(held, last->tag(std::memory_order_relaxed));
  (void)advance_senders_block_locked(held, claim_tag);
  return true;
}

bool BlockList::allocate_for_extension(const BlockHeader* last, std::uint32_t target,
                                       const BlockLayout& layout,
                                       BlockHeader*& fresh) const noexcept {
  // The blocks extend_locked numbers, and of them those it has without
  // allocating: the drained head reused in place (only as its first step),
  // then the spares after the last.
  const std::uint32_t rx_tag = rx_block_word_.load(std::memory_order_relaxed) & kTagMask;
  std::uint32_t steps = 1;
  std::uint32_t have = 0;
  if (last == nullptr) {
    if (tag_is_after(target, rx_tag)) steps += tag_distance(target, rx_tag);
  } else {
    const std::uint32_t last_tag = last->tag(std::memory_order_relaxed);
    if (!tag_is_after(target, last_tag)) return true;
    steps = tag_distance(target, last_tag);
    if (last == head_.load(std::memory_order_relaxed) && tag_distance(rx_tag, last_tag) == 1)
      ++have;
    for (const BlockHeader* spare = last->next; spare != nullptr && have < steps;
         spare = spare->next) {
      ++have;
    }
  }
  for (; have < steps; ++have) {
    BlockHeader* block = try_new_block(layout, 0);  // numbered when used
    if (block == nullptr) {
      (void)delete_chain(std::exchange(fresh, nullptr), layout);
      return false;
    }
    block->next = fresh;
    fresh = block;
  }
  return true;
}

std::size_t BlockList::spares_locked(const Locked& held) const noexcept {
  const BlockHeader* last = last_block_locked(held);
  std::size_t spares = 0;
  for (const BlockHeader* spare = last == nullptr ? nullptr : last->next; spare != nullptr;
       spare = spare->next) {
    ++spares;
  }
  return spares;
}

void BlockList::retire_head_locked(const Locked& held, const BlockLayout& layout, const Keep& keep,
                                   bool senders_wait) noexcept {
  // Recycling: the fully consumed head leaves the list; it joins the spares
  // behind the last numbered block (at the end of their chain) while there
  // are fewer than keep.spares and the bound allows (never when the bound
  // is 0: Retention::kKeepNone), else it is freed. If it was the senders'
  // block, its successor becomes the senders' block (no sender can still
  // need it: none has an unconsumed slot in it).
  BlockHeader* old = head_.load(std::memory_order_relaxed);
  // relaxed: only the receiver calls this, and only the receiver reads
  // head_ without the lock; other readers hold the lock.
  head_.store(old->next, std::memory_order_relaxed);
  if (tail_block_.load(std::memory_order_relaxed) == old) {
    // release: see tail_if_numbered; the unlock publishes the new tag.
    tail_block_.store(old->next, std::memory_order_release);
  }
  // The new head is the block the receiver reads next (a retired head
  // always has a successor): it carries the want bit while a sender waits.
  // relaxed RMW: under the lock; the receiver's add may race it.
  if (senders_wait) old->next->number.fetch_or(kWantBit, std::memory_order_relaxed);
  BlockHeader* last = last_block_locked(held);
  std::size_t spares = 0;
  while (last->next != nullptr) {
    last = last->next;
    ++spares;
  }
  // Live blocks if `old` stays: the numbered ones after it, the spares the
  // walk above counted, and `old` itself.
  if (spares < keep.spares && numbered_blocks_locked(held) + spares + 1 <= keep.block_bound) {
    old->next = nullptr;
    old->ready.store(0, std::memory_order_relaxed);  // relaxed: published by the unlock
    last->next = old;
    if (spares + 1 > keep.drained_spares) {
      rx_block_word_.fetch_or(kSpareToFree, std::memory_order_relaxed);  // relaxed: under the lock
    }
  } else {
    delete_block(old, layout);
  }
}

std::size_t BlockList::free_spares_locked(const Locked& held, const BlockLayout& layout,
                                          std::size_t kept) noexcept {
  BlockHeader* last = last_block_locked(held);
  std::size_t freed = 0;
  if (last != nullptr) {
    BlockHeader* last_kept = last;  // the spares from last_kept->next on go
    for (std::size_t i = 0; i < kept && last_kept->next != nullptr; ++i)
      last_kept = last_kept->next;
    freed = delete_chain(std::exchange(last_kept->next, nullptr), layout);
  }
  // Every caller keeps at most what a drain keeps: nothing is left to free.
  rx_block_word_.fetch_and(~kSpareToFree, std::memory_order_relaxed);  // relaxed: under the lock
  return freed;
}

BlockHeader* BlockList::advance_head(std::uint64_t block_number, const BlockLayout& layout,
                                     const Keep& keep, const PermitWord& permits) noexcept {
  const Locked held = lock();
  const bool senders_wait = permits.senders_wait();
  const std::uint32_t target = block_tag(block_number);
  for (;;) {
    BlockHeader* head = head_.load(std::memory_order_relaxed);
    if (head == nullptr ||
        head->tag(std::memory_order_relaxed) == last_tag_.load(std::memory_order_relaxed) ||
        !tag_is_after(target, head->tag(std::memory_order_relaxed))) {
      break;
    }
    // behind the receiver's index: fully consumed (and its permits given
    // back by finish_block)
    retire_head_locked(held, layout, keep, senders_wait);
  }
  BlockHeader* block = head_.load(std::memory_order_relaxed);
  if (block != nullptr && block->tag(std::memory_order_relaxed) != target) block = nullptr;
  unlock(held);
  return block;
}

BlockHeader* BlockList::finish_block_locked(const Locked& held, std::uint64_t block_number,
                                            const BlockLayout& layout, const Keep& keep,
                                            bool senders_wait) noexcept {
  // The caller then moves the returned position to the block's end before
  // unlocking, and gives the permits back after. Publishing the index under
  // the lock is what lets a sender reuse this block in place
  // (extend_locked): the lock orders
  // the receiver's moves out of the block before the sender's writes into it.
  // relaxed: read only under the lock.
  rx_block_word_.store(
      (rx_block_word_.load(std::memory_order_relaxed) & kSpareToFree) | block_tag(block_number + 1),
      std::memory_order_relaxed);
  // A sender may have reused the head in place between the receiver's last
  // take and this lock (extend_locked); then there is nothing to retire.
  // Drained to the end of the list (the head is the last numbered): it stays; the
  // spares beyond keep.drained_spares stay too until the receiver finds
  // the channel empty (release_spares, docs/design.md invariant 7), since
  // a receiver that keeps up gets here at the end of many blocks and its
  // sender would allocate again at once.
  BlockHeader* head = head_.load(std::memory_order_relaxed);
  if (head->tag(std::memory_order_relaxed) != block_tag(block_number)) return head;
  if (block_tag(block_number) != last_tag_.load(std::memory_order_relaxed)) {
    retire_head_locked(held, layout, keep, senders_wait);
  } else if (keep.block_bound != 0) {
    // The policy keeps a block: the receiver renumbers the drained one in
    // place as the next block now, in the critical section it holds
    // anyway, so the next sender finds it numbered (covers, then
    // tail_if_numbered after this unlock) and takes no lock of its own:
    // one lock per block, not two (every message at b = 1). It stays the
    // head, so it carries the want bit while a sender waits.
    // Retention::kKeepNone keeps nothing: its block waits for
    // release_if_drained (GiveBack::finish_block), as before.
    std::uint32_t want = senders_wait ? kWantBit : 0;
    // The head is the last numbered block, so the senders' block too.
    renumber_in_place(head, block_tag(block_number + 1), want);
    set_last_tag_locked(held, block_tag(block_number + 1));
  }
  return head_.load(std::memory_order_relaxed);
}

std::size_t BlockList::release_spares(const BlockLayout& layout, std::size_t kept) noexcept {
  // Also shrink_to_fit's (kept = 0).
  const Locked held = lock();
  const std::size_t freed = free_spares_locked(held, layout, kept);
  unlock(held);
  return freed;
}

std::uint32_t BlockList::owed_locked(const Locked&, std::uint16_t returned, std::uint32_t slots,
                                     bool raise_want, std::uint16_t& position) noexcept {
  BlockHeader* head = head_.load(std::memory_order_relaxed);  // relaxed: under the lock
  if (head == nullptr) {
    position = returned;
    return 0;
  }
  // acquire: pairs with the receiver's release add (ChannelOps::try_take),
  // so the claims of the positions it took happen before this holder
  // publishes them as given back (last_position_bound reads the claim
  // counter after the published position). A relaxed RMW would do for the
  // want bit alone: the RMWs on this word are totally ordered.
  const std::uint32_t word = raise_want ? head->number.fetch_or(kWantBit, std::memory_order_acquire)
                                        : head->number.load(std::memory_order_acquire);
  const std::uint32_t taken = BlockNumber::taken(word);
  position = static_cast<std::uint16_t>(BlockNumber::tag(word) * slots + taken);
  const std::uint32_t owed = static_cast<std::uint16_t>(position - returned);
  // A finished head (kept under Retention::kKeepNone for reuse in place)
  // lies behind `returned`: the difference wraps, and nothing is owed. A
  // head the receiver renumbered in place owes nothing either (taken 0 at
  // `returned`). Otherwise owed < slots.
  if (owed >= slots) {
    position = returned;
    return 0;
  }
  return owed;
}

void BlockList::clear_want_locked(const Locked&) noexcept {
  BlockHeader* head = head_.load(std::memory_order_relaxed);  // relaxed: under the lock
  // relaxed RMW: the receiver's add may race it; nothing else rides on it.
  if (head != nullptr) head->number.fetch_and(~kWantBit, std::memory_order_relaxed);
}

bool BlockList::unnumber_past_head_locked(const Locked& held, std::uint64_t index,
                                          const BlockLayout& layout, const PermitWord& permits,
                                          std::uint32_t taken, std::size_t kept,
                                          std::size_t& freed) noexcept {
  BlockHeader* head = head_.load(std::memory_order_relaxed);  // relaxed: under the lock
  if (head == nullptr ||
      head->tag(std::memory_order_relaxed) == last_tag_.load(std::memory_order_relaxed)) {
    return false;
  }
  // As release_if_drained_locked: a seq_cst RMW of the locked list word,
  // then the permits in use (a Dekker pair with a holder's covers()).
  (void)list_word_.fetch_or(0, std::memory_order_seq_cst);
  const PermitWord::Word word = permits.snapshot();
  if (PermitWord::position_of(word) != index || PermitWord::used_of(word) > taken) return false;
  // relaxed: published by the unlock, which writes the head's tag into the
  // list word (a sender that needs the next block numbers a spare).
  tail_block_.store(head, std::memory_order_relaxed);
  // After the permits were read: see covers().
  set_last_tag_locked(held, head->tag(std::memory_order_relaxed));
  freed += free_spares_locked(held, layout, kept);
  return true;
}

bool BlockList::release_if_drained_locked(const Locked& held, std::uint64_t& index,
                                          const BlockLayout& layout, PermitWord& permits,
                                          std::uint32_t taken, Atomic<std::uint16_t>& returned_low,
                                          std::size_t& freed) noexcept {
  // The permit word, read (by jump_position's CAS) after a seq_cst RMW of
  // the (locked) list word that changes nothing: the lock's own RMW is
  // only acquire, which does not order the access after it on weak
  // hardware. (A seq_cst fence
  // would do; ThreadSanitizer does not model fences.) A Dekker pair with a
  // permit holder's acquiring RMW on the permit word and its seq_cst load of the
  // list word (covers): if this load misses the holder's permit, this RMW
  // precedes the holder's load in the single total order, so that load
  // sees this locked word or a later one (the empty list that follows, or
  // a provider's), and the holder numbers its blocks itself under the
  // lock. A permit this CAS sees may claim in the blocks it counted on:
  // keep them all.
  (void)list_word_.fetch_or(0, std::memory_order_seq_cst);
  // No permit is in use (but the receiver's `taken`, which the caller gives
  // back after this position) and nothing is claimed past `index`: one CAS
  // checks both and moves the claim position to the next block boundary,
  // so no permit can be taken in between. A permit holder this missed
  // provides under the lock. The position always moves (the boundary is
  // after `index` even when `index` is one): a fast send
  // (ChannelOps::try_push_fast) that checked the blocks before this lock
  // then fails its CAS on the word and looks again.
  const std::uint64_t slots = layout.slots;
  std::uint64_t boundary = Positions::next_boundary(index, slots);
  if (!permits.jump_position(index, taken, boundary)) return false;
  // seq_cst: a permit holder this critical section did not count (it
  // acquired after the CAS above) reads this position or
  // a later one (its seq_cst load comes later in the single total order),
  // and then a claim position at least this large; if it read the position
  // before this store instead, the list word it reads next is locked, or
  // the empty list's (which covers no block its stale view can name), or
  // one written by a sender that counted its permit with a fresh view.
  returned_low.store(static_cast<std::uint16_t>(boundary), std::memory_order_seq_cst);
  // relaxed: read and written under the lock (and the receiver's own reads).
  const std::uint32_t rx_word = rx_block_word_.load(std::memory_order_relaxed);
  rx_block_word_.store((rx_word & kReceiverGone) | block_tag(boundary / slots),
                       std::memory_order_relaxed);
  // The numbered blocks, then the spares.
  freed += delete_chain(head_.load(std::memory_order_relaxed), layout);
  head_.store(nullptr, std::memory_order_relaxed);        // relaxed: see retire_head_locked
  tail_block_.store(nullptr, std::memory_order_relaxed);  // published by the unlock
  set_last_tag_locked(held, empty_tag_locked(held));      // after the permits: see covers()
  index = boundary;
  return true;
}

void BlockList::forget_consumed(std::uint64_t index, const BlockLayout& layout) noexcept {
  // relaxed: only read as a snapshot (Sender::weak_count); an RMW, so it
  // needs no lock against the receiver's own stores (the word's only
  // other writer is this thread).
  rx_block_word_.fetch_or(kReceiverGone, std::memory_order_relaxed);
  // No block: nothing the receiver took is left to forget (a channel that
  // never held a message, or one whose blocks all went at a drain). A block
  // a sender installs after this load holds no consumed slot, so its set
  // bits are all queued messages. relaxed: not dereferenced.
  if (head_.load(std::memory_order_relaxed) == nullptr) return;
  const Locked held = lock();
  const std::uint32_t current = block_tag(index / layout.slots);
  const BlockHeader* last = last_block_locked(held);
  for (BlockHeader* block = head_.load(std::memory_order_relaxed); block != nullptr;
       block = block == last ? nullptr : block->next) {
    const std::uint32_t tag = block->tag(std::memory_order_relaxed);
    if (tag_is_after(current, tag)) {
      block->ready.store(0, std::memory_order_relaxed);  // fully consumed
    } else if (tag == current) {
      // relaxed RMW: senders may set other bits of this word concurrently.
      const auto consumed = (std::uint32_t{1} << (index % layout.slots)) - 1;
      block->ready.fetch_and(~consumed, std::memory_order_relaxed);
    } else {
      break;
    }
  }
  unlock(held);
}

std::size_t BlockList::live_blocks() const noexcept {
  const Locked held = lock();
  const std::size_t blocks = live_blocks_locked(held);
  unlock(held);
  return blocks;
}

void BlockList::free_all_blocks(const BlockLayout& layout) noexcept {
  (void)delete_chain(head_.load(std::memory_order_relaxed), layout);
  head_.store(nullptr, std::memory_order_relaxed);
  tail_block_.store(nullptr, std::memory_order_relaxed);
}

}  // namespace leanchan::internal
