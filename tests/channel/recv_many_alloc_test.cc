// SPDX-License-Identifier: MIT
// recv_many when the output vector cannot grow. This binary replaces the
// global operator new (the plain and array forms; the nothrow forms and the
// deletes only so that every pair matches) so that a test can make the next
// allocation throw std::bad_alloc. Kept in its own binary: the replacement
// applies to the whole program.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "leanchan/channel.h"
#include "test_support.h"

namespace {
// Set by a test: the next plain allocation on this thread throws (and clears it).
thread_local bool fail_next_allocation = false;

void* allocate(std::size_t size) {
  if (fail_next_allocation) {
    fail_next_allocation = false;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace {

using leanchan::testing::Tracked;

// Contract: if `out` throws while growing, recv_many propagates the
// exception and loses nothing: the message it was appending stays in the
// channel, and every message is still received, in order, exactly once.
TEST(RecvMany, KeepsTheMessageWhenTheOutputCannotGrow) {
  Tracked::reset();
  {
    auto [tx, rx] = leanchan::channel<Tracked>(8);
    for (std::uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(tx.try_send(Tracked(i)).ok());
    std::vector<Tracked> out;  // capacity 0: the first append allocates
    EXPECT_THROW(
        {
          fail_next_allocation = true;
          rx.recv_many(out, 10);
        },
        std::bad_alloc);
    fail_next_allocation = false;
    EXPECT_TRUE(out.empty());

    for (std::uint64_t i = 0; i < 3; ++i) {
      auto r = rx.try_recv();
      ASSERT_TRUE(r.ok()) << "receive " << i << ": " << leanchan::to_string(r.status())
                          << " (a message was lost)";
      EXPECT_EQ(r.value().value, i) << "message " << i << " is missing or out of order";
    }
    EXPECT_EQ(leanchan::to_string(rx.try_recv().status()), "empty");
  }
  EXPECT_EQ(Tracked::live(), 0) << "every instance destroyed exactly once";
}

}  // namespace
