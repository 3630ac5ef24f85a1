// SPDX-License-Identifier: MIT
// How often a send takes two steps (a permit, then a claim) instead of the
// one-CAS send (ChannelOps::try_push_fast). With no permit still to claim
// (the permit word's bit 3 clear) the one-CAS send checks only its own
// block, so a queue that deepens takes every send in one CAS; a block it
// finds unnumbered it numbers first, without a permit. While a
// reservation is out the bound is loose (the claim's slot plus the slots
// in use must stay within the claim's block) until a settlement that
// knows the returned position finds nothing still to claim. Counted with
// the test-points build's kClaimedWithAPermit point, on one thread, so
// the counts are exact.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"

namespace {

using leanchan::internal::TestPoint;

std::atomic<long> two_step{0};

void count(TestPoint point) {
  if (point == TestPoint::kClaimedWithAPermit) two_step.fetch_add(1, std::memory_order_relaxed);
}

struct Counting {
  Counting() {
    two_step = 0;
    leanchan::internal::test_point_hook.store(&count);
  }
  ~Counting() { leanchan::internal::test_point_hook.store(nullptr); }
};

// Fills a channel of `capacity` from empty with `send`, then drains it in
// order; returns the sends that took two steps.
template <std::size_t B, class Send>
long two_step_sends_filling(std::size_t capacity, Send send) {
  auto [tx, rx] = leanchan::channel<int, B>(capacity);
  long counted = 0;
  {
    Counting counting;
    for (std::size_t i = 0; i < capacity; ++i) EXPECT_TRUE(send(tx, static_cast<int>(i)));
    counted = two_step.load();
  }
  for (std::size_t i = 0; i < capacity; ++i) EXPECT_EQ(rx.try_recv().value(), static_cast<int>(i));
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
  return counted;
}

// Before the bit, a send checked the claim position plus the slots in use
// against its block, so a queue deeper than half a block took two steps
// at nearly every send: 1,021 of these 1,024 at b = 8 (1,009 at b = 32),
// 18 of 20 at b = 5, all 64 at b = 1.
TEST(FastSend, AQueueThatDeepensSendsInOneCas) {
  const auto try_send = [](auto& tx, int v) { return tx.try_send(int{v}).ok(); };
  const auto send = [](auto& tx, int v) { return tx.send(int{v}).ok(); };
  EXPECT_EQ(two_step_sends_filling<8>(1024, try_send), 0);
  EXPECT_EQ(two_step_sends_filling<32>(1024, try_send), 0);
  EXPECT_EQ(two_step_sends_filling<5>(20, try_send), 0);
  EXPECT_EQ(two_step_sends_filling<8>(1024, send), 0);
  EXPECT_EQ(two_step_sends_filling<1>(64, send), 0);
}

// One send and one receive at a time (a ping-pong's pattern): every send
// in one CAS. With the loose bound alone the receiver's takes, not given
// back until the block's end, counted against the send, so only the first
// half of each block passed: 1,601 of 3,200 sends took two steps at b = 8
// and b = 32, and at capacity 1 the first send (it found no block).
template <std::size_t B>
long two_step_sends_in_lockstep(std::size_t capacity, int messages) {
  auto [tx, rx] = leanchan::channel<int, B>(capacity);
  Counting counting;
  for (int i = 0; i < messages; ++i) {
    EXPECT_TRUE(tx.try_send(int{i}).ok());
    EXPECT_EQ(rx.try_recv().value(), i);
  }
  return two_step.load();
}

TEST(FastSend, LockstepSendsInOneCas) {
  EXPECT_EQ(two_step_sends_in_lockstep<1>(1, 3200), 0);
  EXPECT_EQ(two_step_sends_in_lockstep<8>(1, 3200), 0);
  EXPECT_EQ(two_step_sends_in_lockstep<8>(16, 3200), 0);
  EXPECT_EQ(two_step_sends_in_lockstep<32>(1024, 3200), 0);
}

// A held reservation sets bit 3: sends check the loose bound (slot s
// passes while s + (1 + s) < 8 with s messages queued before it, so slots
// 0..3 of block 0 do and 4..6 take two steps), and the reservation's own
// send claims with its permit. The receiver's finish of block 0 knows
// the returned position (8), finds nothing still to claim and clears the
// bit: the next 56 sends take one CAS each.
TEST(FastSend, AHeldReservationLoosensTheBoundUntilASettlementClearsIt) {
  auto [tx, rx] = leanchan::channel<int, 8>(64);
  Counting counting;
  auto permit = tx.try_reserve();
  ASSERT_TRUE(static_cast<bool>(permit));
  for (int i = 0; i < 7; ++i) EXPECT_TRUE(tx.try_send(int{i}).ok());
  EXPECT_EQ(two_step.load(), 3);
  permit.send(7);
  EXPECT_EQ(two_step.load(), 4);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(rx.try_recv().value(), i);
  two_step = 0;
  for (int i = 8; i < 64; ++i) EXPECT_TRUE(tx.try_send(int{i}).ok());
  EXPECT_EQ(two_step.load(), 0);
  for (int i = 8; i < 64; ++i) EXPECT_EQ(rx.try_recv().value(), i);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kEmpty);
}

// A reservation dropped unused leaves bit 3 set (the lock-free give-back
// does not know the returned position) until the receiver's next
// settlement: here the release of the list it finds drained at a block's
// end (kKeepNone), which clears it.
TEST(FastSend, ADroppedReservationLeavesTheBoundLooseUntilTheNextSettlement) {
  auto [tx, rx] = leanchan::channel<int, 4>(16, leanchan::Retention::kKeepNone);
  Counting counting;
  { auto permit = tx.try_reserve(); }
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(tx.try_send(int{i}).ok());
  // Slot s passes while s + s < 4 (nothing else in use): slots 0 and 1.
  EXPECT_EQ(two_step.load(), 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rx.try_recv().value(), i);
  EXPECT_EQ(rx.memory_usage(), 64u);
  two_step = 0;
  for (int i = 4; i < 16; ++i) EXPECT_TRUE(tx.try_send(int{i}).ok());
  EXPECT_EQ(two_step.load(), 0);
  for (int i = 4; i < 16; ++i) EXPECT_EQ(rx.try_recv().value(), i);
}

}  // namespace
