// SPDX-License-Identifier: MIT
// The cost of BlockPool's sweeps: an allocation that must open a page sweeps
// the partial stacks of the classes holding stranded pages (emptied while
// listed there), and each sweep walks every page listed on them. A sweep
// leaves a debt of the pages it walked beyond 8 per stranded page it
// recycled, and no sweep runs until 8 per page faulted in since have paid it
// (leanchan/block_pool.h). So the sweeps walk O(1) pages per page opened,
// however many pages stay listed, and an emptied page is still opened before
// a fresh one whenever no debt is outstanding. The kPoolSweepStepped test
// point counts the listed pages the sweeps walk; nothing here is timed.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

#include "leanchan/block_pool.h"
#include "leanchan/internal/test_point.h"
#include "memory_support.h"
#include "test_point_support.h"

namespace {

using leanchan::BlockPool;
using leanchan::internal::TestPoint;
using leanchan::testing::ScopedTestPointHook;

// Listed pages the sweeps stepped over.
std::atomic<std::uint64_t> g_walked{0};

void count_steps(TestPoint point) {
  if (point == TestPoint::kPoolSweepStepped) g_walked.fetch_add(1);
}

// block_pool.h: a sweep may walk 8 pages per stranded page it recycles; a
// debt left beyond that is paid 8 pages per page faulted in.
constexpr std::uint64_t kPaid = 8;

// The class whose pages stay listed (60 slots a page on 4 KiB pages), and
// the class that opens pages (2 slots a page on 4 KiB pages).
constexpr std::size_t kSmall = 64;
constexpr std::size_t kLarge = 2048;

std::uintptr_t page_of(const BlockPool& pool, const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) & ~(pool.page_size() - 1);
}

// `pages` pages of kSmall filled, then one slot of each freed (in order),
// so that every one of them is listed on its class's partial stack, and
// none is empty. blocks[i]: page i's blocks still allocated.
struct ListedPages {
  ListedPages(BlockPool& owner, std::size_t pages) : pool(owner), blocks(pages) {
    const std::size_t per_page = pool.slots_per_page(kSmall);
    for (auto& page : blocks) {
      for (std::size_t i = 0; i < per_page; ++i) page.push_back(pool.allocate(kSmall, 8));
    }
    for (auto& page : blocks) {
      pool.deallocate(page.back(), kSmall, 8);
      page.pop_back();
    }
  }
  ListedPages(const ListedPages&) = delete;
  ListedPages& operator=(const ListedPages&) = delete;
  ~ListedPages() {
    for (std::size_t i = 0; i < blocks.size(); ++i) empty(i);
  }
  // Frees page i's other blocks: it empties while listed (stranded).
  void empty(std::size_t i) {
    for (void* b : blocks[i]) pool.deallocate(b, kSmall, 8);
    blocks[i].clear();
  }
  std::uintptr_t page(std::size_t i) const { return page_of(pool, blocks[i].front()); }

  BlockPool& pool;
  std::vector<std::vector<void*>> blocks;
};

// The reviewer's pattern: 2,000 small pages listed; then, 2,000 times, one
// of them empties (stranded) and the large class allocates two blocks and
// frees them, which opens a page (the large page emptied the round before
// is popped by the large class's own allocation first). Before the debt,
// every open swept the small class's listed pages to recycle the one just
// emptied: about 2,000 pages walked per page opened, 2 million in all.
TEST(BlockPoolSweepCost, SweepsWalkAtMostAConstantPerPageOpened) {
  constexpr std::size_t kPages = 2000;
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  ListedPages small(pool, kPages);
  const auto before = pool.figures();
  // Pages the loop opened: the allocations given a page's slot 0 (an open
  // takes slot 0; here no other allocation does, as a large page is listed
  // with slot 0 free only between the frees of x and y).
  std::uint64_t opened = 0;
  g_walked = 0;
  {
    ScopedTestPointHook hook(&count_steps);
    for (std::size_t i = 0; i < kPages; ++i) {
      small.empty(i);
      void* x = pool.allocate(kLarge, 8);
      void* y = pool.allocate(kLarge, 8);
      opened += (page_of(pool, x) == reinterpret_cast<std::uintptr_t>(x)) +
                (page_of(pool, y) == reinterpret_cast<std::uintptr_t>(y));
      pool.deallocate(x, kLarge, 8);
      pool.deallocate(y, kLarge, 8);
    }
  }
  const std::uint64_t walked = g_walked.load();
  if (BlockPool::gives_back_pages()) {
    // Every page the loop opened emptied in it and went back (nothing is
    // kept), beside the small pages emptied.
    EXPECT_EQ(pool.figures().pages_given_back - before.pages_given_back, opened + kPages);
  }
  EXPECT_GE(opened, kPages);
  // The bound (block_pool.h): 8 per stranded page the sweeps recycled (the
  // kPages small pages, each stranded once; only the small class is swept,
  // its stranded large page being popped first), plus 8 per page faulted
  // in (every page opened here, nothing being kept), plus the pages listed
  // at the last sweep (its debt left unpaid: at most kPages):
  //   walked <= 8 * (kPages + opened) + kPages.
  EXPECT_LE(walked, kPaid * (kPages + opened) + kPages)
      << "the sweeps walked " << walked << " listed pages for " << opened << " pages opened";
  std::printf("sweeps walked %llu listed pages for %llu pages opened\n",
              static_cast<unsigned long long>(walked), static_cast<unsigned long long>(opened));
}

// One page of kLarge filled: the allocation that opened it (slot 0) and
// those that filled it. Returns the blocks; the page is theirs alone.
std::vector<void*> fill_large_page(BlockPool& pool) {
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < pool.slots_per_page(kLarge); ++i) {
    blocks.push_back(pool.allocate(kLarge, 8));
  }
  for (void* b : blocks) EXPECT_EQ(page_of(pool, b), page_of(pool, blocks.front()));
  return blocks;
}

// A sweep that recycles a page per 8 it walks leaves no debt: the next page
// emptied is opened by the next allocation that opens a page. One that
// leaves a debt D lets at most ceil(D / 8) pages be faulted in beside a
// stranded page; the open after them sweeps and takes it.
TEST(BlockPoolSweepCost, AnEmptiedPageIsOpenedBeforeFreshOnesUnlessADebtIsOutstanding) {
  constexpr std::size_t kListed = 200;
  constexpr std::size_t kEmptied = 50;
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  ListedPages small(pool, kListed);
  std::set<std::uintptr_t> emptied;
  for (std::size_t i = 0; i < kEmptied; ++i) {
    emptied.insert(small.page(i));
    small.empty(i);
  }
  std::vector<std::vector<void*>> large;
  std::set<std::uintptr_t> large_pages;
  g_walked = 0;
  ScopedTestPointHook hook(&count_steps);

  // The first open sweeps the kListed pages listed and recycles the
  // kEmptied stranded ones (kListed <= 8 * kEmptied: no debt); the opens
  // take them, and fault in no other page.
  for (std::size_t i = 0; i < kEmptied; ++i) {
    large.push_back(fill_large_page(pool));
    large_pages.insert(page_of(pool, large.back().front()));
  }
  EXPECT_EQ(large_pages, emptied);
  EXPECT_EQ(g_walked.load(), kListed);
  EXPECT_EQ(pool.figures().kept_empty_pages, 0u);

  // No debt: the page emptied next is opened by the next open, which sweeps
  // the kListed - kEmptied pages listed.
  std::uintptr_t target = small.page(kEmptied);
  small.empty(kEmptied);
  g_walked = 0;
  large.push_back(fill_large_page(pool));
  EXPECT_EQ(page_of(pool, large.back().front()), target) << "a page faulted in while none was owed";
  const std::uint64_t walked = g_walked.load();
  EXPECT_EQ(walked, kListed - kEmptied);

  // That sweep recycled one page for `walked`: a debt of walked - 8. At
  // most ceil(debt / 8) pages are faulted in beside the page emptied now;
  // the open after them takes it.
  const std::uint64_t debt = walked - kPaid;
  const std::uint64_t most = (debt + kPaid - 1) / kPaid;
  target = small.page(kEmptied + 1);
  small.empty(kEmptied + 1);
  g_walked = 0;
  std::uint64_t faulted = 0;
  for (;;) {
    large.push_back(fill_large_page(pool));
    if (page_of(pool, large.back().front()) == target) break;
    if (++faulted > most) break;
  }
  EXPECT_LE(faulted, most) << "pages faulted in beside a stranded one past the debt";
  EXPECT_LE(g_walked.load(), kListed - kEmptied) << "more than the one sweep that took it";

  for (auto& blocks : large) {
    for (void* b : blocks) pool.deallocate(b, kLarge, 8);
  }
}

}  // namespace
