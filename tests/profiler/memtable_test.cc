// SPDX-License-Identifier: MIT
// The report's rows are the channel's real costs: every leanchan row matches
// docs/memory.md's formulas to the byte, for every message size and block size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "designs.h"
#include "leanchan/block_pool.h"
#include "options.h"

namespace {

using leanchan::report::all_designs;
using leanchan::report::MemoryRow;

// The design named `name`; fails the test (and returns null) if absent.
const leanchan::report::Design* find_design(const std::string& name) {
  for (const auto& design : all_designs()) {
    if (design.name == name) return &design;
  }
  ADD_FAILURE() << "no design named " << name;
  return nullptr;
}

TEST(Memtable, LeanchanRowsMatchTheFormulasExactly) {
  int leanchan_designs = 0;
  for (const auto& design : all_designs()) {
    if (design.name.rfind("leanchan-b", 0) != 0) continue;
    ++leanchan_designs;
    const auto b = static_cast<std::int64_t>(design.block_size);
    for (std::size_t s : leanchan::report::supported_message_sizes()) {
      for (std::size_t c : {1u, 2u, 16u, 32u, 100u, 1024u}) {
        SCOPED_TRACE(design.name + " S=" + std::to_string(s) + " C=" + std::to_string(c));
        const MemoryRow row = design.measure(s, c);
        const std::int64_t slots = std::min<std::int64_t>(b, static_cast<std::int64_t>(c));
        const std::int64_t block = 16 + slots * static_cast<std::int64_t>(s);
        const std::int64_t blocks = (static_cast<std::int64_t>(c) + slots - 1) / slots;
        EXPECT_EQ(row.create, 64);
        EXPECT_EQ(row.fill, 64 + blocks * block);
        EXPECT_EQ(row.drain, 64 + block);
        EXPECT_EQ(row.fill_allocations, static_cast<std::uint64_t>(blocks));
        EXPECT_TRUE(row.matches());
      }
    }
  }
  EXPECT_EQ(leanchan_designs,
            6);  // plus the tokio-style row, tested below  // block sizes 1, 2, 4, 8, 16, 32
}

TEST(Memtable, TokioStyleRowsMatchTokiosFormulaExactly) {
  const auto* design = find_design("tokio-style");
  ASSERT_NE(design, nullptr);
  for (std::size_t s : leanchan::report::supported_message_sizes()) {
    for (std::size_t c : {1u, 16u, 32u, 100u, 1024u}) {
      SCOPED_TRACE("S=" + std::to_string(s) + " C=" + std::to_string(c));
      const MemoryRow row = design->measure(s, c);
      const auto block = static_cast<std::int64_t>(32 + 32 * s);
      EXPECT_EQ(row.create, 176 + block);  // the Chan + a first block, at any capacity
      EXPECT_TRUE(row.matches());
    }
  }
  // docs/problem.md's row for Tokio 1.24, 1024-byte messages, capacity 1024:
  // 176 + 32,800; 176 + 32 * 32,800; 176 + 4 * 32,800.
  const MemoryRow big = design->measure(1024, 1024);
  EXPECT_EQ(big.create, 32976);
  EXPECT_EQ(big.fill, 1049776);
  EXPECT_EQ(big.drain, 131376);
}

leanchan::report::RawOptions defaults();

TEST(Memtable, ManyChannelsHeapFiguresAreExactPerChannel) {
  const auto* design = find_design("leanchan-b8");
  ASSERT_NE(design, nullptr);
  const auto row = design->many_channels(1000, 16, 16, leanchan::Retention::kKeepOne, nullptr);
  constexpr double kBlock = 16 + 8 * 24;  // capacity 16 >= B = 8: 8 slots per block
  EXPECT_EQ(row.heap_idle, 64.0);
  EXPECT_EQ(row.heap_burst, 64.0 + 2 * kBlock);  // ceil(16 / 8) blocks
  EXPECT_EQ(row.heap_drained, 64.0 + kBlock);
  EXPECT_EQ(row.retain, "one");
  EXPECT_EQ(row.burst2_allocs, 1.0);  // the kept block serves 8, one more for the other 8
}

TEST(Memtable, ManyChannelsKeepNoneDrainsToTheControlBlock) {
  const auto* design = find_design("leanchan-b8");
  ASSERT_NE(design, nullptr);
  const auto row = design->many_channels(1000, 16, 16, leanchan::Retention::kKeepNone, nullptr);
  constexpr double kBlock = 16 + 8 * 24;
  EXPECT_EQ(row.heap_burst, 64.0 + 2 * kBlock);
  EXPECT_EQ(row.heap_drained, 64.0);  // no block kept
  EXPECT_EQ(row.retain, "none");
  EXPECT_EQ(row.burst2_allocs, 2.0);  // ceil(16 / 8), the price of keeping none
}

// --memory=pool: the channels' control blocks and blocks all come from the
// pool, none from the heap, and the pool's own count is exact: 72 bytes of
// control block per channel after the drain (64 + the resource pointer).
TEST(Memtable, ManyChannelsFromAPoolTakeNothingFromTheHeap) {
  if (!leanchan::BlockPool::gives_back_pages()) {
    GTEST_SKIP() << "the portable backend takes its pages from the aligned operator new";
  }
  const auto* design = find_design("leanchan-b8");
  ASSERT_NE(design, nullptr);
  ASSERT_TRUE(design->has_memory_resource);
  leanchan::BlockPool pool;
  const auto row = design->many_channels(1000, 16, 16, leanchan::Retention::kKeepNone, &pool);
  EXPECT_EQ(row.heap_idle, 0.0);
  EXPECT_EQ(row.heap_burst, 0.0);
  EXPECT_EQ(row.heap_drained, 0.0);
  EXPECT_EQ(pool.figures().live_bytes, 0u);  // the channels are gone again
  EXPECT_FALSE(find_design("tokio-style")->has_memory_resource);
}

TEST(Memtable, MemoryFlagIsValidated) {
  leanchan::report::RawOptions raw = defaults();
  raw.memory = "default,heap";
  const auto options = leanchan::report::validate_options(raw);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().message(), "--memory: unknown memory 'heap' (known: default, pool)");
  raw.memory = "pool,default";
  const auto both = leanchan::report::validate_options(raw);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->memories, (std::vector<std::string>{"pool", "default"}));
  raw.memory = "pool,default,pool";  // a row twice: refused, as in every list flag
  const auto twice = leanchan::report::validate_options(raw);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "--memory: 'pool' is listed twice in 'pool,default,pool'");
}

TEST(Memtable, RetainFlagIsValidated) {
  leanchan::report::RawOptions raw = defaults();
  raw.retain = "one,some";
  const auto options = leanchan::report::validate_options(raw);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().message(),
            "--retain: unknown policy 'some' (known: none, one, or 0..64 blocks)");
  raw.retain = "65";
  EXPECT_FALSE(leanchan::report::validate_options(raw).ok());
  raw.retain = "one,one";
  EXPECT_FALSE(leanchan::report::validate_options(raw).ok());  // listed twice
  raw.retain = "one,1,3";  // 1 is "one": one policy, measured once
  const auto deduplicated = leanchan::report::validate_options(raw);
  ASSERT_TRUE(deduplicated.ok());
  ASSERT_EQ(deduplicated->retentions.size(), 2u);
  EXPECT_EQ(deduplicated->retentions[1], leanchan::Retention::keep(3));
}

leanchan::report::RawOptions defaults() {
  leanchan::report::RawOptions raw;
  raw.designs = "all";
  raw.message_sizes = "8,24";
  raw.capacities = "1,16";
  raw.format = "markdown";
  raw.many_channels = "none";
  return raw;
}

TEST(Memtable, OptionsAcceptTheDefaults) {
  auto options = leanchan::report::validate_options(defaults());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->designs.size(), all_designs().size());
  EXPECT_TRUE(options->many_channels.empty());
}

TEST(Memtable, OptionsNameEachProblem) {
  auto check = [](auto mutate, const std::string& expected) {
    auto raw = defaults();
    mutate(raw);
    auto options = leanchan::report::validate_options(raw);
    ASSERT_FALSE(options.ok());
    EXPECT_EQ(std::string(options.status().message()), expected);
  };
  using Raw = leanchan::report::RawOptions;
  check([](Raw& r) { r.capacities = "16,0"; },
        "--capacities: capacity must be between 1 and 16777216, got 0");
  check([](Raw& r) { r.capacities = "x"; }, "--capacities: 'x' is not a non-negative whole number");
  check([](Raw& r) { r.message_sizes = "100"; },
        "--message_sizes: message size 100 is not built into this report (built: 8, 24, 128, "
        "250, 1024)");
  check([](Raw& r) { r.format = "xml"; },
        "--format: unknown format 'xml' (known: markdown, csv, json)");
  check([](Raw& r) { r.many_channels = "0"; },
        "--many_channels: a channel count must be between 1 and 10000000, got 0");
  check([](Raw& r) { r.burst = 17; }, "--burst: 17 messages do not fit --many_capacity=16");
}

}  // namespace
