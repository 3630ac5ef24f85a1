// SPDX-License-Identifier: MIT
// The receiver's watch before it sleeps (leanchan/internal/wait_policy.h):
// the pauses between its looks, counted exactly with a counting pause, and
// which watch a blocking receive selects (ChannelOps::watch_depth): the
// deep one only in a channel whose senders can run 64 messages or more
// ahead of the receiver, the long one from 512, after a run of two
// messages or more.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/channel_ops.h"
#include "leanchan/internal/ending.h"
#include "leanchan/internal/wait_policy.h"

namespace {

using leanchan::internal::kWaitPolicy;
using leanchan::internal::SpinBudget;
using leanchan::internal::WaitPolicy;
using leanchan::internal::WatchDepth;

// The pauses made between consecutive looks of a watch that never finds
// what it looks for, one entry per look that is followed by pauses.
std::vector<int> pauses_between_looks(const SpinBudget& budget) {
  std::vector<int> gaps;
  int looks = 0;
  int pauses = 0;
  const bool found = leanchan::internal::watch(
      budget,
      [&] {
        if (looks++ > 0 && pauses > 0) gaps.push_back(pauses);
        pauses = 0;
        return false;
      },
      [&] { ++pauses; });
  EXPECT_FALSE(found);
  EXPECT_EQ(looks, budget.looks());
  return gaps;
}

TEST(SpinWait, TheReceiverWatchDoublesItsPausesFromOne) {
  // Each of the first 16 looks is followed by pauses (the 16th's before the
  // first look after a yield), doubling from 1 to 64.
  const std::vector<int> gaps = pauses_between_looks(kWaitPolicy.receiver_short);
  const std::vector<int> expected = {1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64};
  EXPECT_EQ(gaps, expected);
}

TEST(SpinWait, TheDeepReceiverWatchStartsAtItsLongestPause) {
  const std::vector<int> gaps = pauses_between_looks(kWaitPolicy.receiver_deep);
  EXPECT_EQ(gaps, std::vector<int>(16, 64));
  EXPECT_EQ(kWaitPolicy.receiver_deep.looks(), kWaitPolicy.receiver_short.looks());
}

TEST(SpinWait, TheLongReceiverWatchPausesAsLongInFewerLooks) {
  const std::vector<int> gaps = pauses_between_looks(kWaitPolicy.receiver_long);
  EXPECT_EQ(gaps, std::vector<int>(2, 512));
  // The same pauses before the yields as the deep watch (16 x 64), and the
  // same yields after them.
  EXPECT_EQ(kWaitPolicy.receiver_long.pauses * kWaitPolicy.receiver_long.max_pause,
            kWaitPolicy.receiver_deep.pauses * kWaitPolicy.receiver_deep.max_pause);
  EXPECT_EQ(kWaitPolicy.receiver_long.yields, kWaitPolicy.receiver_deep.yields);
}

// The first look at which the receiver's watch asks for the end: the
// first whose earlier gaps (pauses_between_looks) add up to
// kWaitPolicy.end_check_after_pauses.
int first_look_after_pausing(const SpinBudget& budget, int pauses) {
  const std::vector<int> gaps = pauses_between_looks(budget);
  int paused = 0;
  for (std::size_t look = 0; look < gaps.size(); ++look) {
    if (paused >= pauses) return static_cast<int>(look);
    paused += gaps[look];
  }
  return static_cast<int>(gaps.size());
}

TEST(SpinWait, EveryReceiverWatchAsksForTheEndAfterTheSamePauses) {
  using leanchan::internal::looks_before_pausing;
  // 1 + 2 + 4 + 8 = 15 pauses before the fifth look of the doubling
  // watch; one gap of 64 or 512 before the second look of the others.
  EXPECT_EQ(looks_before_pausing(kWaitPolicy.receiver_short, kWaitPolicy.end_check_after_pauses),
            4);
  EXPECT_EQ(looks_before_pausing(kWaitPolicy.receiver_deep, kWaitPolicy.end_check_after_pauses), 1);
  EXPECT_EQ(looks_before_pausing(kWaitPolicy.receiver_long, kWaitPolicy.end_check_after_pauses), 1);
  for (const SpinBudget* budget :
       {&kWaitPolicy.receiver_short, &kWaitPolicy.receiver_deep, &kWaitPolicy.receiver_long}) {
    EXPECT_EQ(looks_before_pausing(*budget, kWaitPolicy.end_check_after_pauses),
              first_look_after_pausing(*budget, kWaitPolicy.end_check_after_pauses));
  }
  // A watch that never pauses that long asks from its first yield.
  const SpinBudget short_one = leanchan::internal::spin_budget_of(2, 3, 4);  // 1 + 2 pauses
  EXPECT_EQ(looks_before_pausing(short_one, kWaitPolicy.end_check_after_pauses), 2);
  EXPECT_EQ(first_look_after_pausing(short_one, kWaitPolicy.end_check_after_pauses), 2);
}

TEST(SpinWait, AWatchThatFindsItLooksNoFurther) {
  int looks = 0;
  int pauses = 0;
  EXPECT_TRUE(leanchan::internal::watch(
      kWaitPolicy.receiver_deep, [&] { return ++looks == 3; }, [&] { ++pauses; }));
  EXPECT_EQ(looks, 3);
  EXPECT_EQ(pauses, 2 * 64);
}

// The receiver of a channel whose senders can run 64 messages or more
// ahead of it (the runway: C - b + 1, the receiver owing up to b - 1 of
// the C slots) may watch with the deep budget, from 512 with the long one;
// below 64, never.
template <std::size_t BlockSize>
WatchDepth depth_for(std::uint32_t capacity) {
  using Ops = leanchan::internal::ChannelOps<int, BlockSize>;
  using leanchan::internal::ChannelState;
  ChannelState* state = ChannelState::create(capacity, Ops::slots_for(capacity),
                                             leanchan::Retention::kKeepOne, nullptr);
  const WatchDepth depth = Ops::cursor_for(*state).depth;
  ChannelState::destroy(state);
  return depth;
}

// The smallest capacity with a runway of `runway` with b-slot blocks
// (b <= capacity): C - b + 1 = runway.
constexpr std::uint32_t first_with(std::uint32_t runway, std::uint32_t b) {
  return runway + b - 1;
}
constexpr std::uint32_t first_deep(std::uint32_t b) {
  return first_with(kWaitPolicy.deep_runway, b);
}
constexpr std::uint32_t first_long(std::uint32_t b) {
  return first_with(kWaitPolicy.long_runway, b);
}

TEST(SpinWait, TheRunwaySelectsTheReceiversWatch) {
  // Both sides of each boundary, for three block sizes.
  EXPECT_EQ(depth_for<8>(first_deep(8) - 1), WatchDepth::kShort);
  EXPECT_EQ(depth_for<8>(first_deep(8)), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<32>(first_deep(32) - 1), WatchDepth::kShort);
  EXPECT_EQ(depth_for<32>(first_deep(32)), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<1>(first_deep(1) - 1), WatchDepth::kShort);
  EXPECT_EQ(depth_for<1>(first_deep(1)), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<8>(first_long(8) - 1), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<8>(first_long(8)), WatchDepth::kLong);
  EXPECT_EQ(depth_for<32>(first_long(32) - 1), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<32>(first_long(32)), WatchDepth::kLong);
  EXPECT_EQ(depth_for<1>(first_long(1) - 1), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<1>(first_long(1)), WatchDepth::kLong);
  // Capacity 16, which the first rule (16 slots or more) made deep: its
  // runway is 9 with b = 8 and 1 with b = 16 (B = 32).
  static_assert(first_deep(8) > 16 && first_deep(1) > 16);
  EXPECT_EQ(depth_for<8>(16), WatchDepth::kShort);
  EXPECT_EQ(depth_for<32>(16), WatchDepth::kShort);
  EXPECT_EQ(depth_for<8>(1), WatchDepth::kShort);
  EXPECT_EQ(depth_for<32>(1024), WatchDepth::kLong);
}

// The watch after a run of messages taken by blocking receives: the
// channel's depth after two or more (a backlog: a sender streams ahead),
// doubling after one (a message that came alone, as a reply does) or none.
TEST(SpinWait, ARunOfTwoSelectsTheChannelsDepth) {
  using Ops = leanchan::internal::ChannelOps<int, 8>;
  using leanchan::internal::ChannelState;
  ChannelState* state = ChannelState::create(1024, 8, leanchan::Retention::kKeepOne, nullptr);
  Ops::Cursor cursor = Ops::cursor_for(*state);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);  // nothing taken yet
  Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);  // one: a reply
  for (int i = 0; i < 5; ++i) Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kLong);   // a backlog of five
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);  // a new run: none yet
  Ops::count_run(cursor);
  Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kLong);
  Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);  // one per watch now
  ChannelState::destroy(state);

  // A deep channel below the long runway watches deep, not long.
  state = ChannelState::create(256, 8, leanchan::Retention::kKeepOne, nullptr);
  cursor = Ops::cursor_for(*state);
  for (int i = 0; i < 5; ++i) Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kDeep);
  ChannelState::destroy(state);

  // A shallow channel never watches deep, whatever its runs.
  state = ChannelState::create(15, 8, leanchan::Retention::kKeepOne, nullptr);
  cursor = Ops::cursor_for(*state);
  for (int i = 0; i < 5; ++i) Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);
  ChannelState::destroy(state);
}

// The waiting policy is an argument: a policy other than the channel's
// changes what the receiver's watches do, and its rules read only it.
WaitPolicy policy_with(int rest_of_block_looks, std::uint32_t deep_runway) {
  WaitPolicy policy = kWaitPolicy;
  policy.rest_of_block = leanchan::internal::spin_budget_of(rest_of_block_looks);
  policy.deep_runway = deep_runway;
  return policy;
}

TEST(WaitPolicy, TheRestOfBlockWatchSpendsTheBudgetItIsGiven) {
  leanchan::internal::BlockHeader block;
  block.number.store(5);
  block.ready.store(0x07);  // slot 3 of 8 missing: every look is made
  using leanchan::internal::Ending;
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 3, 8, policy_with(3, 64)), 3);
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 3, 8, policy_with(1, 64)), 1);
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 3, 8), kWaitPolicy.rest_of_block.looks());
}

TEST(WaitPolicy, ItsRunwaysPickTheReceiversWatch) {
  EXPECT_EQ(kWaitPolicy.depth_for_runway(kWaitPolicy.deep_runway - 1), WatchDepth::kShort);
  EXPECT_EQ(kWaitPolicy.depth_for_runway(kWaitPolicy.deep_runway), WatchDepth::kDeep);
  EXPECT_EQ(kWaitPolicy.depth_for_runway(kWaitPolicy.long_runway - 1), WatchDepth::kDeep);
  EXPECT_EQ(kWaitPolicy.depth_for_runway(kWaitPolicy.long_runway), WatchDepth::kLong);
  const WaitPolicy shallow = policy_with(8, 4);
  EXPECT_EQ(shallow.depth_for_runway(3), WatchDepth::kShort);
  EXPECT_EQ(shallow.depth_for_runway(4), WatchDepth::kDeep);
  EXPECT_EQ(&shallow.receiver(WatchDepth::kDeep), &shallow.receiver_deep);
  EXPECT_EQ(&shallow.receiver(WatchDepth::kLong), &shallow.receiver_long);
  EXPECT_EQ(&shallow.receiver(WatchDepth::kShort), &shallow.receiver_short);
  // The receiver's cursor takes its depth from the policy it is given: a
  // capacity of 16 in blocks of 8 is a runway of 9.
  using Ops = leanchan::internal::ChannelOps<int, 8>;
  using leanchan::internal::ChannelState;
  ChannelState* state =
      ChannelState::create(16, Ops::slots_for(16), leanchan::Retention::kKeepOne, nullptr);
  EXPECT_EQ(Ops::cursor_for(*state).depth, WatchDepth::kShort);
  EXPECT_EQ(Ops::cursor_for(*state, shallow).depth, WatchDepth::kDeep);
  ChannelState::destroy(state);
}

TEST(WaitPolicy, TheRestOfBlockWatchOnlyInShallowChannelsOfSmallMessagesOrSeveralBlocks) {
  const std::size_t small = kWaitPolicy.rest_of_block_max_message_bytes;
  EXPECT_TRUE(kWaitPolicy.allows_rest_of_block(WatchDepth::kShort, 8, 8, small));
  EXPECT_FALSE(kWaitPolicy.allows_rest_of_block(WatchDepth::kShort, 8, 8, small + 1));
  EXPECT_TRUE(kWaitPolicy.allows_rest_of_block(WatchDepth::kShort, 8, 16, small + 1));
  EXPECT_FALSE(kWaitPolicy.allows_rest_of_block(WatchDepth::kDeep, 8, 16, small));
  EXPECT_FALSE(kWaitPolicy.allows_rest_of_block(WatchDepth::kLong, 8, 16, small));
}

TEST(WaitPolicy, TheFirstWaitersBudgetFollowsTheChannelsOption) {
  using leanchan::WaiterWatch;
  EXPECT_EQ(kWaitPolicy.first_waiter_for(WaiterWatch::kNone).looks(), 0);
  EXPECT_EQ(kWaitPolicy.first_waiter_for(WaiterWatch::kDefault).looks(),
            kWaitPolicy.first_waiter.looks());
  EXPECT_EQ(kWaitPolicy.first_waiter_for(WaiterWatch::kLong).looks(),
            4 * kWaitPolicy.first_waiter.looks());
}

}  // namespace
