// SPDX-License-Identifier: MIT
// 10,000 channels through one BlockPool, each filled then drained: the
// pages the burst took go back to the operating system, so the pool's
// resident pages return to their idle figure, every page a block used
// leaves the resident set (mincore), and so does the process's resident
// memory (/proc/self/statm). Built twice: over glibc malloc and over
// mimalloc (the pool takes nothing from either).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "leanchan/block_pool.h"
#include "leanchan/channel.h"
#include "leanchan/profiler/resident_memory.h"
#include "memory_support.h"
#include "page_probe.h"

#ifndef LEANCHAN_BURST_SUITE
#define LEANCHAN_BURST_SUITE BlockPoolBurst
#endif

// Sanitizers keep shadow memory for the pages the burst touched, so the
// process's resident memory is only compared without them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LEANCHAN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LEANCHAN_SANITIZED 1
#endif
#endif

namespace {

using leanchan::BlockPool;
using leanchan::Retention;
using leanchan::testing::block_bytes;
using leanchan::testing::blocks_for;
using leanchan::testing::drain;
using leanchan::testing::kControlBytes;
using leanchan::testing::page_resident;
using leanchan::testing::RecordingResource;

constexpr std::size_t kChannels = 10000;
constexpr std::size_t kCapacity = 16;
constexpr std::size_t kB = 4;
using Channel =
    std::pair<leanchan::Sender<std::uint64_t, kB>, leanchan::Receiver<std::uint64_t, kB>>;
constexpr std::size_t kBlock = block_bytes<std::uint64_t, kB>(kCapacity);  // 16 + 4 * 8
constexpr std::size_t kBlocksFull = blocks_for<kB>(kCapacity, kCapacity);  // 4
// Slack for the process's own resident memory around the pool's: a new
// chunk's descriptor pages, the test's stack and output.
constexpr std::size_t kRssSlack = 256 * 1024;

std::size_t ceil_div(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

struct Pages {
  std::size_t control;  // pages of the control blocks' class
  std::size_t burst;    // pages of the blocks' class when every channel is full
};

Pages expected_pages(const BlockPool& pool) {
  // One thread, so each class's slots are taken in order, page by page.
  return {ceil_div(kChannels, pool.slots_per_page(pool.size_class(kControlBytes, 8))),
          ceil_div(kChannels * kBlocksFull, pool.slots_per_page(pool.size_class(kBlock, 8)))};
}

std::size_t rss() {
  return leanchan::profiler::resident_bytes().value_or(0);
}

void fill(std::vector<Channel>& channels) {
  for (auto& [tx, rx] : channels) {
    for (std::uint64_t i = 0; i < kCapacity; ++i) ASSERT_TRUE(tx.try_send(i).ok());
  }
}

TEST(LEANCHAN_BURST_SUITE, KeepNoneChannelsGiveEveryBurstPageBack) {
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  const Pages pages = expected_pages(pool);  // 197 and 667 on 4 KiB pages
  RecordingResource recorder(&pool, kBlock, kChannels * kBlocksFull);
  std::vector<Channel> channels;
  channels.reserve(kChannels);
  for (std::size_t c = 0; c < kChannels; ++c) {
    channels.push_back(leanchan::channel<std::uint64_t, kB>(
        kCapacity, {.retention = Retention::kKeepNone, .memory = &recorder}));
  }
  auto figures = pool.figures();
  EXPECT_EQ(figures.live_bytes, kChannels * kControlBytes);
  EXPECT_EQ(figures.resident_pages, pages.control);
  const std::size_t idle_rss = rss();

  for (int round = 0; round < 2; ++round) {
    recorder.clear();
    const std::size_t mapped_before = pool.figures().mapped_bytes;
    fill(channels);
    figures = pool.figures();
    EXPECT_EQ(figures.live_bytes, kChannels * (kControlBytes + kBlocksFull * kBlock));
    EXPECT_EQ(figures.resident_pages, pages.control + pages.burst);
    if (round == 1) {
      EXPECT_EQ(figures.mapped_bytes, mapped_before) << "given-back pages not reused";
    }
    ASSERT_EQ(recorder.addresses().size(), kChannels * kBlocksFull);
    const std::size_t full_rss = rss();
    for (auto& channel : channels) ASSERT_EQ(drain(channel.second), kCapacity);
    figures = pool.figures();
    EXPECT_EQ(figures.live_bytes, kChannels * kControlBytes);
    EXPECT_EQ(figures.resident_pages, pages.control) << "round " << round;
    if (!BlockPool::gives_back_pages()) continue;
    EXPECT_EQ(figures.pages_given_back, (round + 1) * pages.burst);
    std::size_t still_resident = 0;
    for (void* block : recorder.addresses()) still_resident += page_resident(block) ? 1 : 0;
    EXPECT_EQ(still_resident, 0u) << "blocks whose page was not given back";
#if !defined(LEANCHAN_SANITIZED)
    const std::size_t drained_rss = rss();
    EXPECT_GE(full_rss, idle_rss + pages.burst * pool.page_size() - kRssSlack);
    std::printf("resident: idle %zu, full %zu, drained %zu bytes\n", idle_rss, full_rss,
                drained_rss);
    EXPECT_LE(drained_rss, idle_rss + kRssSlack)
        << "idle " << idle_rss << ", full " << full_rss << ", drained " << drained_rss;
#else
    (void)full_rss;
    (void)idle_rss;
#endif
  }
  channels.clear();
  EXPECT_EQ(pool.figures().resident_pages, 0u);
}

TEST(LEANCHAN_BURST_SUITE, KeepOneChannelsHoldTheirPagesUntilShrunk) {
  BlockPool pool(leanchan::testing::kGiveBackAtOnce);
  const Pages pages = expected_pages(pool);
  std::vector<Channel> channels;
  channels.reserve(kChannels);
  for (std::size_t c = 0; c < kChannels; ++c) {
    channels.push_back(leanchan::channel<std::uint64_t, kB>(kCapacity, {.memory = &pool}));
  }
  fill(channels);
  EXPECT_EQ(pool.figures().resident_pages, pages.control + pages.burst);
  for (auto& channel : channels) ASSERT_EQ(drain(channel.second), kCapacity);
  // Each channel keeps one of its 4 blocks; a page holds the blocks of
  // whole channels (60 slots = 15 channels), so every page keeps some.
  auto figures = pool.figures();
  EXPECT_EQ(figures.live_bytes, kChannels * (kControlBytes + kBlock));
  EXPECT_EQ(figures.resident_pages, pages.control + pages.burst);
  for (auto& channel : channels) EXPECT_EQ(channel.second.shrink_to_fit(), kBlock);
  figures = pool.figures();
  EXPECT_EQ(figures.live_bytes, kChannels * kControlBytes);
  EXPECT_EQ(figures.resident_pages, pages.control);
  if (BlockPool::gives_back_pages()) {
    EXPECT_EQ(figures.pages_given_back, pages.burst);
  }
}

}  // namespace
