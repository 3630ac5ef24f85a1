// SPDX-License-Identifier: MIT
/// @file
/// leanchan/block_pool.h: a std::pmr::memory_resource that packs allocations
/// of one size class into pages of their own and gives each page back to the
/// operating system as soon as its last allocation is freed, whatever thread
/// frees it. For channels whose bursts should leave no resident memory
/// behind, under any malloc (docs/budgets.md).
///
/// @code
///   leanchan::BlockPool pool;                           // outlives its channels
///   auto [tx, rx] = leanchan::channel<Event>(1024,
///       {.retention = leanchan::Retention::kKeepNone, .memory = &pool});
/// @endcode
///
/// Size classes: a request of `bytes` with `alignment` goes to the class
///   size_class(bytes, alignment) = round_up(max(bytes, 64), max(16, alignment))
/// when that is at most kLargestClass (2048) and alignment is at most the
/// page size; a page (the OS page, page_size()) of class c holds
///   slots_per_page(c) = min(60, page_size() / c)
/// allocations, slot i at page + i*c (so every slot is aligned to c's largest
/// power-of-two divisor, at least 16, and to the requested alignment). Any
/// larger request, or one aligned beyond a page, gets a mapping of its own,
///   round_up(max(64, alignment) + bytes, page_size()) bytes,
/// its first max(64, alignment) bytes the pool's record of it, unmapped when
/// it is freed. A request that no mapping can hold (above 2^62 bytes, or
/// aligned beyond 2^62), or that the system refuses, throws std::bad_alloc.
///
/// Design (states and invariants: channel/src/block_pool_state.h; each
/// atomic's order is argued where it is used):
///   - Pages come from 2 MiB chunks mapped with mmap (huge pages disabled on
///     them), 2 MiB aligned; a chunk's first pages hold a descriptor per
///     page, so a pointer finds its page's descriptor by masking its address.
///     Chunks stay mapped until the pool is destroyed.
///   - A page's state is one 64-bit word in its descriptor: a bitmap of its
///     free slots (bit i: slot i is free) and four flags (listed: on a
///     partial stack; closing; closed: nothing allocated; kept: closed but
///     left resident). Allocating a slot is one CAS on that word; freeing one
///     is one CAS, from any thread.
///   - Pages with free slots are found on lock-free partial stacks, one per
///     size class and shard (8 shards; a thread uses its own shard's and
///     takes from the others' before it opens a page). An allocation pops a
///     page, takes a slot, and pushes the page back if it still has one; a
///     free that makes a full page non-full pushes it. A page whose last
///     slot is freed while it waits on a partial stack (stranded) stays
///     there until an allocation of its class pops it, or until a sweep
///     takes it off: a count of stranded pages, pool-wide and per class,
///     tells an allocation about to open a page whether to sweep, and which
///     classes' partial stacks (it walks those stacks and the pages listed
///     on them, never the others).
///   - An allocation that finds no page with a free slot in its class opens
///     one in this order, whatever class emptied it: a kept page (below:
///     resident, kept by choice or refused by the OS), always, at no cost;
///     else, if a page may be stranded and no sweep debt is outstanding
///     (next item), a page the sweep of those classes recycles, kept ones
///     first; else a page given back; else a page of a chunk never used;
///     else a new chunk's. So an emptied page that is still resident is
///     opened before any page is faulted in, and a burst of one class
///     reuses the pages another class emptied, given back or not, before a
///     page never used, and maps a chunk only when none is left. Exact when
///     the frees that emptied those pages happen before the allocation and
///     no sweep debt is outstanding: a free racing it, or another
///     allocation in flight (holding the mutex below to sweep or map a
///     chunk, sweeping the partial stacks it took aside, or holding the
///     stranded page it just popped), may leave a page resident beside one
///     opened meanwhile, until a later allocation opens it.
///   - The sweeps' cost is bounded by a debt. A sweep counts the listed
///     pages it walks (W) and the stranded ones it recycles (R), and leaves
///     a debt of max(0, W - 8R): one that recycles a page per 8 it walks
///     leaves none (the usual case: a burst empties many pages of a class,
///     then another class bursts). While a debt D is outstanding no sweep
///     runs, and each page faulted in (opened from a page given back or
///     never used, or from a new chunk) pays 8 of it; a kept page pays
///     nothing. So at most ceil(D / 8) pages are faulted in beside stranded
///     ones before the next allocation that opens a page sweeps again. And
///     all the sweeps together walk at most 8 pages per page they recycle,
///     plus 8 per page faulted in, plus the pages the last sweep walked (its
///     debt, unpaid; at most the pages listed then): at most 16 per page
///     opened (each page recycled was opened once before) plus one pass
///     over the listed pages, O(1) amortized per page opened however many
///     pages stay listed. Beside that, a sweep costs a constant (a look at
///     each class's count, and at the 8 shards' stacks of each class it
///     sweeps), and an allocation runs at most two.
///   - The free that frees a page's last slot closes the page in the same
///     CAS, gives it back (madvise(MADV_DONTNEED): its memory leaves the
///     resident set at once and reads back as zeros), and recycles its
///     descriptor onto the free-page stack, from which new pages are opened
///     (BlockPoolOptions::keep_empty_pages lets a few stay resident, 8 by
///     default, on a kept-page stack of their own, opened first).
///     A page the OS refuses to take back (madvise fails on locked memory)
///     stays resident: it is counted as kept, past the limit if need be,
///     reused first, and tried again by trim().
///     MADV_DONTNEED rather than munmap: the chunk stays one mapping (munmap
///     of single pages would split it into a kernel mapping per hole, up to
///     the vm.max_map_count limit), and reusing the page needs no system
///     call (an unmapped page would need mmap(MAP_FIXED) back). MADV_DONTNEED
///     rather than MADV_FREE: the resident set drops now, not under memory
///     pressure. The price, a madvise and a page fault when a page empties
///     and is reused, is measured in docs/budgets.md; keep_empty_pages
///     trades a few resident pages for it.
///   - No lock on the small path but where it sweeps or maps a chunk (a
///     mutex, so that one thread sweeps or maps at a time). An allocation
///     about to sweep while another thread holds it does not wait: it opens
///     a page given back or never used instead (as if it had raced the
///     frees); one about to map a chunk waits, then takes the pages the
///     other recycled or mapped. Own-mapping allocations (above kLargestClass) are each an
///     mmap/munmap, which the kernel serializes per process anyway; a mutex
///     guards the list of them that the destructor unmaps.
///
/// Off Linux (or with -DLEANCHAN_BLOCK_POOL_BACKEND=portable) chunks and
/// own mappings come from the aligned global operator new instead, and an
/// emptied page is recycled inside the pool but not given back to the
/// operating system (gives_back_pages() is false): each counts as kept.
///
/// Lifetime: the pool must outlive every allocation made from it; the
/// destructor unmaps everything it mapped, and aborts with a message if an
/// allocation is still live.
///
/// Thread-safety: allocate, deallocate, trim() and figures() may be called
/// from any number of threads at once; an allocation may be freed by any
/// thread.
#ifndef LEANCHAN_BLOCK_POOL_H_
#define LEANCHAN_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory_resource>

#include "leanchan/export.h"

namespace leanchan {

/// A snapshot of a BlockPool. Each figure is read on its own (relaxed), so a
/// snapshot taken while allocations race it may mix moments; each is exact
/// when nothing races it.
struct BlockPoolFigures {
  std::size_t live_bytes = 0;          ///< requested bytes of allocations not yet freed
  std::size_t live_allocations = 0;    ///< allocations not yet freed
  std::size_t mapped_bytes = 0;        ///< address space mapped now: chunks (2 MiB each,
                                       ///< their descriptor pages included), own mappings,
                                       ///< and the pool's bookkeeping
  std::size_t resident_pages = 0;      ///< pages holding at least one allocation: open
                                       ///< pages of size classes, and the pages of own
                                       ///< mappings
  std::uint64_t pages_given_back = 0;  ///< size-class pages given back to the OS, ever
  std::size_t kept_empty_pages = 0;    ///< emptied pages kept resident for reuse
                                       ///< (BlockPoolOptions::keep_empty_pages),
                                       ///< and those the OS refused to take back
                                       ///< (locked memory: mlock, mlockall)
  std::size_t page_size = 0;           ///< page_size()
};

/// How a BlockPool is made: BlockPool(options).
struct BlockPoolOptions {
  /// Emptied pages the pool may keep resident (not given back) for reuse,
  /// pool-wide. The default, kDefaultKeptPages (8: 32 KiB on 4 KiB pages),
  /// spares a channel whose blocks come and go at a steady depth a madvise
  /// and a page fault each time a page empties and another fills (what that
  /// costs a message: docs/budgets.md);
  /// resident memory may then stay up to that many pages above the live
  /// pages, until trim() or their reuse. 0: every page goes back as soon as
  /// its last allocation is freed.
  static constexpr std::size_t kDefaultKeptPages = 8;
  /// Emptied pages the pool may keep resident for reuse (above).
  std::size_t keep_empty_pages = kDefaultKeptPages;
};

/// The memory resource of leanchan/block_pool.h: allocations of one size class
/// packed into pages of their own, each page given back to the operating system
/// as soon as its last allocation is freed.
class LEANCHAN_API BlockPool final : public std::pmr::memory_resource {
 public:
  /// The smallest size class, in bytes: a smaller request takes this much.
  static constexpr std::size_t kSmallestClass = 64;
  /// The step between size classes, in bytes (for alignments up to 16).
  static constexpr std::size_t kClassStep = 16;
  /// The largest size class; a larger request gets a mapping of its own.
  static constexpr std::size_t kLargestClass = 2048;
  /// The most allocations one page holds.
  static constexpr std::size_t kMaxSlotsPerPage = 60;

  /// Maps the pool's bookkeeping (its state, a few pages, and a table of
  /// chunks: 512 KiB of address space, resident only as chunks are added;
  /// mapped_bytes counts both); throws std::bad_alloc if it cannot. Pages
  /// are mapped as allocations need them.
  BlockPool();
  /// As BlockPool(), with `options`.
  explicit BlockPool(const BlockPoolOptions& options);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  /// Unmaps everything the pool mapped; aborts with a message if an allocation is
  /// still live.
  ~BlockPool() override;

  /// A snapshot of the pool's figures.
  BlockPoolFigures figures() const noexcept;

  /// The page size: the operating system's (4096 on x86-64 Linux).
  std::size_t page_size() const noexcept;
  /// The size class of a request (see the formula above), or 0 if the
  /// request gets a mapping of its own.
  std::size_t size_class(std::size_t bytes, std::size_t alignment) const noexcept;
  /// Allocations a page of size class `class_bytes` holds.
  std::size_t slots_per_page(std::size_t class_bytes) const noexcept;
  /// True where an emptied page leaves the resident set (the mmap backend).
  static bool gives_back_pages() noexcept;
  /// Gives back every emptied page kept for reuse (keep_empty_pages); a
  /// no-op with keep_empty_pages = 0. Exact when no allocation races it: a
  /// page emptied meanwhile may stay kept. Only the kept pages are taken
  /// aside while it runs: an allocation racing it opens a page given back
  /// before, and maps a new chunk only if none is left.
  void trim() noexcept;

  struct State;  // the bookkeeping (channel/src/block_pool_state.h); not part of the API

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override;

  State* state_;
};

}  // namespace leanchan

#endif  // LEANCHAN_BLOCK_POOL_H_
