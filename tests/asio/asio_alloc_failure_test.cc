// SPDX-License-Identifier: MIT
// leanchan::asio when an allocation fails inside async_recv: the operation
// throws, nothing is left pending, and the handler is destroyed. Its own
// binary: it replaces the global operator new to fail on demand.
#include <asio.hpp>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>

#include "gtest/gtest.h"
#include "leanchan/asio.h"
#include "leanchan/channel.h"

namespace {
// The allocation, counted from 1, that fails; 0: none.
thread_local int g_fail_at = 0;
}  // namespace

namespace {
void* allocate(std::size_t size) {
  if (g_fail_at > 0 && --g_fail_at == 0) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void release(void* p) noexcept {
  std::free(p);
}
}  // namespace

// The whole unaligned set, plain and nothrow, so that every such block is
// malloc's and freed by free (AddressSanitizer checks the pairs).
void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept {
  release(p);
}
void operator delete[](void* p) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  release(p);
}

namespace {

using leanchan::asio::AsyncReceiver;

// async_recv allocates its operation, then connects the handler's
// cancellation slot, which allocates the slot's handler. When that second
// allocation fails, async_recv throws and the operation must not stay
// pending: before, it did, holding the handler (never called, destroyed
// only with the object) and blocking every later async_recv.
TEST(AsioAllocationFailure, ASlotThatCannotConnectLeavesNothingPending) {
  asio::io_context io;
  auto [tx, raw_rx] = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(raw_rx));
  asio::cancellation_signal signal;
  auto token = std::make_shared<int>(0);  // the handler holds a copy
  std::optional<int> got;
  g_fail_at = 2;  // the operation's allocation succeeds, the slot's fails
  EXPECT_THROW(rx.async_recv(asio::bind_cancellation_slot(
                   signal.slot(), [token, &got](asio::error_code, std::optional<int> v) {
                     got = v;
                   })),
               std::bad_alloc);
  g_fail_at = 0;
  EXPECT_EQ(token.use_count(), 1) << "the failed operation still holds its handler";
  // The object is usable: a new receive takes the next message.
  ASSERT_TRUE(tx.try_send(7).ok());
  rx.async_recv([&got](asio::error_code, std::optional<int> v) { got = v; });
  io.run();
  EXPECT_EQ(got, 7);
}

}  // namespace
