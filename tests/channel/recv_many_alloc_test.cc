// SPDX-License-Identifier: MIT
// recv_many when the output vector cannot grow. This binary replaces the
// global operator new (failing_new.h) so that a test can make the next
// allocation throw std::bad_alloc.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "failing_new.h"
#include "leanchan/channel.h"
#include "test_support.h"

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
          leanchan::testing::fail_allocation_at = 1;
          rx.recv_many(out, 10);
        },
        std::bad_alloc);
    leanchan::testing::fail_allocation_at = 0;
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
