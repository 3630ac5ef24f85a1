// SPDX-License-Identifier: MIT
// BlockPool's reuse order: an allocation that finds no page with a free slot
// in its class opens an emptied page before it faults in a fresh one,
// whatever class emptied it: the kept pages (keep_empty_pages), the pages
// the OS refused to take back, and the pages emptied while they waited on
// another class's partial stack. So after one class's burst empties its
// pages, a burst of another class needing as many pages or more leaves
// resident exactly the pages it needs, the emptied ones among them (mincore
// over every page either burst used, and figures()). This binary replaces
// madvise to refuse the pool's give-backs on demand.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "leanchan/block_pool.h"
#include "memory_support.h"
#include "page_probe.h"
#include "refusing_madvise.h"

namespace {

using leanchan::BlockPool;
using leanchan::BlockPoolOptions;
using leanchan::testing::page_resident;

// Two classes: 400 bytes (10 slots a page on 4 KiB pages) empties its
// pages; 1000 bytes (class 1008, 4 a page) needs pages afterwards.
constexpr std::size_t kFirstBytes = 400;
constexpr std::size_t kSecondBytes = 1000;
constexpr std::size_t kFirstPages = 40;

std::size_t ceil_div(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

std::size_t slots(const BlockPool& pool, std::size_t bytes) {
  return pool.slots_per_page(pool.size_class(bytes, 8));
}

// `n` allocations of `bytes`, each written whole (its page is resident).
std::vector<void*> allocate(BlockPool& pool, std::size_t bytes, std::size_t n) {
  std::vector<void*> blocks;
  blocks.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    blocks.push_back(pool.allocate(bytes, 8));
    std::memset(blocks.back(), 7, bytes);
  }
  return blocks;
}

// Frees in allocation order: the first free of each full page lists it on
// its class's partial stack, the last empties it there.
void free_all(BlockPool& pool, std::vector<void*>& blocks, std::size_t bytes) {
  for (void* b : blocks) pool.deallocate(b, bytes, 8);
}

std::set<std::uintptr_t> pages_of(const BlockPool& pool, const std::vector<void*>& blocks) {
  std::set<std::uintptr_t> pages;
  for (void* b : blocks)
    pages.insert(reinterpret_cast<std::uintptr_t>(b) & ~(pool.page_size() - 1));
  return pages;
}

std::size_t resident(const std::set<std::uintptr_t>& pages) {
  return static_cast<std::size_t>(std::count_if(pages.begin(), pages.end(), [](std::uintptr_t p) {
    return page_resident(reinterpret_cast<const void*>(p));
  }));
}

std::set<std::uintptr_t> joined(const std::set<std::uintptr_t>& a,
                                const std::set<std::uintptr_t>& b) {
  std::set<std::uintptr_t> all = a;
  all.insert(b.begin(), b.end());
  return all;
}

bool includes(const std::set<std::uintptr_t>& outer, const std::set<std::uintptr_t>& inner) {
  return std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
}

// Pages the first burst's frees leave kept: up to keep_empty_pages by
// choice, then those the OS refused (`refusals` at most), or every page
// where nothing is given back.
std::size_t kept_after_first(std::size_t keep, std::size_t refusals) {
  if (!BlockPool::gives_back_pages()) return kFirstPages;
  const std::size_t chosen = std::min(keep, kFirstPages);
  return chosen + std::min(refusals, kFirstPages - chosen);
}

// The first class fills kFirstPages pages and frees them (on another
// thread when `free_elsewhere`: its pages then wait on another shard's
// partial stack), the OS refusing `refusals` of their give-backs; then the
// second class allocates `second` blocks. Checks every figure and page at
// each step; returns the second burst's blocks.
std::vector<void*> bursts(BlockPool& pool, std::size_t keep, int refusals, std::size_t second,
                          bool free_elsewhere = false) {
  const std::size_t first_n = kFirstPages * slots(pool, kFirstBytes);
  const std::size_t needed = ceil_div(second, slots(pool, kSecondBytes));
  std::vector<void*> first;
  std::set<std::uintptr_t> first_pages;
  auto first_burst = [&] {
    first = allocate(pool, kFirstBytes, first_n);
    first_pages = pages_of(pool, first);
    leanchan::testing::madvise_refused = 0;
    leanchan::testing::madvise_refusals_left = refusals;
    free_all(pool, first, kFirstBytes);
    leanchan::testing::madvise_refusals_left = 0;
  };
  if (free_elsewhere) {
    std::thread(first_burst).join();
  } else {
    first_burst();
  }
  EXPECT_EQ(first_pages.size(), kFirstPages);
  const std::size_t kept = kept_after_first(keep, static_cast<std::size_t>(refusals));
  const std::size_t given_back = BlockPool::gives_back_pages() ? kFirstPages - kept : 0;
  auto figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 0u);
  EXPECT_EQ(figures.kept_empty_pages, kept);
  EXPECT_EQ(figures.pages_given_back, given_back);
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(leanchan::testing::madvise_refused.load(), refusals);
    EXPECT_EQ(resident(first_pages), kept) << "the kept pages stay resident, no other";
  }

  std::vector<void*> blocks = allocate(pool, kSecondBytes, second);
  const std::set<std::uintptr_t> second_pages = pages_of(pool, blocks);
  EXPECT_EQ(second_pages.size(), needed);
  figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, needed);
  // The second burst opened min(needed, kept) kept pages; no page went back.
  EXPECT_EQ(figures.kept_empty_pages, kept - std::min(needed, kept))
      << "kept pages left resident beside fresh ones";
  EXPECT_EQ(figures.pages_given_back, given_back);
  if (BlockPool::gives_back_pages()) {
    // Resident: the pages the second burst needs, and the kept pages it
    // did not need; none beside them.
    EXPECT_EQ(resident(joined(first_pages, second_pages)), std::max(needed, kept))
        << "pages needed " << needed << ", kept before " << kept;
  }
  if (needed >= kFirstPages) {
    EXPECT_TRUE(includes(second_pages, first_pages))
        << "the emptied pages were not reused before fresh ones";
  } else if (needed <= kept) {
    EXPECT_TRUE(includes(first_pages, second_pages)) << "a page faulted in while kept ones lay";
  }
  return blocks;
}

// The second class needs 50 pages (on 4 KiB pages 4 slots a page: 50 * 4 - 1
// blocks), more than the first emptied.
std::size_t more_than_first(const BlockPool& pool) {
  return (kFirstPages + 10) * slots(pool, kSecondBytes) - 1;
}

void free_second(BlockPool& pool, std::vector<void*>& blocks) {
  free_all(pool, blocks, kSecondBytes);
  pool.trim();
  EXPECT_EQ(pool.figures().resident_pages, 0u);
  EXPECT_EQ(pool.figures().live_allocations, 0u);
}

TEST(BlockPoolReuseOrder, KeptPagesServeAnotherClassBeforeFreshOnes) {
  BlockPool pool;  // keeps 8
  auto blocks = bursts(pool, BlockPoolOptions::kDefaultKeptPages, 0, more_than_first(pool));
  free_second(pool, blocks);
}

TEST(BlockPoolReuseOrder, PagesGivenBackServeAnotherClassBeforeFreshOnes) {
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  auto blocks = bursts(pool, 0, 0, more_than_first(pool));
  free_second(pool, blocks);
}

TEST(BlockPoolReuseOrder, PagesEmptiedOnAnotherThreadServeThisOneBeforeFreshOnes) {
  BlockPool pool;
  auto blocks = bursts(pool, BlockPoolOptions::kDefaultKeptPages, 0, more_than_first(pool), true);
  free_second(pool, blocks);
}

TEST(BlockPoolReuseOrder, RefusedPagesServeAnotherClassBeforeFreshOnes) {
  if (!BlockPool::gives_back_pages()) GTEST_SKIP() << "this backend gives no page back";
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  // Every page of the first burst stays resident, kept past the limit.
  auto blocks = bursts(pool, 0, static_cast<int>(kFirstPages), more_than_first(pool));
  free_second(pool, blocks);
}

TEST(BlockPoolReuseOrder, KeptAndRefusedPagesServeAnotherClassBeforeFreshOnes) {
  if (!BlockPool::gives_back_pages()) GTEST_SKIP() << "this backend gives no page back";
  BlockPool pool;
  // 8 kept by choice, 6 refused, 26 given back.
  auto blocks = bursts(pool, BlockPoolOptions::kDefaultKeptPages, 6, more_than_first(pool));
  free_second(pool, blocks);
}

TEST(BlockPoolReuseOrder, ASmallerBurstFaultsInNoPageWhileKeptOnesLast) {
  BlockPool pool;
  // 5 pages (4 slots a page: 5 * 4 blocks): all of them kept pages.
  auto blocks = bursts(pool, BlockPoolOptions::kDefaultKeptPages, 0, 5 * slots(pool, kSecondBytes));
  free_second(pool, blocks);
}

TEST(BlockPoolReuseOrder, PagesTrimCouldNotGiveBackServeAnotherClassBeforeFreshOnes) {
  if (!BlockPool::gives_back_pages()) GTEST_SKIP() << "this backend gives no page back";
  BlockPool pool;
  const std::size_t first_n = kFirstPages * slots(pool, kFirstBytes);
  auto first = allocate(pool, kFirstBytes, first_n);
  const auto first_pages = pages_of(pool, first);
  free_all(pool, first, kFirstBytes);
  constexpr std::size_t kKept = BlockPoolOptions::kDefaultKeptPages;
  ASSERT_EQ(pool.figures().kept_empty_pages, kKept);
  leanchan::testing::madvise_refused = 0;
  leanchan::testing::madvise_refusals_left = static_cast<int>(kKept);
  pool.trim();  // the OS refuses every kept page: they stay kept
  leanchan::testing::madvise_refusals_left = 0;
  EXPECT_EQ(leanchan::testing::madvise_refused.load(), static_cast<int>(kKept));
  ASSERT_EQ(pool.figures().kept_empty_pages, kKept);
  EXPECT_EQ(resident(first_pages), kKept);
  const std::size_t second = more_than_first(pool);
  const std::size_t needed = ceil_div(second, slots(pool, kSecondBytes));
  auto blocks = allocate(pool, kSecondBytes, second);
  const auto second_pages = pages_of(pool, blocks);
  EXPECT_EQ(pool.figures().resident_pages, needed);
  EXPECT_EQ(pool.figures().kept_empty_pages, 0u);
  EXPECT_EQ(resident(joined(first_pages, second_pages)), needed);
  EXPECT_TRUE(includes(second_pages, first_pages));
  free_second(pool, blocks);
}

}  // namespace
