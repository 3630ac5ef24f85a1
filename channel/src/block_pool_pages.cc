// SPDX-License-Identifier: MIT
// BlockPool's size-class pages: opening a page, taking and freeing slots
// with one CAS on the page's word, closing the page its last free empties,
// and trim(). The states and invariants I1..I7 are in block_pool_state.h.
#include <algorithm>
#include <bit>
#include <cassert>
#include <mutex>
#include <new>

#include "block_pool_state.h"
#include "leanchan/internal/test_point.h"

namespace leanchan::internal::pool {
namespace {

namespace os = internal::pool_os;

std::uint64_t slot_mask(std::size_t slots) noexcept {
  return (std::uint64_t{1} << slots) - 1;
}

std::size_t class_index(std::size_t class_bytes) noexcept {
  return (class_bytes - BlockPool::kSmallestClass) / BlockPool::kClassStep;
}

// Maps a chunk, keeps its first page for the caller and pushes the rest on
// the free-page stack. Throws std::bad_alloc if nothing can be mapped.
std::uint32_t map_chunk(State& s) {
  void* memory = os::map(kChunkBytes, kChunkBytes);
  if (memory == nullptr) throw std::bad_alloc();
  // relaxed: only claims an index; the entry's store publishes the chunk.
  const std::size_t index = s.chunk_count.fetch_add(1, std::memory_order_relaxed);
  if (index >= kMaxChunks) {
    os::unmap(memory, kChunkBytes, kChunkBytes);
    throw std::bad_alloc();
  }
  auto* chunk = ::new (memory) ChunkHeader();
  chunk->index = static_cast<std::uint32_t>(index);
  // release: trim() finds the chunk through this entry alone (acquire),
  // with its descriptors constructed; the chunk's ids reach other threads
  // through the push below (release) or pointers the caller hands on.
  s.chunks[index].store(chunk, std::memory_order_release);
  s.mapped_bytes.fetch_add(kChunkBytes, std::memory_order_relaxed);  // relaxed: a statistic
  const std::uint32_t base = chunk->index << kPageShift;
  if (s.first_page + 1 < s.pages_per_chunk) {
    // Link first+1 .. last in order (the lowest is popped first), then one push.
    for (std::uint32_t p = s.first_page + 1; p + 1 < s.pages_per_chunk; ++p) {
      chunk->pages[p].next.store(base | (p + 1), std::memory_order_relaxed);  // published below
    }
    s.free_pages.push_chain(base | (s.first_page + 1), base | (s.pages_per_chunk - 1), s.descs());
  }
  return base | s.first_page;
}

// A Closed page that is not listed, whose W is `word`, goes on its stack
// (I1, I5).
void push_closed(State& s, std::uint32_t id, std::uint64_t word) noexcept {
  (((word & kKept) != 0) ? s.kept_pages : s.free_pages).push(id, s.descs());
}

// Counts `delta` (+1, -1) pages Closed and listed of class index `c` (I7).
// relaxed (both): the counts choose whether to sweep, and which classes;
// the pages themselves are handed over by their words and the stacks. A
// count updated by a thread that happens before the reader's look is seen
// (coherence); one racing it may be missed, and the page it counts then
// waits for the next look, as a page emptied after the look would.
void count_stranded(State& s, std::size_t c, std::int64_t delta) noexcept {
  s.stranded_in[c].fetch_add(delta, std::memory_order_relaxed);
  s.stranded.fetch_add(delta, std::memory_order_relaxed);
}

// The listing holder's exit from a Closing or Closed page (I5) of class
// index `c`; `word` is the value it read.
void unlist_closed(State& s, PageDesc& d, std::uint32_t id, std::uint64_t word,
                   std::size_t c) noexcept {
  // acq_rel: acquire (Closed) orders this push after the closer's
  // give_back, and the -1 below after the closer's +1 (I7); release
  // (Closing) orders this holder's reads before the closer's push.
  // relaxed on failure: reread, retried.
  while (!d.word.compare_exchange_weak(word, word & ~kListed, std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
  }
  if ((word & kClosed) != 0) {
    count_stranded(s, c, -1);
    push_closed(s, id, word);
  }
}

// A Closed page, kept (still resident: no page fault) before given back.
std::uint32_t pop_closed(State& s) noexcept {
  const std::uint32_t id = s.kept_pages.pop(s.descs());
  return id != kNoPage ? id : s.free_pages.pop(s.descs());
}

// True if a page may be Closed and listed (I7). relaxed: see count_stranded.
bool any_stranded(State& s) noexcept {
  return s.stranded.load(std::memory_order_relaxed) > 0;
}

// True if no sweep debt is outstanding: a sweep may run. relaxed: the debt
// only chooses whether to sweep, never hands a page over (the stacks and
// the words do); a stale look lets a sweep run, or wait, a few pages
// faulted in early or late. A sweep's own look is under grow_mutex, after
// the previous sweep's store (the mutex orders them), so only payments
// racing it can be missed.
bool sweep_paid(State& s) noexcept {
  return s.sweep_debt.load(std::memory_order_relaxed) <= 0;
}

// A page faulted in (opened from the free-page stack or a new chunk) pays
// kSweepPay of the sweep debt, if any. relaxed (load and CAS): as
// sweep_paid; the CAS only keeps concurrent payments from being lost and
// the debt from falling below 0.
void pay_sweep_debt(State& s) noexcept {
  std::int64_t debt = s.sweep_debt.load(std::memory_order_relaxed);
  while (debt > 0 && !s.sweep_debt.compare_exchange_weak(
                         debt, std::max<std::int64_t>(debt - kSweepPay, 0),
                         std::memory_order_relaxed, std::memory_order_relaxed)) {
  }
}

// Recycles the pages that emptied while listed (I5, I7) onto the kept-page
// and free-page stacks: for each class stranded_in counts, takes each of its
// partial stacks whole (this thread then holds every listing on it, I1),
// unlists the Closing and Closed pages as a popper would, and pushes the
// open ones back, in order, in one push. Walks only the stacks of those
// classes, and the pages listed on them. Does nothing while no page may be
// stranded or a sweep debt is outstanding; leaves as its own debt the pages
// it walked beyond kSweepPay per page it unlisted (block_pool.h: the
// sweeps' cost). True if it unlisted any. An allocation racing the sweep
// may find a stack empty meanwhile and open a page it would otherwise have
// found: a page more, never a slot twice. Under grow_mutex.
bool sweep_stranded(State& s) noexcept {
  if (!any_stranded(s) || !sweep_paid(s)) return false;
  std::int64_t walked = 0;
  std::int64_t unlisted = 0;
  for (std::size_t c = 0; c < kClasses; ++c) {
    // relaxed: see count_stranded.
    if (s.stranded_in[c].load(std::memory_order_relaxed) <= 0) continue;
    for (Shard& shard : s.shards) {
      PageStack& stack = shard.partial[c];
      std::uint32_t id = stack.take_all();
      std::uint32_t first = kNoPage;
      std::uint32_t last = kNoPage;
      while (id != kNoPage) {
        LEANCHAN_TEST_POINT(kPoolSweepStepped);
        ++walked;
        PageDesc& d = s.desc(id);
        // relaxed: owned (take_all acquired the chain's links).
        const std::uint32_t next = d.next.load(std::memory_order_relaxed);
        // relaxed: unlist_closed's CAS decides; a page read open stays
        // listed, whatever frees race this look.
        const std::uint64_t word = d.word.load(std::memory_order_relaxed);
        if ((word & (kClosing | kClosed)) != 0) {
          unlist_closed(s, d, id, word, c);
          ++unlisted;
        } else {
          // relaxed: published by push_chain's release CAS.
          if (last != kNoPage) s.desc(last).next.store(id, std::memory_order_relaxed);
          if (first == kNoPage) first = id;
          last = id;
        }
        id = next;
      }
      if (first != kNoPage) stack.push_chain(first, last, s.descs());
    }
  }
  // relaxed: see sweep_paid. The debt was 0 at the look above and stayed 0
  // until this store (only a sweep raises it, and a payment changes only a
  // debt above 0), so the store overwrites no payment.
  s.sweep_debt.store(std::max<std::int64_t>(walked - kSweepPay * unlisted, 0),
                     std::memory_order_relaxed);
  return unlisted != 0;
}

// A Closed page after a sweep of the stranded pages' classes (none if a
// sweep debt is outstanding), a kept one first; kNoPage if another thread
// holds grow_mutex (it sweeps, or maps a chunk after its own sweep: this
// thread does not wait for it), or if none is found (the stranded pages
// were popped meanwhile).
std::uint32_t sweep_then_pop(State& s) noexcept {
  std::unique_lock lock(s.grow_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return kNoPage;
  sweep_stranded(s);
  return pop_closed(s);
}

// A Closed page when none is on the kept-page or free-page stack: one
// recycled by a sweep of the stranded pages' classes (unless a sweep debt
// is outstanding), else a new chunk's. Under grow_mutex, so that one thread
// sweeps or maps at a time and the others, waiting, then find its pages
// rather than map chunks of their own while the stacks are taken aside.
std::uint32_t sweep_or_map(State& s) {
  std::lock_guard lock(s.grow_mutex);
  std::uint32_t id = pop_closed(s);
  if (id == kNoPage && sweep_stranded(s)) id = pop_closed(s);
  return id != kNoPage ? id : map_chunk(s);
}

// Opens a page for `class_bytes` with slot 0 taken, lists it on `stack`,
// and returns slot 0. The order (block_pool.h): a kept page (resident: kept
// by choice, or refused by the OS), at no cost; else, if a page may be
// stranded on a partial stack (I7) and no sweep debt is outstanding, a
// sweep of those classes, then a kept page again and a page given back
// (those the sweep recycled on top); else a page given back or never used;
// else (sweep_or_map) a new chunk's. A page faulted in (not kept) pays
// towards the sweep debt.
void* open_page(State& s, std::size_t class_bytes, PageStack& stack) {
  std::uint32_t id = s.kept_pages.pop(s.descs());
  if (id == kNoPage && any_stranded(s) && sweep_paid(s)) id = sweep_then_pop(s);
  if (id == kNoPage) id = s.free_pages.pop(s.descs());
  if (id == kNoPage) id = sweep_or_map(s);
  PageDesc& d = s.desc(id);
  // This thread owns the page now (I1): W is kClosed, maybe kKept.
  // relaxed: the pop (acquire) ordered it; nothing races it.
  if ((d.word.load(std::memory_order_relaxed) & kKept) != 0) {
    s.kept.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a count (I6)
  } else {
    pay_sweep_debt(s);  // given back or never used: faulted in
  }
  // relaxed (both): published by the push below; a freer of slot 0 gets its
  // pointer from this thread, after these stores.
  d.class_bytes.store(static_cast<std::uint32_t>(class_bytes), std::memory_order_relaxed);
  d.word.store((slot_mask(s.slots_for(class_bytes)) & ~std::uint64_t{1}) | kListed,
               std::memory_order_relaxed);
  s.open_pages.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
  stack.push(id, s.descs());                             // slots >= 2: room is left
  return s.page_address(id);
}

// Takes a slot of page `id`, whose listing this thread holds; pushes the
// page back on `stack` if it keeps a free slot, else unlists it. Null if
// the page had no slot (full, or closing / closed).
void* take_slot(State& s, std::uint32_t id, std::size_t class_bytes, PageStack& stack) noexcept {
  PageDesc& d = s.desc(id);
  assert(d.class_bytes.load(std::memory_order_relaxed) == class_bytes);
  const std::uint64_t all = slot_mask(s.slots_for(class_bytes));
  std::uint64_t word = d.word.load(std::memory_order_relaxed);  // relaxed: the CAS decides
  for (;;) {
    if ((word & (kClosing | kClosed)) != 0) {
      unlist_closed(s, d, id, word, class_index(class_bytes));
      return nullptr;
    }
    const std::uint64_t free_slots = word & all;
    if (free_slots == 0) {
      // Full: unlisted; the free that makes it non-full lists it (I4).
      // release: pairs with that free's acquire, which then pushes it.
      if (d.word.compare_exchange_weak(word, word & ~kListed, std::memory_order_release,
                                       std::memory_order_relaxed)) {
        return nullptr;
      }
      continue;
    }
    const int slot = std::countr_zero(free_slots);
    std::uint64_t taken = word & ~(std::uint64_t{1} << slot);
    const bool room = (taken & all) != 0;
    if (!room) taken &= ~kListed;
    // acquire: pairs with the release of the free that freed this slot (and
    // of every free before it on this word), so the previous owner's
    // accesses to the slot happen before the new owner's. release (full
    // page unlisted): as above. relaxed on failure: retried.
    if (d.word.compare_exchange_weak(word, taken, std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
      if (room) stack.push(id, s.descs());
      return s.page_address(id) + static_cast<std::size_t>(slot) * class_bytes;
    }
  }
}

// One more kept page, if the limit allows (I6).
bool reserve_kept(State& s) noexcept {
  std::size_t kept = s.kept.load(std::memory_order_relaxed);
  // relaxed: a count; the page's W carries the page itself.
  while (kept < s.keep_limit &&
         !s.kept.compare_exchange_weak(kept, kept + 1, std::memory_order_relaxed,
                                       std::memory_order_relaxed)) {
  }
  return kept < s.keep_limit;
}

// Ends Closing (I5) of a page of class index `c`: gives the page's memory
// back unless `keep`, then moves W to Closed (keeping kListed) and pushes
// the page if not listed. A page the OS refuses to take back (locked
// memory; always off Linux) stays resident and empty: it is kept, past the
// limit if need be (I6).
void finish_closing(State& s, PageDesc& d, std::uint32_t id, bool keep, std::size_t c) noexcept {
  if (!keep) {
    if (os::give_back(s.page_address(id), s.page)) {
      s.given_back.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
    } else {
      s.kept.fetch_add(1, std::memory_order_relaxed);  // relaxed: a count (I6)
      keep = true;
    }
  }
  // Counted before the RMW that may leave the page stranded (I7). relaxed:
  // while Closing, kListed can only be cleared (by the holder), so a clear
  // bit read here is final; a set one is checked again below.
  const bool listed = (d.word.load(std::memory_order_relaxed) & kListed) != 0;
  if (listed) count_stranded(s, c, 1);
  // acq_rel: release orders give_back, and the count above, before the
  // listing holder's reuse and its -1 (it acquires Closed); acquire pairs
  // with its unlisting.
  const std::uint64_t flip = kClosing | kClosed | (keep ? kKept : 0);
  const std::uint64_t before = d.word.fetch_xor(flip, std::memory_order_acq_rel);
  if ((before & kListed) == 0) {
    if (listed) count_stranded(s, c, -1);  // unlisted meanwhile: not stranded
    push_closed(s, id, before ^ flip);
  }
}

}  // namespace

void* allocate_small(State& s, std::size_t class_bytes) {
  const unsigned home = thread_shard();
  const std::size_t c = class_index(class_bytes);
  PageStack& own = s.shards[home].partial[c];
  for (;;) {
    std::uint32_t id = own.pop(s.descs());
    for (unsigned k = 1; id == kNoPage && k < kShards; ++k) {
      id = s.shards[(home + k) % kShards].partial[c].pop(s.descs());
    }
    if (id == kNoPage) return open_page(s, class_bytes, own);
    if (void* slot = take_slot(s, id, class_bytes, own)) return slot;
  }
}

void deallocate_small(State& s, void* p, std::size_t class_bytes) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  auto* chunk = reinterpret_cast<ChunkHeader*>(address & ~(std::uintptr_t{kChunkBytes} - 1));
  const auto page = static_cast<std::uint32_t>((address & (kChunkBytes - 1)) / s.page);
  PageDesc& d = chunk->pages[page];
  assert(page >= s.first_page && d.class_bytes.load(std::memory_order_relaxed) == class_bytes);
  const std::uint32_t id = chunk->index << kPageShift | page;
  const std::size_t offset = (address & (kChunkBytes - 1)) - std::size_t{page} * s.page;
  const std::uint64_t all = slot_mask(s.slots_for(class_bytes));
  const std::uint64_t bit = std::uint64_t{1} << (offset / class_bytes);
  std::uint64_t word = d.word.load(std::memory_order_relaxed);  // relaxed: the CAS decides
  bool list = false;
  bool close = false;
  for (;;) {
    assert((word & bit) == 0 && (word & (kClosing | kClosed)) == 0);
    std::uint64_t freed = word | bit;
    close = (freed & all) == all;                                 // the last slot (I3)
    list = !close && (word & all) == 0 && (word & kListed) == 0;  // full until now (I4)
    if (close) freed = kClosing | (word & kListed);
    if (list) freed |= kListed;
    // acq_rel: release hands this owner's accesses to the slot to its next
    // taker (and to the closer); acquire, when this closes the page, makes
    // every other slot's earlier free happen before give_back, and pairs
    // with a holder's release when it unlisted the full page. relaxed on
    // failure: retried.
    if (d.word.compare_exchange_weak(word, freed, std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
      break;
    }
  }
  if (list) s.shards[thread_shard()].partial[class_index(class_bytes)].push(id, s.descs());
  if (!close) return;
  s.open_pages.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a statistic
  finish_closing(s, d, id, reserve_kept(s), class_index(class_bytes));
}

void trim(State& s) noexcept {
  // Nothing is kept (I6), or nothing can be given back: nothing to do.
  // relaxed: a page kept after this look is one kept after the trim.
  if (!os::gives_back() || s.kept.load(std::memory_order_relaxed) == 0) return;
  // Kept pages still listed (on a partial stack, awaiting their holder's
  // unlisting): Closed + kKept + kListed -> Closing, as a closer would, so
  // the holder leaves the rest to this thread (I5). First: a kept page its
  // holder (or a sweep) unlists meanwhile goes on the kept-page stack,
  // which is taken next.
  const std::size_t chunks = std::min(s.chunk_count.load(std::memory_order_relaxed), kMaxChunks);
  for (std::size_t i = 0; i < chunks; ++i) {
    // acquire: pairs with map_chunk's store; no pop ordered this chunk here.
    ChunkHeader* chunk = s.chunks[i].load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    for (std::uint32_t p = s.first_page; p < s.pages_per_chunk; ++p) {
      PageDesc& d = chunk->pages[p];
      std::uint64_t word = kClosed | kKept | kListed;
      // acq_rel: as the closer's CAS (this thread now gives the memory
      // back); relaxed on failure: the page is in another state.
      if (d.word.compare_exchange_strong(word, kClosing | kListed, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
        // relaxed: the opener's store, published to the closer by the
        // frees of its slots, and to this thread by the CAS above.
        const std::size_t c = class_index(d.class_bytes.load(std::memory_order_relaxed));
        s.kept.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a count (I6)
        count_stranded(s, c, -1);
        finish_closing(s, d, chunk->index << kPageShift | p, false, c);
      }
    }
  }
  // Kept pages on the kept-page stack: take the chain whole (this thread
  // then owns each page, I1), give each back, and push those given back,
  // relinked, on the free-page stack; one the OS refuses stays kept (its
  // memory is resident) and goes back on the kept-page stack. The free
  // pages stay where an allocation finds them meanwhile.
  std::uint32_t id = s.kept_pages.take_all();
  LEANCHAN_TEST_POINT(kTrimHoldsKeptPages);
  std::uint32_t first = kNoPage;
  std::uint32_t last = kNoPage;
  while (id != kNoPage) {
    PageDesc& d = s.desc(id);
    // relaxed: owned (take_all acquired the chain's links).
    const std::uint32_t next = d.next.load(std::memory_order_relaxed);
    if (os::give_back(s.page_address(id), s.page)) {
      s.given_back.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
      d.word.store(kClosed, std::memory_order_relaxed);      // published by the push
      s.kept.fetch_sub(1, std::memory_order_relaxed);        // relaxed: a count (I6)
      d.next.store(first, std::memory_order_relaxed);        // published by the push
      first = id;
      if (last == kNoPage) last = id;
    } else {
      s.kept_pages.push(id, s.descs());
    }
    id = next;
  }
  if (first != kNoPage) s.free_pages.push_chain(first, last, s.descs());
}

}  // namespace leanchan::internal::pool
