// SPDX-License-Identifier: MIT
// A page the operating system refuses to take back (madvise fails: memory
// locked with mlockall, for one) stays resident, so the pool counts it as
// kept, past keep_empty_pages if need be, and trim() tries it again. Before,
// such a page was counted nowhere (neither resident nor kept nor given
// back), and trim() dropped the kept count to 0 while every page stayed
// resident. This binary replaces madvise to make it fail on demand.
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstring>
#include <vector>

#include "leanchan/block_pool.h"
#include "memory_support.h"
#include "refusing_madvise.h"

namespace {

using leanchan::BlockPool;

constexpr std::size_t kBytes = 400;

std::vector<void*> fill_pages(BlockPool& pool, std::size_t pages) {
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < pages * pool.slots_per_page(kBytes); ++i) {
    blocks.push_back(pool.allocate(kBytes, 8));
    std::memset(blocks.back(), 5, kBytes);
  }
  return blocks;
}

void free_all(BlockPool& pool, std::vector<void*>& blocks) {
  for (void* b : blocks) pool.deallocate(b, kBytes, 8);
  blocks.clear();
}

struct Refusing {
  Refusing() {
    leanchan::testing::madvise_refused = 0;
    leanchan::testing::madvise_refusals_left = INT_MAX;
  }
  ~Refusing() { leanchan::testing::madvise_refusals_left = 0; }
};

TEST(BlockPoolGiveBackFailure, APageTheOsKeepsIsCountedAsKept) {
  if (!BlockPool::gives_back_pages()) GTEST_SKIP() << "this backend gives no page back";
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);  // keeps none by choice
  auto blocks = fill_pages(pool, 10);
  {
    Refusing refusing;
    free_all(pool, blocks);
    EXPECT_EQ(leanchan::testing::madvise_refused.load(), 10);
  }
  auto figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 0u);
  EXPECT_EQ(figures.kept_empty_pages, 10u) << "resident and empty, counted nowhere";
  EXPECT_EQ(figures.pages_given_back, 0u);
  pool.trim();  // the OS takes them now
  figures = pool.figures();
  EXPECT_EQ(figures.kept_empty_pages, 0u);
  EXPECT_EQ(figures.pages_given_back, 10u);
}

TEST(BlockPoolGiveBackFailure, TrimKeepsWhatTheOsRefusesAndTriesAgain) {
  if (!BlockPool::gives_back_pages()) GTEST_SKIP() << "this backend gives no page back";
  BlockPool pool;  // keeps 8
  auto blocks = fill_pages(pool, 10);
  free_all(pool, blocks);
  ASSERT_EQ(pool.figures().kept_empty_pages, 8u);
  ASSERT_EQ(pool.figures().pages_given_back, 2u);
  {
    Refusing refusing;
    pool.trim();
    EXPECT_EQ(leanchan::testing::madvise_refused.load(), 8);
  }
  EXPECT_EQ(pool.figures().kept_empty_pages, 8u) << "trim counted refused pages as given back";
  EXPECT_EQ(pool.figures().pages_given_back, 2u);
  // Kept pages are reused first, refused ones included.
  blocks = fill_pages(pool, 8);
  EXPECT_EQ(pool.figures().kept_empty_pages, 0u);
  EXPECT_EQ(pool.figures().resident_pages, 8u);
  free_all(pool, blocks);
  pool.trim();
  EXPECT_EQ(pool.figures().kept_empty_pages, 0u);
  EXPECT_EQ(pool.figures().pages_given_back, 10u);
}

}  // namespace
