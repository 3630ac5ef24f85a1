// SPDX-License-Identifier: MIT
// BlockPool::trim racing allocations: the window in which trim holds the
// kept pages it gives back, held open by a test point, and a chunk that
// trim scans while another thread maps it (under ThreadSanitizer).
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "leanchan/block_pool.h"
#include "leanchan/internal/test_point.h"
#include "memory_support.h"
#include "test_point_support.h"

namespace {

using leanchan::BlockPool;
using leanchan::internal::TestPoint;
using leanchan::testing::ScopedTestPointHook;

// What the hook does at kTrimHoldsKeptPages (hooks take no captures).
BlockPool* g_pool = nullptr;
std::atomic<int> g_reached{0};
std::size_t g_mapped_before = 0;
std::size_t g_mapped_during = 0;
void* g_block = nullptr;

void allocate_while_trim_holds(TestPoint point) {
  if (point != TestPoint::kTrimHoldsKeptPages) return;
  if (g_reached.fetch_add(1) != 0) return;
  g_mapped_before = g_pool->figures().mapped_bytes;
  g_block = g_pool->allocate(784, 8);  // a class with no open page
  g_mapped_during = g_pool->figures().mapped_bytes;
}

// Ten pages of one class filled and emptied: eight stay kept, two go back
// to the free-page stack, and the chunk's other pages were never used.
std::vector<void*> fill_and_empty_ten_pages(BlockPool& pool) {
  const std::size_t n = pool.slots_per_page(400);
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < 10 * n; ++i) {
    blocks.push_back(pool.allocate(400, 8));
    std::memset(blocks.back(), 5, 400);
  }
  for (void* b : blocks) pool.deallocate(b, 400, 8);
  return blocks;
}

// An allocation while trim gives the kept pages back opens a page from
// the free-page stack, not a new chunk. Before the kept pages had a stack
// of their own, trim took every free page off the shared stack first, so
// an allocation in that window mapped a new 2 MiB chunk, and a trim loop
// beside one allocating thread kept mapping chunks until kMaxChunks.
TEST(BlockPoolTrim, AnAllocationWhileTrimHoldsKeptPagesMapsNoChunk) {
  if (!BlockPool::gives_back_pages()) {
    GTEST_SKIP() << "the portable backend keeps every emptied page; trim() is a no-op there";
  }
  BlockPool pool;  // keeps 8 emptied pages
  (void)fill_and_empty_ten_pages(pool);
  ASSERT_EQ(pool.figures().kept_empty_pages, 8u);
  g_pool = &pool;
  g_reached = 0;
  {
    ScopedTestPointHook hook(&allocate_while_trim_holds);
    pool.trim();
  }
  ASSERT_EQ(g_reached.load(), 1);
  ASSERT_NE(g_block, nullptr);
  EXPECT_EQ(g_mapped_during, g_mapped_before) << "trim's window made the pool map a chunk";
  EXPECT_EQ(pool.figures().kept_empty_pages, 0u);
  pool.deallocate(g_block, 784, 8);
  g_pool = nullptr;
}

// keep_empty_pages = 0: nothing is ever kept, and trim() takes nothing.
TEST(BlockPoolTrim, IsANoOpWhenNothingIsKept) {
  if (!BlockPool::gives_back_pages()) {
    GTEST_SKIP() << "the portable backend keeps every emptied page; trim() is a no-op there";
  }
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  (void)fill_and_empty_ten_pages(pool);
  const auto before = pool.figures();
  EXPECT_EQ(before.kept_empty_pages, 0u);
  g_pool = &pool;
  g_reached = 0;
  {
    ScopedTestPointHook hook(&allocate_while_trim_holds);
    pool.trim();
  }
  EXPECT_EQ(g_reached.load(), 0) << "trim took pages though none can be kept";
  EXPECT_EQ(pool.figures().pages_given_back, before.pages_given_back);
  EXPECT_EQ(pool.figures().mapped_bytes, before.mapped_bytes);
  g_pool = nullptr;
}

// trim() also scans every chunk for kept pages still listed, so a chunk
// mapped on another thread must reach that scan constructed. The flags
// below are relaxed on purpose: nothing but the pool orders the mapping
// before the scan. Before the chunk table's entry was stored with release
// and read with acquire, ThreadSanitizer reported the descriptors'
// construction racing the scan's compare-and-swap.
TEST(BlockPoolTrim, ScansAChunkMappedOnAnotherThread) {
  BlockPool pool;
  std::atomic<int> stage{0};
  void* block = nullptr;
  std::thread mapper([&] {
    block = pool.allocate(784, 8);  // maps the pool's first chunk
    stage.store(1, std::memory_order_relaxed);
    while (stage.load(std::memory_order_relaxed) != 2) {
    }
  });
  while (stage.load(std::memory_order_relaxed) != 1) {
  }
  pool.trim();
  stage.store(2, std::memory_order_relaxed);
  mapper.join();
  EXPECT_EQ(pool.figures().live_allocations, 1u);
  pool.deallocate(block, 784, 8);
  EXPECT_EQ(pool.figures().live_allocations, 0u);
}

}  // namespace
