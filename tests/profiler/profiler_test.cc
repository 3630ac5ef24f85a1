// SPDX-License-Identifier: MIT
// The counting hook counts exactly: every operator form gives exact deltas,
// and four threads allocating at once leave the counters consistent.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include "leanchan/profiler/heap_probe.h"
#include "leanchan/profiler/resident_memory.h"

namespace {

using leanchan::profiler::HeapProbe;

// Keeps the optimizer from removing a new-expression / delete pair.
void* volatile g_sink = nullptr;

struct alignas(64) Wide {
  unsigned char bytes[100];
};

TEST(HeapHook, IsActiveOverGlibcMalloc) {
  EXPECT_TRUE(leanchan::profiler::heap_hook_active());
  EXPECT_STREQ(leanchan::profiler::heap_backend_name(), "glibc malloc");
}

TEST(HeapHook, PlainAndArrayFormsCountExactly) {
  HeapProbe probe;
  void* plain = ::operator new(100);
  EXPECT_EQ(probe.live_bytes(), 100);
  void* array = ::operator new[](37);
  EXPECT_EQ(probe.live_bytes(), 137);
  EXPECT_GE(probe.usable_bytes(), 137);
  EXPECT_EQ(probe.allocations(), 2u);
  ::operator delete(plain);
  ::operator delete[](array);
  EXPECT_EQ(probe.live_bytes(), 0);
  EXPECT_EQ(probe.usable_bytes(), 0);
  EXPECT_EQ(probe.frees(), 2u);
}

TEST(HeapHook, SizedNothrowAndAlignedFormsCountExactly) {
  HeapProbe probe;
  void* sized = ::operator new(24);
  void* nothrow = ::operator new(48, std::nothrow);
  void* nothrow_array = ::operator new[](8, std::nothrow);
  void* aligned = ::operator new(200, std::align_val_t(64));
  void* aligned_array = ::operator new[](64, std::align_val_t(128));
  void* aligned_nothrow = ::operator new(10, std::align_val_t(256), std::nothrow);
  void* aligned_array_nothrow = ::operator new[](5, std::align_val_t(32), std::nothrow);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned_array) % 128, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned_nothrow) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned_array_nothrow) % 32, 0u);
  EXPECT_EQ(probe.live_bytes(), 24 + 48 + 8 + 200 + 64 + 10 + 5);
  EXPECT_EQ(probe.allocations(), 7u);
  ::operator delete(sized, 24);
  ::operator delete(nothrow, std::nothrow);
  ::operator delete[](nothrow_array, std::nothrow);
  ::operator delete(aligned, 200, std::align_val_t(64));
  ::operator delete[](aligned_array, std::align_val_t(128));
  ::operator delete(aligned_nothrow, std::align_val_t(256), std::nothrow);
  ::operator delete[](aligned_array_nothrow, 5, std::align_val_t(32));
  EXPECT_EQ(probe.live_bytes(), 0);
  EXPECT_EQ(probe.frees(), 7u);
}

TEST(HeapHook, NewExpressionsCountTheirObjects) {
  HeapProbe probe;
  auto* wide = new Wide;
  g_sink = wide;
  EXPECT_EQ(probe.live_bytes(), static_cast<std::int64_t>(sizeof(Wide)));
  auto* chars = new char[333];
  g_sink = chars;
  EXPECT_EQ(probe.live_bytes(), static_cast<std::int64_t>(sizeof(Wide)) + 333);
  delete wide;
  delete[] chars;
  EXPECT_EQ(probe.live_bytes(), 0);
}

TEST(HeapHook, PeakFollowsTheHighestLiveValue) {
  leanchan::profiler::reset_heap_peak();
  const auto base = leanchan::profiler::read_heap_counters();
  void* big = ::operator new(5000);
  ::operator delete(big);
  const auto after = leanchan::profiler::read_heap_counters();
  EXPECT_EQ(after.peak_requested_bytes - base.live_requested_bytes, 5000);
  EXPECT_EQ(after.live_requested_bytes, base.live_requested_bytes);
}

TEST(HeapHook, FourThreadsAllocatingAtOnceLeaveConsistentCounters) {
  HeapProbe probe;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ready] {
      std::mt19937 random(static_cast<std::uint32_t>(t));
      std::vector<void*> held;
      held.reserve(64);
      ready.fetch_add(1);
      while (ready.load() < 4) {
      }
      for (int i = 0; i < 20000; ++i) {
        if (held.size() < 64 && random() % 2 == 0) {
          held.push_back(::operator new(1 + random() % 512));
        } else if (!held.empty()) {
          ::operator delete(held.back());
          held.pop_back();
        }
      }
      for (void* p : held) ::operator delete(p);
      held.clear();
    });
  }
  for (auto& thread : threads) thread.join();
  threads.clear();
  threads.shrink_to_fit();
  EXPECT_EQ(probe.live_bytes(), 0);
  EXPECT_EQ(probe.usable_bytes(), 0);
  EXPECT_EQ(probe.allocations(), probe.frees());
  EXPECT_GT(probe.allocations(), 4u * 5000u);
}

TEST(ResidentMemory, ReportsAPlausibleResidentSize) {
  const auto resident = leanchan::profiler::resident_bytes();
  ASSERT_TRUE(resident.has_value());
  EXPECT_GT(*resident, 100u * 1024u);
}

}  // namespace
