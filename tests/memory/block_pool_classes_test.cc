// SPDX-License-Identifier: MIT
// BlockPool across size classes: a page emptied while it waits on one
// class's partial stack serves the next allocation of any class before the
// pool maps another chunk, on one thread (exact) and with threads
// allocating, freeing across threads and trimming at once (stamps catch a
// slot with two owners; the mapped address space stays bounded).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "leanchan/block_pool.h"
#include "memory_support.h"
#include "test_support.h"

namespace {

using leanchan::BlockPool;

constexpr std::size_t kChunk = std::size_t{2} << 20;

struct Allocation {
  unsigned char* p;
  std::size_t bytes;
};

// Fills `pages` whole pages of class `bytes` (one thread takes a class's
// slots page by page), each allocation stamped with `stamp`.
std::vector<Allocation> fill_pages(BlockPool& pool, std::size_t bytes, std::size_t pages,
                                   unsigned char stamp) {
  std::vector<Allocation> out;
  const std::size_t n = pages * pool.slots_per_page(pool.size_class(bytes, 16));
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto* p = static_cast<unsigned char*>(pool.allocate(bytes, 16));
    std::memset(p, stamp, bytes);
    out.push_back({p, bytes});
  }
  return out;
}

// True if every byte still holds the stamp it was given.
bool intact(const std::vector<Allocation>& batch, unsigned char stamp) {
  return std::all_of(batch.begin(), batch.end(), [stamp](const Allocation& a) {
    return std::all_of(a.p, a.p + a.bytes, [stamp](unsigned char b) { return b == stamp; });
  });
}

void free_all(BlockPool& pool, std::vector<Allocation>& batch) {
  for (const Allocation& a : batch) pool.deallocate(a.p, a.bytes, 16);
  batch.clear();
}

// Every page of each burst empties while listed on its class's partial
// stack. Ten classes of 300 pages each need 3,000 pages in all but never
// more than 300 at once: one chunk (512 pages, its descriptors in the
// first few) holds them, with or without kept pages.
void bursts_of_ten_classes(const leanchan::BlockPoolOptions& options) {
  BlockPool pool(options);
  constexpr std::size_t kPages = 300;
  std::size_t mapped_after_first = 0;
  for (std::size_t c = 0; c < 10; ++c) {
    const std::size_t bytes = 64 + 16 * c;
    const auto stamp = static_cast<unsigned char>(c + 1);
    auto batch = fill_pages(pool, bytes, kPages, stamp);
    EXPECT_EQ(pool.figures().resident_pages, kPages) << bytes;
    EXPECT_TRUE(intact(batch, stamp)) << bytes;
    free_all(pool, batch);
    if (c == 0) mapped_after_first = pool.figures().mapped_bytes;
    EXPECT_EQ(pool.figures().mapped_bytes, mapped_after_first) << "class " << bytes;
  }
  EXPECT_EQ(pool.figures().resident_pages, 0u);
  if (BlockPool::gives_back_pages()) {  // else every emptied page counts as kept
    EXPECT_LE(pool.figures().kept_empty_pages, options.keep_empty_pages);
    pool.trim();
    EXPECT_EQ(pool.figures().kept_empty_pages, 0u);
  }
}

TEST(BlockPoolClasses, PagesEmptiedInOneClassServeTheNextClassBeforeANewChunk) {
  bursts_of_ten_classes(leanchan::testing::kGiveBackAtOnce);
}

TEST(BlockPoolClasses, KeptPagesEmptiedInOneClassServeTheNextClass) {
  bursts_of_ten_classes(leanchan::BlockPoolOptions{.keep_empty_pages = 8});
}

// Four threads each fill a few pages of a class that changes every round
// (all 125 classes in turn), check their stamps, and free them: half
// themselves, half handed to the next thread, which frees them in its
// next round; a fifth trims. A thread's live pages are its own batch (40)
// and up to three halves in its mailbox (20 each): 400 pages in all, under
// a chunk's 509. Pages stranded per class would need a chunk every few
// rounds (11 chunks in a run without the sweep).
TEST(BlockPoolClasses, ThreadsChurningEveryClassShareTheEmptiedPages) {
  BlockPool pool(leanchan::BlockPoolOptions{.keep_empty_pages = 4});
  constexpr std::size_t kThreads = 4;
  constexpr std::size_t kPages = 40;
  constexpr std::size_t kMailboxLimit = 3;
  constexpr std::size_t kClasses =
      (BlockPool::kLargestClass - BlockPool::kSmallestClass) / BlockPool::kClassStep + 1;
  const auto rounds = static_cast<std::size_t>(
      std::max(2.0 * kClasses / kThreads, 400.0 * leanchan::testing::stress_scale()));
  struct Mailbox {
    std::mutex mutex;
    std::vector<std::vector<Allocation>> batches;
  };
  Mailbox mailboxes[kThreads];
  std::atomic<bool> broken{false};
  std::atomic<std::size_t> running{kThreads};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t r = 0; r < rounds; ++r) {
        std::vector<std::vector<Allocation>> received;
        {
          std::lock_guard lock(mailboxes[t].mutex);
          received.swap(mailboxes[t].batches);
        }
        for (auto& batch : received) free_all(pool, batch);
        const std::size_t c = (r * kThreads + t) % kClasses;
        const std::size_t bytes = BlockPool::kSmallestClass + BlockPool::kClassStep * c;
        const auto stamp = static_cast<unsigned char>(1 + (r * kThreads + t) % 251);
        auto batch = fill_pages(pool, bytes, kPages, stamp);
        if (!intact(batch, stamp)) broken = true;
        std::vector<Allocation> handed(
            batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2), batch.end());
        batch.resize(batch.size() / 2);
        free_all(pool, batch);
        Mailbox& next = mailboxes[(t + 1) % kThreads];
        std::unique_lock lock(next.mutex);
        if (next.batches.size() < kMailboxLimit) {
          next.batches.push_back(std::move(handed));
        } else {
          lock.unlock();
          free_all(pool, handed);
        }
      }
      running.fetch_sub(1);
    });
  }
  std::thread trimmer([&] {
    while (running.load() != 0) {
      pool.trim();
      std::this_thread::yield();
    }
  });
  for (auto& t : threads) t.join();
  trimmer.join();
  for (auto& mailbox : mailboxes) {
    for (auto& batch : mailbox.batches) free_all(pool, batch);
  }
  EXPECT_FALSE(broken) << "two owners wrote one slot";
  const auto figures = pool.figures();
  EXPECT_EQ(figures.live_allocations, 0u);
  EXPECT_EQ(figures.resident_pages, 0u);
  if (BlockPool::gives_back_pages()) {
    EXPECT_LE(figures.kept_empty_pages, 4u);
  }
  // The live pages (at most 400, and pages closing meanwhile) fit in two
  // chunks; the bookkeeping (about 0.5 MiB) is under a third.
  EXPECT_LE(figures.mapped_bytes, 3 * kChunk) << figures.mapped_bytes / kChunk << " chunks";
}

}  // namespace
