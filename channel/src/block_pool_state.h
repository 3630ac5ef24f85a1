// SPDX-License-Identifier: MIT
// BlockPool's bookkeeping (private to block_pool.cc and block_pool_pages.cc):
// chunks of pages with a descriptor per page, the lock-free page stacks, the
// per-thread shards, the figures.
//
// A page's descriptor word W holds the free-slot bitmap in bits 0..59 and
// four flags. Its states:
//   Open:    a bitmap bit is clear (at least one slot allocated), maybe kListed.
//   Closing: kClosing (+ kListed): the closer, or trim(), is giving its
//            memory back (or deciding to keep it).
//   Closed:  kClosed (+ kListed) (+ kKept): nothing on it is allocated;
//            kKept: its memory was kept resident for reuse
//            (BlockPoolOptions::keep_empty_pages), not given back.
// Invariants (block_pool_pages.cc relies on them at each step):
//   I1. kListed is set while the page is on a partial stack or popped from
//       one (alone, or with the whole stack by a sweep) by exactly one
//       thread (it "holds the listing"); a page is on at
//       most one stack (one `next` link), and on the free-page or the
//       kept-page stack only when Closed and not listed: on the kept-page
//       stack exactly when kKept.
//   I2. A slot is taken only by the listing holder, or by the opener
//       (slot 0); any thread frees a slot it was given. Every change of W
//       is an RMW, so a free and a take cannot both act on a stale W.
//   I3. The free that frees a page's last slot moves it to Closing in the
//       same CAS: no allocation can land on an emptied page.
//   I4. An open page with a free slot is listed, or is being listed (the
//       free that made a full page non-full sets kListed in its CAS, then
//       pushes it): a new page is opened only when no listed page is found.
//   I5. Closing ends with one RMW to Closed; whoever leaves W Closed and
//       not listed (the closer if kListed was clear by then, else the
//       listing holder when it unlists) pushes the page on the kept-page
//       stack if kKept, else on the free-page stack. So a page is reopened
//       only after give_back returned, and trim() finds the kept pages
//       without taking the free ones from an allocation. A page that
//       closed while listed waits on its partial stack for its holder:
//       the next pop of its class, or the sweep of its class's partial
//       stacks that comes before any page is opened from the free-page
//       stack or a new chunk is mapped, unless a sweep debt is outstanding
//       (I7).
//   I6. kept (the count) is the number of pages with kKept; at most
//       keep_limit, taken by CAS before a page is kept, plus the pages the
//       OS refused to take back (finish_closing keeps those past the limit).
//   I7. stranded, and stranded_in[c] for each class c, never fall below
//       the number of pages Closed and listed (of class c): the closer that
//       may leave a page so counts it before its RMW to Closed (and takes
//       the count back if the page was unlisted meanwhile), so its +1
//       happens before the -1 of the holder that unlists the page (or of
//       trim() when it takes a kept one back to Closing). A page is opened
//       from the free-page stack, or a chunk mapped, only after the
//       kept-page stack was found empty and then either a look at stranded
//       found 0, or a sweep of the classes counted in stranded_in ran, or a
//       look at sweep_debt found a debt outstanding (the page opened then
//       pays kSweepPay of it), or (opening only) another thread held
//       grow_mutex, to sweep or map.
#ifndef LEANCHAN_SRC_BLOCK_POOL_STATE_H_
#define LEANCHAN_SRC_BLOCK_POOL_STATE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "block_pool_os.h"
#include "leanchan/block_pool.h"

namespace leanchan::internal::pool {

inline constexpr std::size_t kChunkBytes = std::size_t{2} << 20;
inline constexpr std::uint32_t kPageShift = 9;  // page id: chunk index << 9 | page in chunk
inline constexpr std::uint32_t kMaxPagesPerChunk = std::uint32_t{1} << kPageShift;
inline constexpr std::size_t kMaxChunks = 65536;  // 128 GiB of pages
inline constexpr std::uint32_t kNoPage = 0xFFFFFFFFu;
inline constexpr unsigned kShards = 8;
inline constexpr std::size_t kClasses =
    (BlockPool::kLargestClass - BlockPool::kSmallestClass) / BlockPool::kClassStep + 1;
inline constexpr std::uint64_t kListed = std::uint64_t{1} << 60;
inline constexpr std::uint64_t kClosing = std::uint64_t{1} << 61;
inline constexpr std::uint64_t kKept = std::uint64_t{1} << 62;
inline constexpr std::uint64_t kClosed = std::uint64_t{1} << 63;
static_assert(BlockPool::kMaxSlotsPerPage <= 60, "the bitmap must leave the flag bits free");
// A sweep may walk this many listed pages per stranded page it recycles;
// it leaves the pages it walked beyond that as a debt, which each page
// faulted in (opened from the free-page stack or a new chunk) pays this
// much of; no sweep runs while a debt is outstanding (block_pool.h).
inline constexpr std::int64_t kSweepPay = 8;

struct PageDesc {
  // W. Its RMWs carry the slots' memory from one owner to the next; the
  // orders are at each use.
  std::atomic<std::uint64_t> word{kClosed};
  // The stack link: written by the pusher before its releasing CAS, read by
  // a popper after its acquiring load.
  std::atomic<std::uint32_t> next{kNoPage};
  // The size class the page was opened for (debug checks only); relaxed,
  // published with the push that lists the opened page.
  std::atomic<std::uint32_t> class_bytes{0};
};

// At the start of each 2 MiB-aligned chunk; the pages follow the
// descriptors (a page's descriptor: its address masked to the chunk).
struct ChunkHeader {
  std::uint32_t index = 0;
  PageDesc pages[kMaxPagesPerChunk];
};

// A Treiber stack of page ids with a 32-bit tag against ABA: the head word
// is tag << 32 | id, and every push and pop increments the tag.
class PageStack {
 public:
  // Pushes the chain first .. last, already linked by `next`.
  template <class Desc>
  void push_chain(std::uint32_t first, std::uint32_t last, Desc&& desc) noexcept {
    std::uint64_t head = head_.load(std::memory_order_relaxed);
    for (;;) {
      // relaxed: published by the release CAS below.
      desc(last).next.store(static_cast<std::uint32_t>(head), std::memory_order_relaxed);
      // release: the popper that reads this head sees `next` and everything
      // this thread did to the pages before (their word, their memory given
      // back). relaxed on failure: only retried.
      if (head_.compare_exchange_weak(head, bump(head, first), std::memory_order_release,
                                      std::memory_order_relaxed)) {
        return;
      }
    }
  }
  template <class Desc>
  void push(std::uint32_t id, Desc&& desc) noexcept {
    push_chain(id, id, desc);
  }
  // Every id, removed in one RMW: the first of their chain, linked by
  // `next` and ended by kNoPage (kNoPage if empty). acquire: as pop, for
  // every push before it (each push's CAS continues the release sequence
  // of the ones before).
  std::uint32_t take_all() noexcept {
    std::uint64_t head = head_.load(std::memory_order_acquire);
    while (static_cast<std::uint32_t>(head) != kNoPage &&
           !head_.compare_exchange_weak(head, bump(head, kNoPage), std::memory_order_acquire,
                                        std::memory_order_acquire)) {
    }
    return static_cast<std::uint32_t>(head);
  }
  // The id on top, removed; kNoPage if empty.
  template <class Desc>
  std::uint32_t pop(Desc&& desc) noexcept {
    // acquire: pairs with the push that wrote this head (see push_chain).
    std::uint64_t head = head_.load(std::memory_order_acquire);
    for (;;) {
      const auto id = static_cast<std::uint32_t>(head);
      if (id == kNoPage) return kNoPage;
      // relaxed: ordered after the acquire above. A stale link (the page was
      // popped and pushed again meanwhile) fails the CAS: the tag moved.
      const std::uint32_t next = desc(id).next.load(std::memory_order_relaxed);
      // acquire on success and failure: the next page's push, as above.
      if (head_.compare_exchange_weak(head, bump(head, next), std::memory_order_acquire,
                                      std::memory_order_acquire)) {
        return id;
      }
    }
  }

 private:
  static std::uint64_t bump(std::uint64_t head, std::uint32_t id) noexcept {
    return ((head >> 32) + 1) << 32 | id;
  }
  std::atomic<std::uint64_t> head_{kNoPage};
};

struct alignas(64) Shard {
  // Per shard, so that a sender's allocations and a receiver's frees update
  // different lines; figures() sums them. relaxed: statistics.
  std::atomic<std::int64_t> live_bytes{0};
  std::atomic<std::int64_t> live_allocations{0};
  PageStack partial[kClasses];
};

// An own mapping's record, at its start; the allocation follows at
// max(kLargeRecord, alignment). Linked under State::large_mutex.
inline constexpr std::size_t kLargeRecord = 64;
struct LargeRecord {
  LargeRecord* prev;
  LargeRecord* next;
  std::size_t mapped;
  std::size_t alignment;
};
static_assert(sizeof(LargeRecord) <= kLargeRecord);

// The calling thread's shard (threads are spread round-robin).
unsigned thread_shard() noexcept;

}  // namespace leanchan::internal::pool

namespace leanchan {

struct BlockPool::State {
  using PageDesc = internal::pool::PageDesc;
  using ChunkHeader = internal::pool::ChunkHeader;

  explicit State(std::size_t keep) noexcept : keep_limit(keep) {}

  const std::size_t page = internal::pool_os::page_size();
  const std::uint32_t pages_per_chunk =
      static_cast<std::uint32_t>(internal::pool::kChunkBytes / page);
  const std::uint32_t first_page =  // past the descriptors
      static_cast<std::uint32_t>((sizeof(ChunkHeader) + page - 1) / page);
  const std::size_t keep_limit;
  std::atomic<ChunkHeader*>* chunks = nullptr;  // kMaxChunks entries
  internal::pool::Shard shards[internal::pool::kShards];
  alignas(64) internal::pool::PageStack free_pages;
  internal::pool::PageStack kept_pages;  // I1: Closed and kKept, not listed
  std::atomic<std::size_t> chunk_count{0};
  std::atomic<std::size_t> kept{0};  // I6
  // I7: pages Closed and still listed ("stranded"), pool-wide and per size
  // class (the class index of their partial stacks). relaxed: they only
  // choose whether to sweep and which classes (count_stranded).
  std::atomic<std::int64_t> stranded{0};
  alignas(64) std::atomic<std::int64_t> stranded_in[internal::pool::kClasses] = {};
  // The sweeps' debt, in listed pages walked (kSweepPay): set by a sweep
  // (under grow_mutex), lowered by the pages faulted in since, never below
  // 0; a sweep runs only at 0. relaxed: it only chooses whether to sweep,
  // like stranded (see sweep_paid).
  std::atomic<std::int64_t> sweep_debt{0};
  // relaxed: statistics.
  std::atomic<std::size_t> open_pages{0};
  std::atomic<std::size_t> large_pages{0};
  std::atomic<std::uint64_t> given_back{0};
  std::atomic<std::size_t> mapped_bytes{0};
  std::mutex large_mutex;
  std::mutex grow_mutex;  // one thread at a time sweeps the partial stacks or maps a chunk
  internal::pool::LargeRecord large{&large, &large, 0, 0};  // the list's sentinel

  PageDesc& desc(std::uint32_t id) noexcept {
    return chunk(id)->pages[id & (internal::pool::kMaxPagesPerChunk - 1)];
  }
  unsigned char* page_address(std::uint32_t id) noexcept {
    return reinterpret_cast<unsigned char*>(chunk(id)) +
           std::size_t{id & (internal::pool::kMaxPagesPerChunk - 1)} * page;
  }
  ChunkHeader* chunk(std::uint32_t id) noexcept {
    // relaxed: every id reaches a thread through a stack pop (acquire) or
    // its own map_chunk, after the entry's store. (trim()'s scan of the
    // table has no id: it reads the entries with acquire.)
    return chunks[id >> internal::pool::kPageShift].load(std::memory_order_relaxed);
  }
  auto descs() noexcept {
    return [this](std::uint32_t id) -> PageDesc& { return desc(id); };
  }
  std::size_t slots_for(std::size_t class_bytes) const noexcept {
    const std::size_t slots = page / class_bytes;
    return slots < kMaxSlotsPerPage ? slots : kMaxSlotsPerPage;
  }
};

}  // namespace leanchan

namespace leanchan::internal::pool {

using State = BlockPool::State;

// The small path (block_pool_pages.cc). allocate_small throws
// std::bad_alloc when no chunk can be mapped.
void* allocate_small(State& s, std::size_t class_bytes);
void deallocate_small(State& s, void* p, std::size_t class_bytes) noexcept;
// Gives back the memory of every kept empty page (BlockPool::trim).
void trim(State& s) noexcept;

}  // namespace leanchan::internal::pool

#endif  // LEANCHAN_SRC_BLOCK_POOL_STATE_H_
