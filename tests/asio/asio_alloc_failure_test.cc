// SPDX-License-Identifier: MIT
// leanchan::asio when an allocation fails inside async_recv: the operation
// throws, nothing is left pending, and the handler is destroyed. Its own
// binary: it replaces the global operator new to fail on demand
// (failing_new.h).
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>

#include "asio_flavour.h"
#include "failing_new.h"
#include "gtest/gtest.h"
#include "leanchan/asio.h"
#include "leanchan/channel.h"

namespace {

using leanchan::asio::AsyncReceiver;
using leanchan::asio::error_code;

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
  leanchan::testing::fail_allocation_at =
      2;  // the operation's allocation succeeds, the slot's fails
  EXPECT_THROW(rx.async_recv(asio::bind_cancellation_slot(
                   signal.slot(), [token, &got](error_code, std::optional<int> v) { got = v; })),
               std::bad_alloc);
  leanchan::testing::fail_allocation_at = 0;
  EXPECT_EQ(token.use_count(), 1) << "the failed operation still holds its handler";
  // The object is usable: a new receive takes the next message.
  ASSERT_TRUE(tx.try_send(7).ok());
  rx.async_recv([&got](error_code, std::optional<int> v) { got = v; });
  io.run();
  EXPECT_EQ(got, 7);
}

// A receive that finds a message at once, with a plain handler, allocates
// nothing before its completion's post (docs/asio.md, "Allocation"): when
// that post's allocation fails, async_recv throws, the taken message is
// the documented loss, the handler is destroyed once, nothing is left
// pending, and the next receive takes the next message.
TEST(AsioAllocationFailure, AReadyReceiveWhosePostFailsLeavesNothingPending) {
  asio::io_context io;
  auto [tx, raw_rx] = leanchan::channel<int>(4);
  AsyncReceiver<int> rx(io.get_executor(), std::move(raw_rx));
  ASSERT_TRUE(tx.try_send(7).ok());
  ASSERT_TRUE(tx.try_send(8).ok());
  auto token = std::make_shared<int>(0);  // the handler holds a copy
  std::optional<int> got;
  leanchan::testing::fail_allocation_at = 1;  // the post's first allocation
  EXPECT_THROW(rx.async_recv([token, &got](error_code, std::optional<int> v) { got = v; }),
               std::bad_alloc);
  leanchan::testing::fail_allocation_at = 0;
  EXPECT_EQ(token.use_count(), 1) << "the failed receive still holds its handler";
  EXPECT_EQ(rx.receiver().len(), 1u) << "7 was taken (the documented loss), 8 is there";
  rx.async_recv([&got](error_code, std::optional<int> v) { got = v; });
  io.run();
  EXPECT_EQ(got, 8);
}

}  // namespace
