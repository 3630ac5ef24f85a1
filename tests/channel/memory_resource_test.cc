// SPDX-License-Identifier: MIT
// Channels whose memory comes from a std::pmr::memory_resource: the control
// block (64 + 8 bytes) and every block go through it, nothing through the
// global operator new, and everything comes back.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory_resource>
#include <new>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/profiler/heap_probe.h"
#include "test_support.h"

namespace {

using leanchan::ChannelOptions;
using leanchan::Retention;
using leanchan::profiler::HeapProbe;

struct Message {
  std::array<unsigned char, 24> bytes{};
};
constexpr std::int64_t kControl = 72;         // 64 + the resource pointer
constexpr std::int64_t kBlock = 16 + 8 * 24;  // 8 slots of 24 bytes

// Thread-safe counting resource over `upstream` (default: new/delete); can
// be told to fail.
class CountingResource : public std::pmr::memory_resource {
 public:
  explicit CountingResource(std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
      : upstream_(upstream) {}
  std::int64_t live() const { return live_.load(); }
  std::int64_t allocations() const { return allocations_.load(); }
  void fail_from_now() { fail_ = true; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (fail_) throw std::bad_alloc();
    live_ += static_cast<std::int64_t>(bytes);
    ++allocations_;
    return upstream_->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    live_ -= static_cast<std::int64_t>(bytes);
    upstream_->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  std::pmr::memory_resource* upstream_;
  std::atomic<std::int64_t> live_{0};
  std::atomic<std::int64_t> allocations_{0};
  std::atomic<bool> fail_{false};
};

TEST(MemoryResource, EveryByteComesFromTheResourceAndGoesBack) {
  // The resource draws from a buffer on the stack, so the global operator
  // new must see nothing at all.
  alignas(std::max_align_t) static unsigned char buffer[16384];
  std::pmr::monotonic_buffer_resource arena(buffer, sizeof(buffer),
                                            std::pmr::null_memory_resource());
  CountingResource resource(&arena);
  HeapProbe global;
  {
    auto tx_rx = leanchan::channel<Message, 8>(16, ChannelOptions{.memory = &resource});
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    EXPECT_EQ(resource.live(), kControl);
    EXPECT_EQ(rx.memory_usage(), static_cast<std::size_t>(kControl));
    for (int i = 0; i < 16; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());
    EXPECT_EQ(resource.live(), kControl + 2 * kBlock);
    EXPECT_EQ(rx.memory_usage(), static_cast<std::size_t>(resource.live()));
    for (int i = 0; i < 16; ++i) ASSERT_TRUE(rx.try_recv().ok());
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);  // the spare goes
    EXPECT_EQ(resource.live(), kControl + kBlock);                    // kKeepOne: one block stays
    EXPECT_EQ(rx.shrink_to_fit(), static_cast<std::size_t>(kBlock));
    EXPECT_EQ(resource.live(), kControl);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(tx.try_send(Message{}).ok());  // left queued
  }
  EXPECT_EQ(resource.live(), 0);
  EXPECT_EQ(global.allocations(), 0u);  // nothing from the global operator new
}

TEST(MemoryResource, KeepNoneDrainsToTheControlBlock) {
  CountingResource resource;
  auto tx_rx = leanchan::channel<Message, 8>(
      16, ChannelOptions{.retention = Retention::kKeepNone, .memory = &resource});
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(tx_rx.first.try_send(Message{}).ok());
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(tx_rx.second.try_recv().ok());
  EXPECT_EQ(resource.live(), kControl);
}

TEST(MemoryResource, AFailingResourceFailsCreationCleanly) {
  CountingResource resource;
  resource.fail_from_now();
  EXPECT_THROW((void)leanchan::channel<Message>(16, ChannelOptions{.memory = &resource}),
               std::bad_alloc);
  EXPECT_EQ(resource.live(), 0);
}

TEST(MemoryResource, SynchronizedPoolUnderConcurrentProducers) {
  // A pool shared by several channels and threads; released at the end.
  std::pmr::synchronized_pool_resource pool;
  leanchan::testing::Tracked::reset();
  constexpr int kChannels = 4;
  const auto per_channel =
      static_cast<std::uint64_t>(std::max(1.0, 20000.0 * leanchan::testing::stress_scale()));
  std::vector<std::thread> threads;
  std::vector<std::uint64_t> received(kChannels, 0);
  for (int c = 0; c < kChannels; ++c) {
    threads.emplace_back([&pool, &received, c, per_channel] {
      auto tx_rx = leanchan::channel<leanchan::testing::Tracked, 4>(
          3, ChannelOptions{.retention = c % 2 == 0 ? Retention::kKeepNone : Retention::kKeepOne,
                            .memory = &pool});
      std::thread producer([tx = std::move(tx_rx.first), per_channel]() mutable {
        for (std::uint64_t i = 0; i < per_channel; ++i) {
          ASSERT_TRUE(tx.send(leanchan::testing::Tracked(i)).ok());
        }
      });
      std::uint64_t next = 0;
      while (auto message = tx_rx.second.recv()) {
        ASSERT_EQ(message->value, next);
        ++next;
      }
      producer.join();
      received[static_cast<std::size_t>(c)] = next;
    });
  }
  for (auto& t : threads) t.join();
  for (auto n : received) EXPECT_EQ(n, per_channel);
  EXPECT_EQ(leanchan::testing::Tracked::live(), 0);
  pool.release();
}

}  // namespace
