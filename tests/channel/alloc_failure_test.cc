// SPDX-License-Identifier: MIT
// Allocation failure: a block that cannot be allocated fails the send that
// needed it with SendStatus::kNoMemory, hands the value back, claims
// nothing, and leaves the channel fully usable. Every send form, block
// sizes 1, 4 and 32; then producers racing injected failures.
//
// This file replaces the global nothrow operator new (the form the channel
// allocates blocks with) with one that fails on request: the Nth
// allocation of exactly `size` bytes after arming. Other allocations, and
// the throwing forms (the control block, the test's own), pass through.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "coro_support.h"
#include "leanchan/channel.h"
#include "test_support.h"

namespace {

std::atomic<std::size_t> g_fail_size{0};  // 0: nothing fails
std::atomic<std::int64_t> g_skip{0};      // matching allocations to let through first
std::atomic<std::int64_t> g_fail{0};      // then, how many to fail
std::atomic<std::int64_t> g_failed{0};    // failures injected so far
std::atomic<std::int64_t> g_every{0};     // > 0: instead, every g_every-th fails
std::atomic<std::int64_t> g_seen{0};

bool should_fail(std::size_t size) noexcept {
  if (size != g_fail_size.load(std::memory_order_relaxed)) return false;
  if (const std::int64_t every = g_every.load(); every > 0) {
    if ((g_seen.fetch_add(1) + 1) % every != 0) return false;
    g_failed.fetch_add(1);
    return true;
  }
  if (g_skip.fetch_sub(1) > 0) return false;
  if (g_fail.fetch_sub(1) <= 0) return false;
  g_failed.fetch_add(1);
  return true;
}

// Arms the failing heap for one test; disarms on scope exit.
class FailAllocations {
 public:
  // The (skip + 1)-th .. (skip + count)-th allocations of `size` bytes
  // fail; or, with `every` > 0, every `every`-th one, until disarmed.
  FailAllocations(std::size_t size, std::int64_t count, std::int64_t skip = 0,
                  std::int64_t every = 0) {
    g_failed = 0;
    g_skip = skip;
    g_fail = count;
    g_seen = 0;
    g_every = every;
    g_fail_size = size;
  }
  ~FailAllocations() {
    g_fail_size = 0;
    g_every = 0;
  }
  static std::int64_t failed() { return g_failed.load(); }
  FailAllocations(const FailAllocations&) = delete;
};

// Out of line, so that the compiler does not pair each free with the
// operator new it cannot see through.
[[gnu::noinline]] void release(void* p) noexcept {
  std::free(p);
}

}  // namespace

void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (should_fail(size)) return nullptr;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  if (should_fail(size)) return nullptr;
  const auto alignment = static_cast<std::size_t>(align);
  return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}
void* operator new(std::size_t size) {
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align) {
  const auto alignment = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)) {
    return p;
  }
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release(p);
}

namespace {

using leanchan::Notifier;
using leanchan::Retention;
using leanchan::SendStatus;
using leanchan::testing::Tracked;

constexpr std::size_t kCapacity = 64;

template <class B>
class AllocFailure : public ::testing::Test {
 protected:
  static constexpr std::size_t kB = B::value;
  // A block of kB slots: 16-byte header + kB * sizeof(Tracked).
  static constexpr std::size_t kBlockBytes = 16 + kB * sizeof(Tracked);

  void SetUp() override { Tracked::reset(); }
  void TearDown() override {
    EXPECT_EQ(Tracked::live(), 0) << "a message leaked or was destroyed twice";
  }

  // After a failed send of `value`: nothing claimed or queued, the permit
  // back, no block kept (64 bytes), and the channel still works.
  template <class Tx, class Rx>
  static void expect_unchanged_and_usable(Tx& tx, Rx& rx, std::uint64_t value) {
    EXPECT_EQ(FailAllocations::failed(), 1);
    EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
    EXPECT_EQ(rx.len(), 0u);
    EXPECT_EQ(tx.capacity(), kCapacity) << "the permit was not given back";
    EXPECT_EQ(rx.memory_usage(), 64u) << "a failed send kept a block";
    ASSERT_TRUE(tx.try_send(Tracked(value + 1)).ok());
    auto r = rx.try_recv();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().value, value + 1);
  }
};

using BlockSizes =
    ::testing::Types<std::integral_constant<std::size_t, 1>, std::integral_constant<std::size_t, 4>,
                     std::integral_constant<std::size_t, 32>>;
TYPED_TEST_SUITE(AllocFailure, BlockSizes);

TYPED_TEST(AllocFailure, EverySendFormReturnsTheValueWithKNoMemory) {
  auto tx_rx = leanchan::channel<Tracked, TestFixture::kB>(
      kCapacity, Retention::kKeepNone);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  using Tx = decltype(tx);
  const auto forever = std::chrono::system_clock::now() + std::chrono::hours(1);
  const std::function<leanchan::SendResult<Tracked>(Tx&, Tracked)> forms[] = {
      [](Tx& s, Tracked v) { return s.try_send(std::move(v)); },
      [](Tx& s, Tracked v) { return s.send(std::move(v)); },
      [](Tx& s, Tracked v) { return s.send_for(std::move(v), std::chrono::seconds(10)); },
      [&forever](Tx& s, Tracked v) { return s.send_until(std::move(v), forever); },
  };
  std::uint64_t value = 0;
  for (const auto& send : forms) {
    value += 10;
    {
      FailAllocations fail(TestFixture::kBlockBytes, 1);
      auto r = send(tx, Tracked(value));
      EXPECT_EQ(r.status(), SendStatus::kNoMemory);
      EXPECT_EQ(r.value().value, value);
    }
    TestFixture::expect_unchanged_and_usable(tx, rx, value);
  }
}

TYPED_TEST(AllocFailure, ReserveFailsWithKNoMemoryAndAGrantedPermitCannotFail) {
  auto tx_rx = leanchan::channel<Tracked, TestFixture::kB>(
      kCapacity, Retention::kKeepNone);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  {
    FailAllocations fail(TestFixture::kBlockBytes, 1);
    auto permit = tx.reserve();
    EXPECT_FALSE(permit);
    EXPECT_EQ(permit.status(), SendStatus::kNoMemory);
  }
  TestFixture::expect_unchanged_and_usable(tx, rx, 10);
  {
    FailAllocations fail(TestFixture::kBlockBytes, 1);
    auto permit = tx.try_reserve();
    EXPECT_EQ(permit.status(), SendStatus::kNoMemory);
  }
  TestFixture::expect_unchanged_and_usable(tx, rx, 20);
  // A granted permit holds its block: its send allocates nothing, so it
  // succeeds however many allocations fail afterwards.
  auto permit = tx.reserve();
  ASSERT_TRUE(permit);
  FailAllocations fail(TestFixture::kBlockBytes, 1000);
  permit.send(Tracked(30));
  EXPECT_EQ(FailAllocations::failed(), 0);
  auto r = rx.try_recv();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().value, 30u);
}

TYPED_TEST(AllocFailure, ReserveManyFailsWholeWhenItsSecondBlockCannotBeAllocated) {
  auto tx_rx = leanchan::channel<Tracked, TestFixture::kB>(
      kCapacity, Retention::kKeepNone);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  const std::size_t count = TestFixture::kB + 1;  // two blocks
  {
    FailAllocations fail(TestFixture::kBlockBytes, 1, /*skip=*/1);  // the second block fails
    auto batch = tx.reserve_many(count);
    EXPECT_EQ(batch.status(), SendStatus::kNoMemory);
    EXPECT_EQ(FailAllocations::failed(), 1);
  }
  EXPECT_EQ(tx.capacity(), kCapacity);
  // Refused whole: the first block, which was allocated, is not kept
  // (the extension allocates every block before numbering any).
  EXPECT_EQ(rx.memory_usage(), 64u);
  {
    FailAllocations fail(TestFixture::kBlockBytes, 1);
    auto batch = tx.try_reserve_many(count);
    EXPECT_EQ(batch.status(), SendStatus::kNoMemory);
  }
  EXPECT_EQ(tx.capacity(), kCapacity);
  auto batch = tx.reserve_many(count);
  ASSERT_EQ(batch.status(), SendStatus::kOk);
  for (std::size_t i = 0; i < count; ++i) batch.send(Tracked(i));
  for (std::size_t i = 0; i < count; ++i) {
    auto r = rx.try_recv();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().value, i);
  }
}

TYPED_TEST(AllocFailure, ANotifiersSlotFailsWithKNoMemoryAndGoesBack) {
  // Capacity 1: the notifier is handed the slot the receive frees.
  auto tx_rx = leanchan::channel<Tracked, TestFixture::kB>(
      1, Retention::kKeepNone);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  static std::atomic<int> fired{0};
  fired = 0;
  Notifier notifier([](void*) { fired.fetch_add(1); }, nullptr);
  ASSERT_TRUE(tx.try_send(Tracked(1)).ok());
  ASSERT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kArmed);
  ASSERT_TRUE(rx.try_recv().ok());  // keep-none: the block goes; the slot goes to the notifier
  ASSERT_EQ(fired.load(), 1);
  EXPECT_EQ(rx.memory_usage(), 64u);
  const std::size_t block_bytes = 16 + sizeof(Tracked);  // capacity 1: one-slot blocks
  {
    FailAllocations fail(block_bytes, 1);
    auto r = tx.try_send(Tracked(2), notifier);
    EXPECT_EQ(r.status(), SendStatus::kNoMemory);
    EXPECT_EQ(r.value().value, 2u);
  }
  EXPECT_EQ(tx.capacity(), 1u) << "the notifier's slot was not given back";
  EXPECT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kRoom)
      << "a slot is free: nothing to wait for";
  {
    FailAllocations fail(block_bytes, 1);
    auto permit = tx.try_reserve(notifier);
    EXPECT_EQ(permit.status(), SendStatus::kNoMemory);
  }
  EXPECT_EQ(tx.capacity(), 1u);
  ASSERT_TRUE(tx.try_send(Tracked(3), notifier).ok());
  EXPECT_EQ(rx.try_recv().value().value, 3u);
}

TYPED_TEST(AllocFailure, AsyncSendCompletesWithKNoMemory) {
  auto tx_rx = leanchan::channel<Tracked, TestFixture::kB>(
      kCapacity, Retention::kKeepNone);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  leanchan::ManualExecutor executor;
  std::optional<leanchan::SendResult<Tracked>> result;
  auto task = [](auto& sender, leanchan::Executor& ex,
                 std::optional<leanchan::SendResult<Tracked>>& out) -> leanchan::testing::Task {
    out.emplace(co_await sender.async_send(Tracked(9), ex));
  }(tx, executor, result);
  {
    FailAllocations fail(TestFixture::kBlockBytes, 1);
    task.handle.resume();
  }
  ASSERT_TRUE(task.done());
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status(), SendStatus::kNoMemory);
  EXPECT_EQ(result->value().value, 9u);
  result.reset();
  TestFixture::expect_unchanged_and_usable(tx, rx, 9);
}

TYPED_TEST(AllocFailure, KeepNoneBurstFailsOnlyTheSendsThatNeedTheFailedBlock) {
  // Keep-none: the drained channel holds nothing, so a burst allocates a
  // block per kB messages. The second block fails once: exactly the send
  // that needed it fails; the next send allocates it.
  auto tx_rx = leanchan::channel<Tracked, TestFixture::kB>(
      kCapacity, Retention::kKeepNone);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  const std::uint64_t n = 2 * TestFixture::kB + 1;
  std::vector<std::uint64_t> failed;
  {
    FailAllocations fail(TestFixture::kBlockBytes, 1, /*skip=*/1);
    for (std::uint64_t i = 0; i < n; ++i) {
      auto r = tx.try_send(Tracked(i));
      if (!r.ok()) {
        EXPECT_EQ(r.status(), SendStatus::kNoMemory);
        EXPECT_EQ(r.value().value, i);
        failed.push_back(i);
      }
    }
  }
  ASSERT_EQ(failed, std::vector<std::uint64_t>{TestFixture::kB});
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i == TestFixture::kB) continue;
    auto r = rx.try_recv();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().value, i);
  }
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_EQ(rx.memory_usage(), 64u);
}

// Producers send while every 5th block allocation fails; a send that fails
// is retried with the value it got back. Every message arrives exactly once
// and in each producer's order, and nothing leaks.
TYPED_TEST(AllocFailure, ProducersRetryingInjectedFailuresDeliverEveryMessageOnceInOrder) {
  constexpr int kProducers = 3;
  const std::uint64_t per_producer =
      static_cast<std::uint64_t>(10000 * leanchan::testing::stress_scale());
  auto tx_rx = leanchan::channel<Tracked, TestFixture::kB>(
      16, Retention::kKeepNone);  // not bound: Clang 14 cannot capture a binding
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  const std::size_t block_bytes = 16 + std::min<std::size_t>(TestFixture::kB, 16) * sizeof(Tracked);
  std::atomic<std::int64_t> failures{0};
  const FailAllocations fail(block_bytes, 0, 0, /*every=*/5);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      auto sender = tx;
      for (std::uint64_t i = 0; i < per_producer; ++i) {
        std::optional<Tracked> value;
        value.emplace(static_cast<std::uint64_t>(p) << 32 | i);
        for (;;) {
          auto r =
              (i % 2 == 0) ? sender.send(std::move(*value)) : sender.try_send(std::move(*value));
          if (r.ok()) break;
          ASSERT_TRUE(r.status() == SendStatus::kNoMemory || r.status() == SendStatus::kFull);
          if (r.status() == SendStatus::kNoMemory) failures.fetch_add(1);
          value.emplace(std::move(r).value());
        }
      }
    });
  }
  std::vector<std::uint64_t> next(kProducers, 0);
  for (std::uint64_t received = 0; received < kProducers * per_producer; ++received) {
    auto r = rx.recv();
    ASSERT_TRUE(r.has_value());
    const int p = static_cast<int>(r->value >> 32);
    ASSERT_EQ(r->value & 0xFFFFFFFFu, next[p]++) << "producer " << p << " out of order";
  }
  for (auto& t : producers) t.join();
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  EXPECT_GT(failures.load(), 0) << "no failure was injected: the test tested nothing";
}

}  // namespace
