// SPDX-License-Identifier: MIT
// BlockPool: size classes and slots by the header's formula, packing,
// alignment, own mappings, a page given back when its last slot is freed
// (on any thread), no global heap, exact channel figures, and allocations
// racing cross-thread frees without two owners for a slot.
#include "leanchan/block_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/profiler/heap_probe.h"
#include "memory_support.h"
#include "page_probe.h"
#include "test_support.h"

namespace {

using leanchan::BlockPool;
using leanchan::Retention;
using leanchan::testing::block_bytes;
using leanchan::testing::drain;
using leanchan::testing::kControlBytes;
using leanchan::testing::page_resident;

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

TEST(BlockPool, SizeClassesAndSlotsFollowTheFormula) {
  BlockPool pool;
  const std::size_t page = pool.page_size();
  ASSERT_GE(page, 4096u);
  EXPECT_EQ(pool.size_class(1, 1), 64u);
  EXPECT_EQ(pool.size_class(48, 8), 64u);
  EXPECT_EQ(pool.size_class(65, 8), 80u);
  EXPECT_EQ(pool.size_class(kControlBytes, 8), 80u);
  EXPECT_EQ(pool.size_class(784, 8), 784u);
  EXPECT_EQ(pool.size_class(100, 64), 128u);
  EXPECT_EQ(pool.size_class(100, 1024), 1024u);
  EXPECT_EQ(pool.size_class(2048, 16), 2048u);
  EXPECT_EQ(pool.size_class(2049, 16), 0u);   // an own mapping
  EXPECT_EQ(pool.size_class(100, 4096), 0u);  // 4096 > kLargestClass
  EXPECT_EQ(pool.size_class(1, 2 * page), 0u);
  for (std::size_t c : {64u, 80u, 784u, 2048u}) {
    EXPECT_EQ(pool.slots_per_page(c), std::min<std::size_t>(60, page / c)) << c;
  }
}

TEST(BlockPool, PacksAClassIntoAPageAndGivesThePageBackWithItsLastSlot) {
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  const std::size_t page = pool.page_size();
  const std::size_t n = pool.slots_per_page(80);  // 51 on 4 KiB pages
  std::vector<unsigned char*> slots;
  for (std::size_t i = 0; i < n; ++i) {
    slots.push_back(static_cast<unsigned char*>(pool.allocate(72, 8)));
    std::memset(slots.back(), 0xAB, 72);
  }
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(slots[0]) % page, 0u);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(slots[i], slots[0] + i * 80) << i;
  auto figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 1u);
  EXPECT_EQ(figures.live_bytes, n * 72);
  EXPECT_EQ(figures.live_allocations, n);
  void* next_page = pool.allocate(72, 8);  // the page is full: a second one
  EXPECT_EQ(pool.figures().resident_pages, 2u);
  EXPECT_NE(reinterpret_cast<std::uintptr_t>(next_page) / page,
            reinterpret_cast<std::uintptr_t>(slots[0]) / page);
  for (std::size_t i = 1; i < n; ++i) pool.deallocate(slots[i], 72, 8);
  figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 2u);  // slot 0 still lives there
  EXPECT_EQ(figures.pages_given_back, 0u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_TRUE(page_resident(slots[0]));
  }
  pool.deallocate(slots[0], 72, 8);
  figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 1u);
  EXPECT_EQ(figures.live_allocations, 1u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(figures.pages_given_back, 1u);
    EXPECT_FALSE(page_resident(slots[0])) << "the emptied page is still resident";
  }
  void* again = pool.allocate(100, 8);  // class 112: a page of its own
  pool.deallocate(again, 100, 8);
  pool.deallocate(next_page, 72, 8);
  figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 0u);
  EXPECT_EQ(figures.live_bytes, 0u);
  EXPECT_EQ(figures.live_allocations, 0u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(figures.pages_given_back, 3u);
  }
}

TEST(BlockPool, HonoursEveryAlignmentUpToTwoPages) {
  BlockPool pool;
  const std::size_t page = pool.page_size();
  struct Allocation {
    void* p;
    std::size_t bytes;
    std::size_t alignment;
  };
  std::vector<Allocation> live;
  for (std::size_t alignment = 1; alignment <= 2 * page; alignment *= 2) {
    for (std::size_t bytes : {std::size_t{1}, std::size_t{100}, std::size_t{3000}}) {
      void* p = pool.allocate(bytes, alignment);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignment, 0u) << bytes << " " << alignment;
      std::memset(p, 0x5A, bytes);
      live.push_back({p, bytes, alignment});
    }
  }
  void* p = pool.allocate(24, alignof(std::max_align_t));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t), 0u);
  live.push_back({p, 24, alignof(std::max_align_t)});
  for (const Allocation& a : live) pool.deallocate(a.p, a.bytes, a.alignment);
  const auto figures = pool.figures();
  EXPECT_EQ(figures.live_allocations, 0u);
  EXPECT_EQ(figures.resident_pages, 0u);
}

TEST(BlockPool, KeepsAsManyEmptiedPagesAsAskedUntilTrimmed) {
  if (!BlockPool::gives_back_pages()) {
    GTEST_SKIP() << "the portable backend keeps every emptied page (gives_back_pages() is false)";
  }
  BlockPool pool(leanchan::BlockPoolOptions{.keep_empty_pages = 2});
  const std::size_t n = pool.slots_per_page(784);
  // Three full pages of 784-byte blocks, then every block freed.
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < 3 * n; ++i) {
    blocks.push_back(pool.allocate(784, 8));
    std::memset(blocks.back(), 7, 784);
  }
  EXPECT_EQ(pool.figures().resident_pages, 3u);
  for (void* b : blocks) pool.deallocate(b, 784, 8);
  auto figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 0u);
  EXPECT_EQ(figures.kept_empty_pages, 2u);  // the first two emptied pages
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(figures.pages_given_back, 1u);  // the third
    EXPECT_TRUE(page_resident(blocks[0]));
    EXPECT_TRUE(page_resident(blocks[n]));
    EXPECT_FALSE(page_resident(blocks[2 * n]));
  }
  // A kept page is reused first (no fault, no count of a new page given back).
  void* again = pool.allocate(784, 8);
  EXPECT_EQ(pool.figures().kept_empty_pages, 1u);
  pool.deallocate(again, 784, 8);  // kept again: the limit allows
  EXPECT_EQ(pool.figures().kept_empty_pages, 2u);
  pool.trim();
  figures = pool.figures();
  EXPECT_EQ(figures.kept_empty_pages, 0u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(figures.pages_given_back, 3u);
    for (void* b : blocks) EXPECT_FALSE(page_resident(b));
  }
}

// The default keeps kDefaultKeptPages (8) emptied pages, pool-wide, and
// gives back the rest at once; trim() gives back the 8.
TEST(BlockPool, TheDefaultKeepsEightEmptiedPages) {
  if (!BlockPool::gives_back_pages()) {
    GTEST_SKIP() << "the portable backend keeps every emptied page (gives_back_pages() is false)";
  }
  BlockPool pool;
  EXPECT_EQ(leanchan::BlockPoolOptions{}.keep_empty_pages, 8u);
  const std::size_t n = pool.slots_per_page(784);
  constexpr std::size_t kPages = 10;
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < kPages * n; ++i) {
    blocks.push_back(pool.allocate(784, 8));
    std::memset(blocks.back(), 7, 784);
  }
  EXPECT_EQ(pool.figures().resident_pages, kPages);
  for (void* b : blocks) pool.deallocate(b, 784, 8);
  auto figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 0u);
  EXPECT_EQ(figures.kept_empty_pages, 8u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(figures.pages_given_back, kPages - 8);
  }
  pool.trim();
  figures = pool.figures();
  EXPECT_EQ(figures.kept_empty_pages, 0u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(figures.pages_given_back, kPages);
    for (void* b : blocks) EXPECT_FALSE(page_resident(b));
  }
}

TEST(BlockPool, LargeRequestsGetMappingsOfTheirOwn) {
  BlockPool pool;
  const std::size_t page = pool.page_size();
  const auto before = pool.figures();
  // A block of 4 one-KiB slots: 16 + 4 * 1024 = 4112 bytes.
  const std::size_t bytes = 16 + 4 * 1024;
  void* block = pool.allocate(bytes, 16);
  const std::size_t length = round_up(64 + bytes, page);  // the record, then the block
  auto figures = pool.figures();
  EXPECT_EQ(figures.mapped_bytes - before.mapped_bytes, length);
  EXPECT_EQ(figures.resident_pages, length / page);
  EXPECT_EQ(figures.live_bytes, bytes);
  void* aligned = pool.allocate(100, 2 * page);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % (2 * page), 0u);
  const std::size_t aligned_length = round_up(2 * page + 100, page);
  figures = pool.figures();
  EXPECT_EQ(figures.mapped_bytes - before.mapped_bytes, length + aligned_length);
  EXPECT_EQ(figures.resident_pages, (length + aligned_length) / page);
  std::memset(block, 1, bytes);
  pool.deallocate(block, bytes, 16);
  pool.deallocate(aligned, 100, 2 * page);
  figures = pool.figures();
  EXPECT_EQ(figures.mapped_bytes, before.mapped_bytes);
  EXPECT_EQ(figures.resident_pages, 0u);
  EXPECT_EQ(figures.live_bytes, 0u);
}

// A request no mapping can hold is refused with std::bad_alloc, as
// new_delete_resource() refuses it, and the pool stays usable. Before the
// check, an alignment of 2^63 wrapped the mapping's length: the pool
// mapped one page and then unmapped from address 0x2000 upwards.
TEST(BlockPool, ARequestNoMappingCanHoldIsRefused) {
  BlockPool pool;
  const auto before = pool.figures();
  // Read at run time: memory_resource::allocate tells the compiler that
  // its result is aligned so, and Clang rejects a constant this large.
  volatile std::size_t top_bit = std::size_t{1} << 63;
  const std::size_t top = top_bit;
  EXPECT_THROW((void)pool.allocate(8192, top), std::bad_alloc);
  EXPECT_THROW((void)pool.allocate(64, top), std::bad_alloc);
  EXPECT_THROW((void)pool.allocate(8192, top >> 1), std::bad_alloc);
  EXPECT_THROW((void)pool.allocate(top, 16), std::bad_alloc);
  EXPECT_THROW((void)pool.allocate(~std::size_t{0} - 4096, 16), std::bad_alloc);
  const auto after = pool.figures();
  EXPECT_EQ(after.mapped_bytes, before.mapped_bytes);
  EXPECT_EQ(after.live_allocations, 0u);
  void* block = pool.allocate(8192, 16);  // still usable
  std::memset(block, 1, 8192);
  pool.deallocate(block, 8192, 16);
  EXPECT_EQ(pool.figures().mapped_bytes, before.mapped_bytes);
}

TEST(BlockPool, APageFreedOnAnotherThreadIsGivenBack) {
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  const std::size_t n = pool.slots_per_page(784);  // 5 blocks of 32 24-byte slots
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < n; ++i) {
    blocks.push_back(pool.allocate(784, 8));
    std::memset(blocks.back(), 3, 784);
  }
  std::thread receiver([&] {
    for (void* b : blocks) pool.deallocate(b, 784, 8);
  });
  receiver.join();
  const auto figures = pool.figures();
  EXPECT_EQ(figures.resident_pages, 0u);
  EXPECT_EQ(figures.live_allocations, 0u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(figures.pages_given_back, 1u);
    EXPECT_FALSE(page_resident(blocks[0]));
  }
}

TEST(BlockPool, TakesNothingFromTheGlobalHeap) {
  if (!BlockPool::gives_back_pages()) {
    GTEST_SKIP() << "the portable backend takes its pages from the aligned operator new";
  }
  leanchan::profiler::HeapProbe probe;
  {
    BlockPool pool;
    std::vector<void*> small;
    small.reserve(1000);
    const auto reserved = probe.allocations();
    for (std::size_t i = 0; i < 1000; ++i) small.push_back(pool.allocate(16 + i % 200, 8));
    void* large = pool.allocate(10000, 64);
    for (std::size_t i = 0; i < 1000; ++i) pool.deallocate(small[i], 16 + i % 200, 8);
    pool.deallocate(large, 10000, 64);
    EXPECT_EQ(probe.allocations(), reserved);
  }
  EXPECT_EQ(probe.allocations(), 1u);  // the vector's reserve, nothing else
}

TEST(BlockPool, AChannelsFiguresThroughThePool) {
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  constexpr std::size_t kBlock = block_bytes<std::uint64_t, 4>(16);  // 16 + 4 * 8 = 48
  {
    auto [tx, rx] = leanchan::channel<std::uint64_t, 4>(
        16, {.retention = Retention::kKeepNone, .memory = &pool});
    for (std::uint64_t i = 0; i < 16; ++i) ASSERT_TRUE(tx.try_send(i).ok());
    auto figures = pool.figures();
    EXPECT_EQ(figures.live_bytes, kControlBytes + 4 * kBlock);
    EXPECT_EQ(figures.live_allocations, 5u);
    // Class 80 (the control block) and class 64 (the four blocks): a page each.
    EXPECT_EQ(figures.resident_pages, 2u);
    EXPECT_EQ(drain(rx), 16u);
    figures = pool.figures();
    EXPECT_EQ(figures.live_bytes, kControlBytes);
    EXPECT_EQ(figures.resident_pages, 1u);
    if (BlockPool::gives_back_pages()) {
      EXPECT_EQ(figures.pages_given_back, 1u);
    }
  }
  EXPECT_EQ(pool.figures().resident_pages, 0u);
}

// Producers allocate mixed sizes, stamp each allocation, and pass it to a
// freer through a channel; some they free themselves. A slot handed to two
// owners at once would break a stamp.
void race_cross_thread_frees(BlockPool& pool) {
  struct Item {
    unsigned char* p;
    std::size_t bytes;
  };
  constexpr int kProducers = 4;
  const auto per_producer =
      static_cast<std::size_t>(std::max(500.0, 50000.0 * leanchan::testing::stress_scale()));
  constexpr std::size_t kSizes[] = {24, 72, 200, 784, 2000, 5000};
  auto [tx, rx] = leanchan::channel<Item>(256);
  std::atomic<bool> broken{false};
  auto check_and_free = [&](const Item& item) {
    const unsigned char stamp = item.p[0];
    for (std::size_t i = 1; i < item.bytes; ++i) {
      if (item.p[i] != stamp) {
        broken = true;
        break;
      }
    }
    pool.deallocate(item.p, item.bytes, 8);
  };
  std::thread freer([&, rx = std::move(rx)]() mutable {
    while (auto item = rx.recv()) check_and_free(*item);
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < kProducers; ++t) {
    producers.emplace_back([&, t, tx = tx]() mutable {
      for (std::size_t i = 0; i < per_producer; ++i) {
        const std::size_t bytes = kSizes[(i + static_cast<std::size_t>(t)) % std::size(kSizes)];
        auto* p = static_cast<unsigned char*>(pool.allocate(bytes, 8));
        std::memset(p, static_cast<int>((i * kProducers + static_cast<std::size_t>(t)) & 0xFF),
                    bytes);
        if (i % 3 == 0) {
          check_and_free(Item{p, bytes});
        } else {
          ASSERT_TRUE(tx.send(Item{p, bytes}).ok());
        }
      }
    });
  }
  { auto gone = std::move(tx); }
  for (auto& t : producers) t.join();
  freer.join();
  EXPECT_FALSE(broken) << "two owners wrote one slot";
  const auto figures = pool.figures();
  EXPECT_EQ(figures.live_allocations, 0u);
  EXPECT_EQ(figures.live_bytes, 0u);
  EXPECT_EQ(figures.resident_pages, 0u);
}

TEST(BlockPool, AllocationsRacingCrossThreadFreesNeverShareASlot) {
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  race_cross_thread_frees(pool);
  if (BlockPool::gives_back_pages()) {  // else every emptied page counts as kept
    EXPECT_EQ(pool.figures().kept_empty_pages, 0u);
  }
}

TEST(BlockPool, KeptPagesRacingCrossThreadFreesStayWithinTheLimit) {
  BlockPool pool(leanchan::BlockPoolOptions{.keep_empty_pages = 4});
  // The portable backend keeps every emptied page, and trim() is a no-op
  // there: only the slots' owners are checked.
  const bool gives_back = BlockPool::gives_back_pages();
  race_cross_thread_frees(pool);
  if (gives_back) {
    EXPECT_LE(pool.figures().kept_empty_pages, 4u);
  }
  pool.trim();
  if (gives_back) {
    EXPECT_EQ(pool.figures().kept_empty_pages, 0u);
  }
  race_cross_thread_frees(pool);  // the trimmed pages are reused
  pool.trim();
  if (gives_back) {
    EXPECT_EQ(pool.figures().kept_empty_pages, 0u);
  }
}

#ifndef NDEBUG
TEST(BlockPoolDeathTest, DestroyedWithLiveAllocationsAsserts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto* pool = new BlockPool();
        (void)pool->allocate(64, 8);
        delete pool;
      },
      "destroyed while allocations from it are live");
}
#endif

}  // namespace
